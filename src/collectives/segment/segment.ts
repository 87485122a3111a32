/**
 * A group's collective segment on one host (Open MPI's coll/sm, UCC's shared-memory team layer):
 * shared memory that the group's members on the host map, with a control line per member (its
 * sequence counters, its call's signature, its sleeping word, where to ring it) and per member a
 * data slot of two chunks, so that a member writes its next chunk while slower readers finish
 * the one before. The host's lowest rank of the group makes it on the group's first call through
 * it and tells the others its name by a message of that call; they map it and count themselves
 * in, and the creator unlinks its name once all have (or when its process exits; a killed
 * process's segment is removed by removeStaleSegments: its name is of the `ccjs-<pid>-…` family).
 * Each member keeps its mapping per group (groups are immutable); the memory goes when the last
 * mapping is collected.
 *
 *   header:  Int32 0 magic  1 members  2 mapped count; per call parity h (at 4 + 4h): the last
 *            call of that parity that failed, the rank it failed at, its notice's format and
 *            length; the notices (engine/abort.ts) at bytes 64 + h × NOTICE_BYTES
 *   lines:   64 bytes per member (LINE)
 *   data:    per member two chunks of CHUNK_BYTES: a 64-byte header (Float64 0: the length of the
 *            stream being written), then the chunk's bytes
 *
 * Positions (PUBLISHED, CONSUMED) name a point of a call: its sequence number (modulo 2^11), the
 * round of the call (a chunk's turn) and a step within the round, in 31 bits, compared modulo
 * the sequence's wrap: members are never more than one call apart (Member.begin waits for that).
 */
import { CCJError, PeerLostError, TransportError } from '../../base/errors.js';
import { abortError, abortFrame, abortNotice } from '../../engine/abort.js';
import { SharedMemoryWait } from '../../engine/calls.js';
import { signatureMismatch } from '../../engine/messages.js';
import { progressEngine } from '../../engine/progress.js';
import type { Signature } from '../../engine/signature.js';
import type { ShmNative } from '../../../transport/shm/native.js';
import { shmNative } from '../../../transport/shm/native.js';
import { segmentName } from '../../../transport/shm/segments.js';
import { segmentRefusal } from './sharing.js';
import type { CollectiveContext, SharedCall } from '../context.js';
import { AWAKE, SLEEPING, threadWaker } from './waking.js';
import type { WakeAddress } from './waking.js';

/** A chunk of a member's slot, with its header. */
export const CHUNK_BYTES = 128 * 1024;
const CHUNK_HEADER = 64;
/** The bytes of data a chunk holds (a multiple of 8: typed arrays of any type are cut at whole elements). */
export const CHUNK_CAPACITY = CHUNK_BYTES - CHUNK_HEADER;

const MAGIC = 0x63636a63;
const HEADER = { magic: 0, members: 1, mapped: 2, failed: 4 } as const;
/** A failed call's words, after HEADER.failed + 4 × its parity. */
const FAILED = { sequence: 0, rank: 1, format: 2, length: 3 } as const;
const NOTICE_OFFSET = 64;
const NOTICE_BYTES = 4096;
const LINES_OFFSET = NOTICE_OFFSET + 2 * NOTICE_BYTES;
const LINE_BYTES = 64;
/** A member's control line, in Int32 words: written by its member only (but the sleeping word, which wakers swap). */
const LINE = { arrived: 0, signature: 1, published: 7, consumed: 8, sleeping: 9, pid: 10, token: 11, thread: 12 } as const;
const PAGE = 4096;

const SEQUENCE_MASK = 0x7ff;
const ROUND_MASK = 0xffff;
/** The last step of a round, and of a call (with the last round): "done with all of it". */
export const LAST_STEP = 0xf;
const END_ROUND = ROUND_MASK;

/** The position of step `step` of round `round` of call `sequence`. */
export function position(sequence: number, round: number, step: number): number {
  return ((sequence & SEQUENCE_MASK) << 20) | ((round & ROUND_MASK) << 4) | step;
}

/** True when position `a` is at or after `b`. */
function atLeast(a: number, b: number): boolean {
  const calls = ((a >>> 20) - (b >>> 20)) & SEQUENCE_MASK;
  return calls !== 0 ? calls < SEQUENCE_MASK / 2 : (a & 0xfffff) >= (b & 0xfffff);
}

