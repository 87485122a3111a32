/**
 * A member's part in one call through its group's collective segment (segment.ts): entering it
 * (the setup on first use, the wait for members two calls behind), the waits for other members'
 * flags (each checking the writer's signature first), claiming its own chunks, and leaving it.
 */
import { PeerLostError } from '../../base/errors.js';
import { SharedMemoryWait } from '../../engine/calls.js';
import { signatureMismatch } from '../../engine/messages.js';
import type { CollectiveContext, SharedCall } from '../context.js';
import { END, LAST_ROUND, LAST_STEP, heldSegment, inCall, segmentOf } from './segment.js';
import type { CollectiveSegment } from './segment.js';

/** A reader's copy from another member's memory, at least (bytes per µs: 2 GB/s), for how long its writer spins waiting for it. */
const READ_BYTES_PER_MICROSECOND = 2000;

/** A member's part in one call through its segment: the waits it makes and its rounds. */
export class SegmentCall {
  readonly call: SharedCall;
  /** The call's id (see the file's comment). */
  readonly id: number;
  /** The engine's record of this member's waits in the call, made once a wait outlasts its spin. */
  private wait: SharedMemoryWait | undefined;
  private readonly makeWait = (): SharedMemoryWait => {
    this.wait ??= new SharedMemoryWait(this.call.route, `${this.context.operation} (shared memory)`, this.call.owner, this.call.groupRank, this.call.tag);
    return this.wait;
  };
  /** Members whose signature in this call was checked, as bits (and, past 31 members, by index). */
  private checkedBits = 0;
  private readonly checked: boolean[] = [];
  /** The call's next round. */
  round = 0;

  constructor(
    readonly segment: CollectiveSegment,
    readonly context: CollectiveContext,
  ) {
    this.call = context.sharedCall();
    this.id = segment.nextCall(this.call.tag);
  }

  get rank(): number {
    return this.segment.index;
  }

  get size(): number {
    return this.segment.members;
  }

  /**
   * Waits until `ready`, which member `member` makes true (`anyone`: any member may), failing as the
   * call does; undefined where it holds at once. `spinMicroseconds`: how long it should take, where known.
   */
  private waitFor(member: number, ready: () => boolean, anyone = false, spinMicroseconds?: number): Promise<void> | undefined {
    return this.segment.waitFor(this.call, this.makeWait, this.id, anyone ? undefined : member, this.context.groupRankOf(member), ready, spinMicroseconds);
  }

  /**
   * Enters the call: waits until no member is still in the call before this member's last one
   * (whose signatures and chunks this call reuses), and says it arrived with its signature.
   */
  begin(): Promise<void> | undefined {
    const { segment } = this;
    if (!segment.confirmed) return this.confirm().then(() => this.begin());
    const settled = segment.calls[1] as number;
    for (let member = 0; settled !== 0 && member < this.size; member += 1) {
      if (member !== this.rank && !segment.consumed(member, settled, END)) return this.settle(member, settled);
    }
    segment.arrive(this.id, this.call.signature);
    return undefined;
  }

  /** The rest of begin, from `from` on: waits for the members still in call `settled`. */
  private async settle(from: number, settled: number): Promise<void> {
    const { segment } = this;
    for (let member = from; member < this.size; member += 1) {
      if (member !== this.rank) await this.waitFor(member, () => segment.consumed(member, settled, END));
    }
    segment.arrive(this.id, this.call.signature);
  }

  /**
   * Before leaving: checks the previous rank's signature (if this call read nothing of it; by now
   * it most likely arrived). Every neighbour pair agreeing, every member agrees, even where no data
   * moves between those that disagree; every wait for data checks its writer's first, so no call
   * waits for one that disagrees.
   */
  finish(): Promise<void> | undefined {
    const waiting = this.size > 1 ? this.arrival((this.rank - 1 + this.size) % this.size) : undefined;
    if (waiting !== undefined) return waiting.then(() => this.end());
    this.end();
    return undefined;
  }

  /**
   * On the first call through the segment: waits until every member has mapped it (the creator
   * then unlinks its name). A member keeps its mapping through a failed call; one whose call failed
   * before the name reached it is told again by the creator on the next call (segmentOf).
   */
  private async confirm(): Promise<void> {
    const { segment } = this;
    await this.waitFor((this.rank + 1) % this.size, () => segment.mapped >= this.size - 1, true);
    segment.confirmed = true;
    if (this.rank === 0) segment.unlink();
  }

  /**
   * Waits for `member` to enter this call, and checks its signature against this member's. A
   * member that went past the call without it failed the call's operation before: the operation's
   * abort is on its way, and fails this wait.
   */
  arrival(member: number): Promise<void> | undefined {
    if (member < 31 ? (this.checkedBits & (1 << member)) !== 0 : this.checked[member] === true) return undefined;
    const { segment, id } = this;
    if (!segment.arrived(member, id)) return this.arrivalLater(member);
    return this.check(member);
  }

  private async arrivalLater(member: number): Promise<void> {
    const { segment, id } = this;
    await this.waitFor(member, () => segment.arrived(member, id));
    await this.check(member);
  }

