/**
 * A group's collective segment on one host (Open MPI's coll/sm, UCC's shared-memory team layer):
 * shared memory that the group's members on the host map, with a control line per member (where
 * it is in its calls, its calls' signatures and failures, its sleeping word, where to ring it) and
 * per member a data slot of two chunks, so that a member writes its next chunk while slower readers
 * finish the one before. The host's lowest rank of the group makes it on the group's first call
 * through it and tells the others its name by a message of that call; they map it and count
 * themselves in, and the creator unlinks its name once all have (or when its process exits; a
 * killed process's segment is removed by removeStaleSegments: its name is of the `ccjs-<pid>-…`
 * family). Each member keeps its mapping per group (groups are immutable); the memory goes when
 * the last mapping is collected.
 *
 *   header:  Int32 0 magic  1 members  2 mapped count  3 failed calls recorded (so that waits need not
 *            look at every member's failures on every spin)
 *   lines:   LINE_BYTES per member (LINE), then per member two failure notices of NOTICE_BYTES
 *   data:    per member two chunks of CHUNK_BYTES: a 64-byte header (Float64 0: the length of the
 *            stream being written; 1: 1 where the chunk holds the stream by address, see
 *            transfer.ts), then the chunk's bytes
 *
 * A call through the segment is named by its call id: its operation tag (the group's collective
 * counter, the same at every member) times four, plus how many calls through the segment the same
 * operation made before (a hierarchical one makes two). A member that failed an operation before
 * it came here skips its calls; the others find it gone past them and wait for the operation's
 * abort. Where a member is, is a pair (call id, round × 16 + step), compared call id first
 * (modulo 2^32); a member is never more than one call ahead of another (SegmentCall.begin waits for
 * that), so each member keeps its last two calls' signatures and failures.
 */
import { CCJError, TransportError } from '../../base/errors.js';
import { abortError, abortFrame, abortNotice } from '../../engine/abort.js';
import type { SharedMemoryWait } from '../../engine/calls.js';
import { progressEngine } from '../../engine/progress.js';
import type { Signature } from '../../engine/signature.js';
import type { ShmNative } from '../../../transport/shm/native.js';
import { shmNative } from '../../../transport/shm/native.js';
import { segmentName } from '../../../transport/shm/segments.js';
import { segmentRefusal } from './sharing.js';
import type { CollectiveContext, SharedCall } from '../context.js';
import { AWAKE, threadWaker } from './waking.js';
import type { WakeAddress } from './waking.js';

/** A chunk of a member's slot, with its header. */
const CHUNK_BYTES = 128 * 1024;
const CHUNK_HEADER = 64;
/** The bytes of data a chunk holds (a multiple of 8: typed arrays of any type are cut at whole elements). */
export const CHUNK_CAPACITY = CHUNK_BYTES - CHUNK_HEADER;

const MAGIC = 0x63636a63;
const HEADER = { magic: 0, members: 1, mapped: 2, failures: 3 } as const;
const LINES_OFFSET = 64;
const LINE_BYTES = 128;
/**
 * A member's control line, in Int32 words, written by its member only (but the sleeping word,
 * which wakers swap): the call it arrived at; its last two calls' signatures (call id, operation,
 * root, reduction); how far it published and read (call id, round × 16 + step: the call id is
 * written after the position is reset, and read around it, see `at`); its sleeping word and its
 * thread's address; its last two failed calls (call id, notice format, notice length).
 */
const LINE = { arrived: 0, signatures: 1, publishedCall: 9, publishedAt: 10, consumedCall: 11, consumedAt: 12, sleeping: 13, pid: 14, token: 15, thread: 16, failures: 17 } as const;
/** A sleeping word of a member waiting for any member (else it holds the index + 1 of the member it waits for; AWAKE: 0). */
const ANYONE = -1;
const SIGNATURE_WORDS = 4;
const FAILURE_WORDS = 3;
const NOTICE_BYTES = 4096;
const PAGE = 4096;

/** The last step of a round, and, with END_ROUND, of a call: "done with all of it". */
export const LAST_STEP = 0xf;
const END_ROUND = 0x7ff_ffff;
/** Past every round a call's data takes; before END (a member still in the call). */
export const LAST_ROUND = END_ROUND - 1;
export const END = (END_ROUND << 4) | LAST_STEP;