function align(bytes: number, to: number): number {
  return Math.ceil(bytes / to) * to;
}

function dataOffset(members: number): number {
  return align(LINES_OFFSET + members * LINE_BYTES, PAGE);
}

function segmentBytes(members: number): number {
  return dataOffset(members) + members * 2 * CHUNK_BYTES;
}

/** One member's mapping of a collective segment, and its place in the calls that run through it. */
export class CollectiveSegment {
  private readonly words: Int32Array;
  readonly bytes: Uint8Array;
  private readonly lengths: Float64Array;
  /** Members of this thread (woken by looking again, and never spun for). */
  private readonly local: boolean[] = [];
  private readonly addresses: (WakeAddress | undefined)[] = [];
  /** No other member lives in this thread: waiting may spin (another one here could not move while it does). */
  private alone: boolean | undefined;
  /** Calls made through it, this one included. */
  sequence = 0;
  /** Every member has mapped it (its first call got that far): it serves this group's calls from now on. */
  confirmed: boolean;
  /** Drops this member's mapping from the group's (segmentOf), so that the next call sets one up. */
  forget: () => void = () => undefined;
  /** The call and position of the last chunk written into each half of this member's slot. */
  private readonly lastWritten = [
    { sequence: 0, at: 0 },
    { sequence: 0, at: 0 },
  ];
  private unlinked: boolean;
  private readonly unlinkAtExit = () => this.unlink();

  constructor(
    /** Absent for a segment of one member, which is memory of its own (nobody waits or wakes). */
    private readonly native: ShmNative | undefined,
    readonly name: string,
    readonly buffer: SharedArrayBuffer,
    readonly members: number,
    /** This member's index (its rank in the contexts it serves). */
    readonly index: number,
    creator: boolean,
  ) {
    this.words = new Int32Array(buffer);
    this.bytes = new Uint8Array(buffer);
    this.lengths = new Float64Array(buffer);
    this.unlinked = !creator;
    this.confirmed = members === 1;
    if (creator) process.once('exit', this.unlinkAtExit);
    if (native === undefined) return;
    const address = threadWaker.addressOf(native);
    const line = this.line(index);
    this.words[line + LINE.pid] = address.pid;
    this.words[line + LINE.token] = address.token;
    this.words[line + LINE.thread] = address.thread;
  }

  /** The segment of a group of one. */
  static alone(): CollectiveSegment {
    const buffer = new SharedArrayBuffer(segmentBytes(1));
    CollectiveSegment.rest(new Int32Array(buffer), 1);
    return new CollectiveSegment(undefined, '', buffer, 1, 0, false);
  }

  /** Puts every member's line at rest: everything of "call 0" published and consumed. */
  private static rest(words: Int32Array, members: number): void {
    words[HEADER.members] = members;
    for (let member = 0; member < members; member += 1) {
      const line = (LINES_OFFSET + member * LINE_BYTES) / 4;
      words[line + LINE.published] = position(0, END_ROUND, LAST_STEP);
      words[line + LINE.consumed] = position(0, END_ROUND, LAST_STEP);
    }
  }

  /** Makes the segment of `members` members (this one at index 0), every line at rest. */
  static create(native: ShmNative, members: number, rank: number): CollectiveSegment {
    const name = segmentName(rank);
    const buffer = native.open(name, segmentBytes(members), true);
    const words = new Int32Array(buffer);
    CollectiveSegment.rest(words, members);
    Atomics.store(words, HEADER.magic, MAGIC);
    return new CollectiveSegment(native, name, buffer, members, 0, true);
  }

  /** Maps segment `name` made for `members` members, as member `index`, and counts it in. */
  static map(native: ShmNative, name: string, members: number, index: number): CollectiveSegment {
    const buffer = native.open(name, 0, false);
    const words = new Int32Array(buffer);
    if (Atomics.load(words, HEADER.magic) !== MAGIC || words[HEADER.members] !== members) {
      throw new TransportError(`collective segment ${name} is not one of ${members} members: the members disagree on the group`);
    }
    const segment = new CollectiveSegment(native, name, buffer, members, index, false);
    Atomics.add(words, HEADER.mapped, 1);
    return segment;
  }

  private line(member: number): number {
    return (LINES_OFFSET + member * LINE_BYTES) / 4;
  }