  /**
   * Checks the signature of `member`, which arrived at this call or went past it. One that went
   * past it without taking part failed the call's operation before: the operation's abort is on
   * its way, and fails the wait returned.
   */
  private check(member: number): Promise<void> | undefined {
    const { segment, id } = this;
    const theirs = segment.signatureOf(member, id);
    if (theirs === undefined) return this.waitFor(member, () => false);
    const ours = this.call.signature;
    if (theirs.operation !== ours.operation || theirs.root !== ours.root || theirs.reduction !== ours.reduction) {
      const mismatch = signatureMismatch(`${this.context.operation}: shared memory with rank ${this.context.groupRankOf(member)} of group '${this.call.route.name}' (rank ${this.call.groupRank} here)`, ours, theirs);
      if (mismatch !== undefined) throw mismatch;
    }
    if (member < 31) this.checkedBits |= 1 << member;
    else this.checked[member] = true;
    return undefined;
  }

  /** Waits until `member` has published step `step` (1..14) of round `round` of this call (and checks its signature first). */
  published(member: number, round: number, step: number): Promise<void> | undefined {
    const { segment, id } = this;
    const at = inCall(round, step);
    const arriving = this.arrival(member);
    if (arriving !== undefined) return arriving.then(() => this.waitFor(member, () => segment.published(member, id, at)));
    return this.waitFor(member, () => segment.published(member, id, at));
  }

  /**
   * Before writing this member's chunk of `round`: waits until every member is done with what it
   * last wrote into that half. Returns the chunk's offset (at once where nobody is).
   */
  claim(round: number): number | Promise<number> {
    const { segment, id } = this;
    const previous = segment.claimHalf(id, round);
    for (let member = 0; previous !== undefined && member < this.size; member += 1) {
      if (member !== this.rank && !segment.consumed(member, previous.call, previous.at)) return this.claimLater(member, previous, round);
    }
    return segment.chunkOffset(this.rank, id, round);
  }

  /** The rest of claim, from `from` on. */
  private async claimLater(from: number, previous: { call: number; at: number }, round: number): Promise<number> {
    const { segment } = this;
    for (let member = from; member < this.size; member += 1) {
      if (member !== this.rank) await this.waitFor(member, () => segment.consumed(member, previous.call, previous.at));
    }
    return segment.chunkOffset(this.rank, this.id, round);
  }

  /** Waits for the loss of `member`, whose process is gone: the engine finds it in bounded time, and it fails the wait (never resolves). */
  lossOf(member: number): Promise<void> | undefined {
    return this.waitFor(member, () => false);
  }

  /**
   * Waits until every other member is done reading round `round` of this call (its bodies, `bytes`
   * long, read by address, may then change), spinning as long as reading them should take.
   */
  async readByAll(round: number, bytes: number): Promise<void> {
    const { segment, id } = this;
    const at = inCall(round, LAST_STEP);
    const reading = bytes / READ_BYTES_PER_MICROSECOND;
    for (let member = 0; member < this.size; member += 1) {
      if (member !== this.rank) await this.waitFor(member, () => segment.consumed(member, id, at), false, reading);
    }
  }

  /**
   * Whether every other member can read this one's memory: a member of this process, or one whose
   * shared-memory link from here lends (its process checked it may read ours, and single copy is on).
   */
  othersReadHere(): boolean {
    const { segment, context } = this;
    if (segment.othersReadHere === undefined) {
      let all = true;
      for (let member = 0; member < this.size; member += 1) {
        if (member === this.rank || segment.pidOf(member) === process.pid) continue;
        const endpoint = context.group.route.endpoints[context.groupRankOf(member)] as number;
        if (this.call.engine.deviceOf(endpoint)?.lendsTo?.(endpoint) !== true) all = false;
      }
      segment.othersReadHere = all;
    }
    return segment.othersReadHere;
  }

  publish(round: number, step: number): void {
    this.segment.publish(this.id, inCall(round, step));
  }

  /** This member is done reading everything up to the end of `round`. */
  consumed(round: number): void {
    this.segment.consume(this.id, inCall(round, LAST_STEP));
  }

  /** This member reads nothing more in this call (writers need not wait for it), though it has not left the call. */
  readsNoMore(): void {
    this.segment.consume(this.id, inCall(LAST_ROUND, LAST_STEP));
  }

  /** Leaves the call: done with all of it. */
  end(): void {
    this.segment.consume(this.id, END);
  }
}

/**
 * Runs `body` as this member's part of a call through `context`'s segment: sets the segment up on
 * first use, enters and leaves the call. A failure here (but a lost member's) is recorded in the
 * segment for the members still in the call (their waits end, naming it) before it propagates
 * (the caller aborts the call, see operations.ts); the next call runs through the segment as usual.
 */
export async function throughSegment<R>(context: CollectiveContext, body: (call: SegmentCall) => Promise<R>): Promise<R> {
  const segment = heldSegment(context) ?? (await segmentOf(context));
  const call = new SegmentCall(segment, context);
  try {
    const entering = call.begin();
    if (entering !== undefined) await entering;
    const result = await body(call);
    const leaving = call.finish();
    if (leaving !== undefined) await leaving;
    return result;
  } catch (error) {
    // A lost member breaks the group: every member's engine fails its waits, naming the lost process.
    if (!(error instanceof PeerLostError) && segment.calls[0] === call.id) segment.abandon(call.id, error as Error, call.call.groupRank);
    throw error;
  }
}