/** Where in call `call` a member is: step `step` of round `round`. */
export function inCall(round: number, step: number): number {
  return (round << 4) | step;
}

/** True when (call a, at a) is at or after (call b, at b). */
function atLeast(callA: number, atA: number, callB: number, atB: number): boolean {
  const calls = (callA - callB) | 0;
  return calls !== 0 ? calls > 0 : atA >= atB;
}

function align(bytes: number, to: number): number {
  return Math.ceil(bytes / to) * to;
}

function noticesOffset(members: number): number {
  return LINES_OFFSET + members * LINE_BYTES;
}

function dataOffset(members: number): number {
  return align(noticesOffset(members) + members * 2 * NOTICE_BYTES, PAGE);
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
  /** Whether every other member can read this one's memory (set once all have mapped it, see SegmentCall.othersReadHere). */
  othersReadHere: boolean | undefined;
  /** This member's last two calls through it, the latest first (call ids; 0: none). */
  readonly calls = [0, 0];
  /** The operation tag of the latest call, and how many calls that operation made through it. */
  private lastTag = 0;
  private callsOfTag = 0;
  /** Every member has mapped it (its first call got that far): it serves this group's calls from now on. */
  confirmed: boolean;
  /** The call and position of the last chunk written into each half of this member's slot. */
  private readonly lastWritten = [
    { call: 0, at: 0 },
    { call: 0, at: 0 },
  ];
  /** The failures recorded when failedBy last found none, and in which call (see failedBy). */
  private failuresSeen = -1;
  private callWithoutFailure = 0;
  /** Which signature and failure slot this member's latest call uses. */
  private slot = 0;
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
    new Int32Array(buffer)[HEADER.members] = 1;
    return new CollectiveSegment(undefined, '', buffer, 1, 0, false);
  }

  /** Makes the segment of `members` members (this one at index 0). */
  static create(native: ShmNative, members: number, rank: number): CollectiveSegment {
    const name = segmentName(rank);
    const buffer = native.open(name, segmentBytes(members), true);
    const words = new Int32Array(buffer);
    words[HEADER.members] = members;
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

  /** The id of the next call, of operation `tag` (see the file's comment). */
  nextCall(tag: number): number {
    this.callsOfTag = tag === this.lastTag ? this.callsOfTag + 1 : 0;
    this.lastTag = tag;
    return (tag * 4 + this.callsOfTag) | 0;
  }

  /** Where member `member`'s chunk for round `round` of call `call` lies (its data, after the chunk header). */
  chunkOffset(member: number, call: number, round: number): number {
    return dataOffset(this.members) + (member * 2 + ((call + round) & 1)) * CHUNK_BYTES + CHUNK_HEADER;
  }

  /** The length of the stream whose chunk lies at `offset` (its writer put it in the chunk's header). */
  streamLength(offset: number): number {
    return this.lengths[(offset - CHUNK_HEADER) / 8] as number;
  }

  /** Whether the stream whose chunk lies at `offset` is there by address (read from its writer's memory). */
  byAddress(offset: number): boolean {
    return this.lengths[(offset - CHUNK_HEADER) / 8 + 1] === 1;
  }

  setStream(offset: number, length: number, byAddress: boolean): void {
    const at = (offset - CHUNK_HEADER) / 8;
    this.lengths[at] = length;
    this.lengths[at + 1] = byAddress ? 1 : 0;
  }

  /** The process of `member` (once it has mapped the segment). */
  pidOf(member: number): number {
    return this.addressOf(member).pid;
  }

  /** Whether `member` has mapped it (it writes its address on mapping). */
  hasMapped(member: number): boolean {
    return Atomics.load(this.words, this.line(member) + LINE.pid) !== 0;
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

  /** True when `member` arrived at call `call` or one after it. */
  arrived(member: number, call: number): boolean {
    return ((Atomics.load(this.words, this.line(member) + LINE.arrived) - call) | 0) >= 0;
  }

  /** Whether `member` has published up to (call, at). */
  published(member: number, call: number, at: number): boolean {
    return this.reached(this.line(member) + LINE.publishedCall, call, at);
  }

  /** Whether `member` is done reading up to (call, at). */
  consumed(member: number, call: number, at: number): boolean {
    return this.reached(this.line(member) + LINE.consumedCall, call, at);
  }

  /** Reads a (call id, position) pair written as `advance` writes it, and compares it with (call, at). */
  private reached(word: number, call: number, at: number): boolean {
    for (;;) {
      const first = Atomics.load(this.words, word);
      const position = Atomics.load(this.words, word + 1);
      if (Atomics.load(this.words, word) === first) return atLeast(first, position, call, at);
    }
  }

  /** Writes this member's pair at `word`: a new call's id only after its position went back to 0, so that no reader sees the new id with the old position. */
  private advance(word: number, call: number, at: number): void {
    if (Atomics.load(this.words, word) !== call) {
      Atomics.store(this.words, word + 1, 0);
      Atomics.store(this.words, word, call);
    }
    Atomics.store(this.words, word + 1, at);
  }

  /** Member `member`'s signature in call `call`, or undefined when it never took part in it (it went past it: its operation failed before). */
  signatureOf(member: number, call: number): Signature | undefined {
    for (let slot = 0; slot < 2; slot += 1) {
      const at = this.line(member) + LINE.signatures + slot * SIGNATURE_WORDS;
      // The words hold unsigned numbers (NO_ROOT, a reduction's hash).
      if (this.words[at] === call) return { operation: (this.words[at + 1] as number) >>> 0, root: (this.words[at + 2] as number) >>> 0, reduction: (this.words[at + 3] as number) >>> 0 };
    }
    return undefined;
  }

  /** Enters call `call` with `signature`: others may check it from now on. Done with every call before (this one's steps start at 1). */
  arrive(call: number, signature: Signature): void {
    this.calls[1] = this.calls[0] as number;
    this.calls[0] = call;
    this.slot ^= 1;
    const line = this.line(this.index);
    const at = line + LINE.signatures + this.slot * SIGNATURE_WORDS;
    this.words[at + 1] = signature.operation;
    this.words[at + 2] = signature.root;
    this.words[at + 3] = signature.reduction;
    Atomics.store(this.words, at, call);
    this.advance(line + LINE.publishedCall, call, 0);
    this.advance(line + LINE.consumedCall, call, 0);
    Atomics.store(this.words, line + LINE.arrived, call);
    this.wakeAll();
  }

  publish(call: number, at: number): void {
    this.advance(this.line(this.index) + LINE.publishedCall, call, at);
    this.wakeAll();
  }

  consume(call: number, at: number): void {
    this.advance(this.line(this.index) + LINE.consumedCall, call, at);
    this.wakeAll();
  }

  /**
   * The position a write into the half of `round` of call `call` must wait for (every member done
   * with what was last written there), or undefined when none: what calls before this member's
   * previous one wrote is read (SegmentCall.begin waited for that). Records it as written there.
   */
  claimHalf(call: number, round: number): { call: number; at: number } | undefined {
    const last = this.lastWritten[(call + round) & 1] as { call: number; at: number };
    const previous = last.call === call || last.call === this.calls[1] ? { ...last } : undefined;
    last.call = call;
    last.at = inCall(round, LAST_STEP);
    return previous;
  }

  /** True once member `member` recorded call `call` failed. */
  private failedAt(member: number, call: number): boolean {
    const at = this.line(member) + LINE.failures;
    return Atomics.load(this.words, at) === call || Atomics.load(this.words, at + FAILURE_WORDS) === call;
  }

  /** The member that recorded call `call` failed, if any. */
  failedBy(call: number): number | undefined {
    // The count goes up after a failure is recorded: unchanged since a look that found none in this call, there is none.
    const recorded = Atomics.load(this.words, HEADER.failures);
    if (recorded === this.failuresSeen && call === this.callWithoutFailure) return undefined;
    for (let member = 0; member < this.members; member += 1) if (this.failedAt(member, call)) return member;
    this.failuresSeen = recorded;
    this.callWithoutFailure = call;
    return undefined;
  }

  /** The error this member's part of `shared` (call `call`) fails with, as member `member` recorded it (see abandon). */
  failure(shared: SharedCall, call: number, member: number): Error {
    const line = this.line(member);
    const slot = Atomics.load(this.words, line + LINE.failures) === call ? 0 : 1;
    const at = line + LINE.failures + slot * FAILURE_WORDS;
    const offset = noticesOffset(this.members) + (member * 2 + slot) * NOTICE_BYTES;
    const notice = { format: this.words[at + 1] as number, bytes: this.bytes.slice(offset, offset + (this.words[at + 2] as number)) };
    return abortError(abortFrame(notice, shared.route.context, shared.groupRank, shared.groupRank, shared.tag, shared.signature));
  }

  /**
   * Call `call` failed here with `error` (at group rank `rank`): records why, for every member
   * waiting in it, then says this member is done with the call (everything published and read), so
   * that nobody waits for it, and wakes every member. Those that read what it published find the
   * call failed first; the next call runs as if nothing happened.
   */
  abandon(call: number, error: Error, rank: number): void {
    const line = this.line(this.index);
    const slot = this.slot;
    const at = line + LINE.failures + slot * FAILURE_WORDS;
    const notice = abortNotice(error, rank);
    const length = Math.min(notice.bytes.byteLength, NOTICE_BYTES);
    this.bytes.set(notice.bytes.subarray(0, length), noticesOffset(this.members) + (this.index * 2 + slot) * NOTICE_BYTES);
    this.words[at + 1] = notice.format;
    this.words[at + 2] = length;
    Atomics.store(this.words, at, call);
    Atomics.add(this.words, HEADER.failures, 1);
    this.advance(line + LINE.publishedCall, call, END);
    this.advance(line + LINE.consumedCall, call, END);
    this.wakeAll(true);
  }

  // ---- waiting ----

  private isLocal(member: number): boolean {
    let local = this.local[member];
    if (local === undefined) {
      const line = this.line(member);
      local = threadWaker.isThisThread(Atomics.load(this.words, line + LINE.pid), Atomics.load(this.words, line + LINE.token));
      // Known once the member has mapped the segment (it writes its address first).
      if (this.hasMapped(member)) this.local[member] = local;
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

  /**
   * Wakes the members asleep waiting for this one (or for anyone; `everyone`: every member asleep),
   * after a flag of this member went up. A sleeping word says whom its member waits for.
   */
  private wakeAll(everyone = false): void {
    let here = everyone;
    const me = this.index + 1;
    for (let member = 0; member < this.members; member += 1) {
      if (member === this.index) continue;
      const word = this.line(member) + LINE.sleeping;
      const sleeping = Atomics.load(this.words, word);
      if (sleeping === AWAKE || (sleeping !== me && sleeping !== ANYONE && !everyone)) continue;
      if (Atomics.compareExchange(this.words, word, sleeping, AWAKE) !== sleeping) continue;
      if (this.isLocal(member)) here = true;
      else threadWaker.ring(this.addressOf(member));
    }
    if (here) threadWaker.recheck(true);
  }

  /** Whether waiting may spin: no other member shares this thread (one that did could not move while it spins). */
  private maySpin(): boolean {
    if (this.alone === undefined) {
      // Known once every member has mapped the segment (each writes its address first).
      for (let member = 0; member < this.members; member += 1) if (!this.hasMapped(member)) return false;
      let alone = true;
      for (let member = 0; member < this.members; member += 1) if (member !== this.index && this.isLocal(member)) alone = false;
      this.alone = alone;
    }
    return this.alone;
  }

  /**
   * Waits until `ready()` holds, for member `member` in call `id`: undefined where it holds at
   * once (no promise, nothing allocated), else a promise that spins on the flag (polling the
   * devices, so that messages keep moving) for the progress engine's budget where a core is free
   * (or for `spinMicroseconds`, where the caller knows how long the wait should take),
   * then tracks the wait in the engine (`wait()` makes it: losses and aborts fail it) and sleeps
   * until a publisher wakes it. A lost member is thus found at the latest when the spin ends.
   * Fails as the call does (a lost member, an abort), and where the call failed at another member
   * (whose flags went up, but not over data).
   */
  waitFor(call: SharedCall, wait: () => SharedMemoryWait, id: number, member: number | undefined, groupRank: number, ready: () => boolean, spinMicroseconds?: number): Promise<void> | undefined {
    if (!ready()) return this.waitLonger(call, wait, id, member, groupRank, ready, spinMicroseconds);
    const failedBy = this.failedBy(id);
    if (failedBy !== undefined) throw this.failure(call, id, failedBy);
    return undefined;
  }

  private async waitLonger(call: SharedCall, makeWait: () => SharedMemoryWait, id: number, member: number | undefined, groupRank: number, ready: () => boolean, spinMicroseconds: number | undefined): Promise<void> {
    const over = () => ready() || this.failedBy(id) !== undefined;
    if (!progressEngine.spinUntil(over, this.maySpin(), spinMicroseconds)) {
      const wait = makeWait();
      // The call's waits share one record: a failure told to an earlier wait (whose data came too) was for its peer; waitShared finds what still holds.
      wait.peer = groupRank;
      wait.failure = undefined;
      const failure = call.engine.waitShared(wait);
      // A member that finished normally wrote all it ever will before its goodbye came: what it wrote may be all this wait needed.
      if (failure !== undefined && !over()) throw failure;
      try {
        if (!over() && wait.failure === undefined) await this.sleep(wait, member === undefined ? ANYONE : member + 1, over);
        // What it waited for came (or the call failed here, which the caller finds): a failure told at the same time is found again by the next wait.
        if (!over() && wait.failure !== undefined) throw wait.failure;
      } finally {
        call.engine.doneWaiting(wait);
      }
    }
    const failedBy = this.failedBy(id);
    if (failedBy !== undefined) throw this.failure(call, id, failedBy);
  }

  /** Sleeps until `ready`, its sleeping word saying `on` (whom it waits for: member + 1, or ANYONE). */
  private sleep(wait: SharedMemoryWait, on: number, ready: () => boolean): Promise<void> {
    const word = this.line(this.index) + LINE.sleeping;
    return new Promise<void>((resolve) => {
      const sleeper = {
        ready: () => ready() || wait.failure !== undefined,
        rearm: () => Atomics.store(this.words, word, on),
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
/** The same for calls over the whole group (no level), by this member's group rank: found without making a key. */
const wholeGroupMappings = new WeakMap<object, Map<number, CollectiveSegment>>();

/**
 * This member's mapping of `context`'s segment where it has one for a call over the whole group
 * that every member has mapped (else segmentOf, which may have to tell members its name).
 */
export function heldSegment(context: CollectiveContext): CollectiveSegment | undefined {
  const held = context.wholeGroup ? wholeGroupMappings.get(context.group)?.get(context.rank) : undefined;
  return held?.confirmed === true ? held : undefined;
}

function remember(context: CollectiveContext, byGroup: Map<string, CollectiveSegment>, key: string, segment: CollectiveSegment): void {
  byGroup.set(key, segment);
  if (!context.wholeGroup) return;
  let byRank = wholeGroupMappings.get(context.group);
  if (byRank === undefined) {
    byRank = new Map();
    wholeGroupMappings.set(context.group, byRank);
  }
  byRank.set(context.rank, segment);
}

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
  if (held !== undefined) {
    if (context.rank === 0 && !held.confirmed) await sendName(context, held);
    return held;
  }
  if (context.size === 1) {
    const alone = CollectiveSegment.alone();
    remember(context, byGroup, key, alone);
    return alone;
  }
  const hosts = new Set(ranks.map((rank) => context.group.hosts[rank]));
  if (hosts.size > 1) throw new CCJError(`${context.operation} shared-memory: the members of group '${context.group.name}' are on ${hosts.size} hosts, and a collective segment serves the members of one host (choose another algorithm, or 'hierarchical')`);
  const native = shmNative();
  if (typeof native === 'string') throw new CCJError(`${context.operation} shared-memory: ${segmentRefusal() as string}`);
  let segment: CollectiveSegment;
  if (context.rank === 0) {
    segment = CollectiveSegment.create(native, context.size, call.groupRank);
    await sendName(context, segment);
  } else {
    const name = await context.receive<string>(0);
    segment = CollectiveSegment.map(native, name, context.size, context.rank);
  }
  remember(context, byGroup, key, segment);
  return segment;
}

/**
 * The creator tells the members that have not mapped `segment` its name: all of them on the first
 * call, and on a later one those whose first call failed before the name reached them (a member
 * that mapped it keeps it through failed calls, so that every member agrees on who must be told).
 */
async function sendName(context: CollectiveContext, segment: CollectiveSegment): Promise<void> {
  const unmapped = Array.from({ length: context.size - 1 }, (_, index) => index + 1).filter((member) => !segment.hasMapped(member));
  await Promise.all(unmapped.map((member) => context.send(member, segment.name)));
}