  /** Where member `member`'s chunk for round `round` of call `sequence` lies (its data, after the chunk header). */
  chunkOffset(member: number, sequence: number, round: number): number {
    return dataOffset(this.members) + (member * 2 + ((sequence + round) & 1)) * CHUNK_BYTES + CHUNK_HEADER;
  }

  /** The length of the stream whose chunk lies at `offset` (its writer put it in the chunk's header). */
  streamLength(offset: number): number {
    return this.lengths[(offset - CHUNK_HEADER) / 8] as number;
  }

  setStreamLength(offset: number, length: number): void {
    this.lengths[(offset - CHUNK_HEADER) / 8] = length;
  }

  /** True once call `sequence` failed at some member (members are never two calls apart, so its parity's words tell). */
  failed(sequence: number): boolean {
    return Atomics.load(this.words, HEADER.failed + (sequence & 1) * 4 + FAILED.sequence) === sequence;
  }

  /** The error this member's part of `call` (call `sequence`) fails with, as the member where it failed first recorded it. */
  failure(call: SharedCall, sequence: number): Error {
    const at = HEADER.failed + (sequence & 1) * 4;
    const offset = NOTICE_OFFSET + (sequence & 1) * NOTICE_BYTES;
    const notice = { format: this.words[at + FAILED.format] as number, bytes: this.bytes.slice(offset, offset + (this.words[at + FAILED.length] as number)) };
    return abortError(abortFrame(notice, call.route.context, this.words[at + FAILED.rank] as number, call.groupRank, call.tag, call.signature));
  }

  /**
   * Call `sequence` failed here with `error` (at group rank `rank`): records why, once, for every
   * member waiting in it, then says this member is done with the call (arrived, everything
   * published and read), so that nobody waits for it, and wakes every member. Those that read
   * what it published find the call failed first; the next call runs as if nothing happened.
   */
  abandon(sequence: number, error: Error, rank: number): void {
    const at = HEADER.failed + (sequence & 1) * 4;
    if (Atomics.load(this.words, at + FAILED.sequence) !== sequence) {
      const notice = abortNotice(error, rank);
      const length = Math.min(notice.bytes.byteLength, NOTICE_BYTES);
      this.bytes.set(notice.bytes.subarray(0, length), NOTICE_OFFSET + (sequence & 1) * NOTICE_BYTES);
      this.words[at + FAILED.rank] = rank;
      this.words[at + FAILED.format] = notice.format;
      this.words[at + FAILED.length] = length;
      Atomics.store(this.words, at + FAILED.sequence, sequence);
    }
    const line = this.line(this.index);
    if (((Atomics.load(this.words, line + LINE.arrived) - sequence) | 0) < 0) Atomics.store(this.words, line + LINE.arrived, sequence);
    Atomics.store(this.words, line + LINE.published, position(sequence, END_ROUND, LAST_STEP));
    Atomics.store(this.words, line + LINE.consumed, position(sequence, END_ROUND, LAST_STEP));
    this.wakeAll(true);
  }

  /** How many members other than the creator have mapped it. */
  get mapped(): number {
    return Atomics.load(this.words, HEADER.mapped);
  }

  /** Removes its name from /dev/shm (the creator's part, once every member has mapped it). */
  unlink(): void {
    process.off('exit', this.unlinkAtExit);
    if (this.unlinked) return;
    this.unlinked = true;
    this.native?.unlink(this.name);
  }

  // ---- the words ----

  arrived(member: number): number {
    return Atomics.load(this.words, this.line(member) + LINE.arrived);
  }

  published(member: number): number {
    return Atomics.load(this.words, this.line(member) + LINE.published);
  }

  consumed(member: number): number {
    return Atomics.load(this.words, this.line(member) + LINE.consumed);
  }

  signatureOf(member: number, sequence: number): Signature {
    const at = this.line(member) + LINE.signature + (sequence & 1) * 3;
    // The words hold unsigned numbers (NO_ROOT, a reduction's hash).
    return { operation: (this.words[at] as number) >>> 0, root: (this.words[at + 1] as number) >>> 0, reduction: (this.words[at + 2] as number) >>> 0 };
  }

  /** Enters call `sequence` with `signature`: others may check it from now on. Nothing of the call is published yet (steps start at 1). */
  arrive(sequence: number, signature: Signature): void {
    const at = this.line(this.index) + LINE.signature + (sequence & 1) * 3;
    this.words[at] = signature.operation;
    this.words[at + 1] = signature.root;
    this.words[at + 2] = signature.reduction;
    Atomics.store(this.words, this.line(this.index) + LINE.published, position(sequence, 0, 0));
    Atomics.store(this.words, this.line(this.index) + LINE.arrived, sequence);
    this.wakeAll();
  }

  publish(at: number): void {
    Atomics.store(this.words, this.line(this.index) + LINE.published, at);
    this.wakeAll();
  }

  consume(at: number): void {
    Atomics.store(this.words, this.line(this.index) + LINE.consumed, at);
    this.wakeAll();
  }

  /**
   * The position a write into the half of round `round` must wait for (every member done with what
   * was last written there), or undefined when none: what calls before the last wrote is read
   * (SegmentCall.begin waited for that). Records `at` as written there.
   */
  claimHalf(sequence: number, round: number, at: number): number | undefined {
    const last = this.lastWritten[(sequence + round) & 1] as { sequence: number; at: number };
    const previous = sequence - last.sequence <= 1 ? last.at : undefined;
    last.sequence = sequence;
    last.at = at;
    return previous;
  }

  // ---- waiting ----

  private isLocal(member: number): boolean {
    let local = this.local[member];
    if (local === undefined) {
      const line = this.line(member);
      local = threadWaker.isThisThread(Atomics.load(this.words, line + LINE.pid), Atomics.load(this.words, line + LINE.token));
      // Known once the member has mapped the segment (it writes its address first).
      if (Atomics.load(this.words, line + LINE.pid) !== 0) this.local[member] = local;
    }
    return local;
  }

  private addressOf(member: number): WakeAddress {
    let address = this.addresses[member];
    if (address === undefined) {
      const line = this.line(member);
      address = { pid: this.words[line + LINE.pid] as number, token: this.words[line + LINE.token] as number, thread: this.words[line + LINE.thread] as number };
      this.addresses[member] = address;
    }
    return address;
  }

  /** Wakes every member asleep on this segment (after a flag went up). */
  private wakeAll(always = false): void {
    let here = always;
    for (let member = 0; member < this.members; member += 1) {
      if (member === this.index) continue;
      const word = this.line(member) + LINE.sleeping;
      if (Atomics.load(this.words, word) !== SLEEPING || Atomics.compareExchange(this.words, word, SLEEPING, AWAKE) !== SLEEPING) continue;
      if (this.isLocal(member)) here = true;
      else threadWaker.ring(this.addressOf(member));
    }
    if (here) threadWaker.recheck(true);
  }

  /** Whether waiting may spin: no other member shares this thread (one that did could not move while it spins). */
  private maySpin(): boolean {
    if (this.alone === undefined) {
      // Known once every member has mapped the segment (each writes its address first).
      for (let member = 0; member < this.members; member += 1) if (Atomics.load(this.words, this.line(member) + LINE.pid) === 0) return false;
      let alone = true;
      for (let member = 0; member < this.members; member += 1) if (member !== this.index && this.isLocal(member)) alone = false;
      this.alone = alone;
    }
    return this.alone;
  }

  /**
   * Resolves once `ready()` holds, waiting for member `member` in call `sequence`: spins on the
   * flag (polling the devices, so that messages keep moving) for the progress engine's budget
   * where a core is free, then sleeps until a publisher wakes it. Fails as the call does (a lost
   * member, an abort), and where the call failed at another member (whose flags went up, but not
   * over data).
   */
  async waitFor(call: SharedCall, wait: SharedMemoryWait, sequence: number, member: number, ready: () => boolean): Promise<void> {
    if (!ready()) await this.waitLonger(call, wait, sequence, member, ready);
    if (this.failed(sequence)) throw this.failure(call, sequence);
  }

  private async waitLonger(call: SharedCall, wait: SharedMemoryWait, sequence: number, member: number, ready: () => boolean): Promise<void> {
    wait.peer = member;
    const failure = call.engine.waitShared(wait);
    if (failure !== undefined) throw failure;
    try {
      const over = () => ready() || this.failed(sequence);
      if (progressEngine.spinning && this.maySpin() && this.spin(wait, over)) return;
      if (wait.failure === undefined) await this.sleep(wait, over);
      // What it waited for came (or the call failed here, which the caller finds): a failure told at the same time comes to the next wait.
      if (!over() && wait.failure !== undefined) throw wait.failure;
    } finally {
      call.engine.doneWaiting(wait);
    }
  }

  /** Spins for the budget; true once `ready` holds. */
  private spin(wait: SharedMemoryWait, ready: () => boolean): boolean {
    const deadline = performance.now() + progressEngine.budget / 1000;
    for (let polls = 1; ; polls += 1) {
      if (ready()) return true;
      if (wait.failure !== undefined) return false;
      if (polls % 16 === 0) {
        progressEngine.poll();
        if (performance.now() > deadline) return false;
      }
    }
  }

  private sleep(wait: SharedMemoryWait, ready: () => boolean): Promise<void> {
    const word = this.line(this.index) + LINE.sleeping;
    return new Promise<void>((resolve) => {
      const sleeper = {
        ready: () => ready() || wait.failure !== undefined,
        rearm: () => Atomics.store(this.words, word, SLEEPING),
        wake: () => {
          Atomics.store(this.words, word, AWAKE);
          wait.onFail = undefined;
          resolve();
        },
      };
      sleeper.rearm();
      // Said it sleeps, looks once more: a publisher that came between sees the word, or this sees its flag.
      if (sleeper.ready()) {
        sleeper.wake();
        return;
      }
      wait.onFail = () => {
        threadWaker.forget(sleeper);
        sleeper.wake();
      };
      threadWaker.sleep(sleeper);
    });
  }
}

/** Mappings by group, then by "the level's group ranks / this member's group rank". */
const mappings = new WeakMap<object, Map<string, CollectiveSegment>>();

/**
 * This member's mapping of `context`'s segment, made (by rank 0, which tells the others its name by
 * a message of this call) and mapped on the group's first call through it, and again after a call
 * broke it. CCJError where the members are not all on this host, or the addon is missing.
 */
export async function segmentOf(context: CollectiveContext): Promise<CollectiveSegment> {
  const call = context.sharedCall();
  const ranks = Array.from({ length: context.size }, (_, rank) => context.groupRankOf(rank));
  const key = `${ranks.join(',')}/${call.groupRank}`;
  let byGroup = mappings.get(context.group);
  if (byGroup === undefined) {
    byGroup = new Map();
    mappings.set(context.group, byGroup);
  }
  const held = byGroup.get(key);
  if (held !== undefined) return held;
  const forget = (segment: CollectiveSegment) => () => {
    byGroup.delete(key);
    segment.unlink();
  };
  if (context.size === 1) {
    const alone = CollectiveSegment.alone();
    byGroup.set(key, alone);
    return alone;
  }
  const hosts = new Set(ranks.map((rank) => context.group.hosts[rank]));
  if (hosts.size > 1) throw new CCJError(`${context.operation} shared-memory: the members of group '${context.group.name}' are on ${hosts.size} hosts, and a collective segment serves the members of one host (choose another algorithm, or 'hierarchical')`);
  const native = shmNative();
  if (typeof native === 'string') throw new CCJError(`${context.operation} shared-memory: ${segmentRefusal() as string}`);
  let segment: CollectiveSegment;
  if (context.rank === 0) {
    segment = CollectiveSegment.create(native, context.size, call.groupRank);
    const name = segment.name;
    await Promise.all(ranks.slice(1).map((_, index) => context.send(index + 1, name)));
  } else {
    const name = await context.receive<string>(0);
    segment = CollectiveSegment.map(native, name, context.size, context.rank);
  }
  segment.forget = forget(segment);
  byGroup.set(key, segment);
  return segment;
}

/** A member's part in one call through its segment: the waits it makes and its rounds. */
export class SegmentCall {
  readonly call: SharedCall;
  readonly sequence: number;
  private readonly wait: SharedMemoryWait;
  private readonly checked: boolean[] = [];
  /** The call's next round. */
  round = 0;

  constructor(
    readonly segment: CollectiveSegment,
    readonly context: CollectiveContext,
  ) {
    this.call = context.sharedCall();
    segment.sequence += 1;
    this.sequence = segment.sequence;
    this.wait = new SharedMemoryWait(this.call.route, `${context.operation} (shared memory)`, this.call.owner, this.call.groupRank, this.call.tag);
  }

  get rank(): number {
    return this.segment.index;
  }

  get size(): number {
    return this.segment.members;
  }

  private waitFor(member: number, ready: () => boolean): Promise<void> {
    return this.segment.waitFor(this.call, this.wait, this.sequence, this.context.groupRankOf(member), ready);
  }

  /**
   * Enters the call: waits until no member is still in the call before the last (whose
   * signatures and chunks this call reuses), says it arrived with its signature, and checks the
   * previous rank's: every neighbour pair agreeing, every member agrees, even where no data moves
   * between those that disagree.
   */
  async begin(): Promise<void> {
    const { segment, sequence } = this;
    if (!segment.confirmed) await this.confirm();
    const settled = position(sequence - 2, END_ROUND, LAST_STEP);
    for (let member = 0; member < this.size; member += 1) {
      if (member !== this.rank) await this.waitFor(member, () => atLeast(segment.consumed(member), settled));
    }
    segment.arrive(sequence, this.call.signature);
    if (this.size > 1) await this.arrival((this.rank - 1 + this.size) % this.size);
  }

  /**
   * On the first call through the segment: waits until every member has mapped it (the creator
   * then unlinks its name). A member whose first call fails before then forgets the segment, and
   * so does every other (none got past this point: a failure that is not a setup's needs it
   * passed), so the next call sets a new one up.
   */
  private async confirm(): Promise<void> {
    const { segment } = this;
    await this.waitFor((this.rank + 1) % this.size, () => segment.mapped >= this.size - 1);
    segment.confirmed = true;
    if (this.rank === 0) segment.unlink();
  }

  /** Waits for `member` to enter this call, and checks its signature against this member's. */
  async arrival(member: number): Promise<void> {
    if (this.checked[member] === true) return;
    const { segment, sequence } = this;
    await this.waitFor(member, () => ((segment.arrived(member) - sequence) | 0) >= 0);
    const mismatch = signatureMismatch(`${this.context.operation}: shared memory with rank ${this.context.groupRankOf(member)} of group '${this.call.route.name}' (rank ${this.call.groupRank} here)`, this.call.signature, segment.signatureOf(member, sequence));
    if (mismatch !== undefined) throw mismatch;
    this.checked[member] = true;
  }

  /** Waits until `member` has published step `step` (1..14) of round `round` of this call (and checks its signature first). */
  async published(member: number, round: number, step: number): Promise<void> {
    await this.arrival(member);
    const { segment } = this;
    const at = position(this.sequence, round, step);
    await this.waitFor(member, () => atLeast(segment.published(member), at));
  }

  /** Before writing this member's chunk of `round`: waits until every member is done with what it last wrote into that half. Returns the chunk's offset. */
  async claim(round: number): Promise<number> {
    const { segment, sequence } = this;
    const previous = segment.claimHalf(sequence, round, position(sequence, round, LAST_STEP));
    for (let member = 0; previous !== undefined && member < this.size; member += 1) {
      if (member !== this.rank) await this.waitFor(member, () => atLeast(segment.consumed(member), previous));
    }
    return segment.chunkOffset(this.rank, sequence, round);
  }

  publish(round: number, step: number): void {
    this.segment.publish(position(this.sequence, round, step));
  }

  /** This member is done reading everything up to the end of `round`. */
  consumed(round: number): void {
    this.segment.consume(position(this.sequence, round, LAST_STEP));
  }

  /** Leaves the call: done with all of it. */
  end(): void {
    this.segment.consume(position(this.sequence, END_ROUND, LAST_STEP));
  }
}

/**
 * Runs `body` as this member's part of a call through `context`'s segment: sets the segment up on
 * first use, enters and leaves the call. A failure here (but a lost member's) is recorded in the
 * segment for the members still in the call (their waits end, naming it) before it propagates
 * (the caller aborts the call, see operations.ts); the next call runs through the segment as usual.
 */
export async function throughSegment<R>(context: CollectiveContext, body: (call: SegmentCall) => Promise<R>): Promise<R> {
  const segment = await segmentOf(context);
  const call = new SegmentCall(segment, context);
  try {
    await call.begin();
    const result = await body(call);
    call.end();
    return result;
  } catch (error) {
    // A lost member breaks the group: every member's engine fails its waits, naming the lost process.
    if (!segment.confirmed) segment.forget();
    else if (!(error instanceof PeerLostError)) segment.abandon(call.sequence, error as Error, call.call.groupRank);
    throw error;
  }
}
