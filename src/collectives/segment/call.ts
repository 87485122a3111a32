/**
 * A member's part in one call through its group's collective segment (segment.ts): entering it
 * (the setup on first use, the wait for members two calls behind), the waits for other members'
 * flags (each checking the writer's signature first), claiming its own chunks, and leaving it.
 */
import { PeerLostError } from '../../base/errors.js';
import { SharedMemoryWait } from '../../engine/calls.js';
import { signatureMismatch } from '../../engine/messages.js';
import type { CollectiveContext, SharedCall } from '../context.js';
import { END, LAST_ROUND, LAST_STEP, inCall, segmentOf } from './segment.js';
import type { CollectiveSegment } from './segment.js';

/** A member's part in one call through its segment: the waits it makes and its rounds. */
export class SegmentCall {
  readonly call: SharedCall;
  /** The call's id (see the file's comment). */
  readonly id: number;
  private readonly wait: SharedMemoryWait;
  private readonly checked: boolean[] = [];
  /** The call's next round. */
  round = 0;

  constructor(
    readonly segment: CollectiveSegment,
    readonly context: CollectiveContext,
  ) {
    this.call = context.sharedCall();
    this.id = segment.nextCall(this.call.tag);
    this.wait = new SharedMemoryWait(this.call.route, `${context.operation} (shared memory)`, this.call.owner, this.call.groupRank, this.call.tag);
  }

  get rank(): number {
    return this.segment.index;
  }

  get size(): number {
    return this.segment.members;
  }

  /** Waits until `ready`, which member `member` makes true (undefined: any member may), failing as the call does. */
  private waitFor(member: number, ready: () => boolean, anyone = false): Promise<void> {
    return this.segment.waitFor(this.call, this.wait, this.id, anyone ? undefined : member, this.context.groupRankOf(member), ready);
  }

  /**
   * Enters the call: waits until no member is still in the call before this member's last one
   * (whose signatures and chunks this call reuses), and says it arrived with its signature.
   */
  async begin(): Promise<void> {
    const { segment } = this;
    if (!segment.confirmed) await this.confirm();
    const settled = segment.calls[1] as number;
    if (settled !== 0) {
      for (let member = 0; member < this.size; member += 1) {
        if (member !== this.rank) await this.waitFor(member, () => segment.consumed(member, settled, END));
      }
    }
    segment.arrive(this.id, this.call.signature);
  }

  /**
   * Before leaving: checks the previous rank's signature (if this call read nothing of it; by now
   * it most likely arrived). Every neighbour pair agreeing, every member agrees, even where no data
   * moves between those that disagree; every wait for data checks its writer's first, so no call
   * waits for one that disagrees.
   */
  async finish(): Promise<void> {
    if (this.size > 1) await this.arrival((this.rank - 1 + this.size) % this.size);
    this.end();
  }

  /**
   * On the first call through the segment: waits until every member has mapped it (the creator
   * then unlinks its name). A member whose first call fails before then forgets the segment, and
   * so does every other (none got past this point: a failure that is not a setup's needs it
   * passed), so the next call sets a new one up.
   */
  private async confirm(): Promise<void> {
    const { segment } = this;
    await this.waitFor((this.rank + 1) % this.size, () => segment.mapped >= this.size - 1, true);
    segment.confirmed = true;
    segment.checkReading();
    if (this.rank === 0) segment.unlink();
  }

  /**
   * Waits for `member` to enter this call, and checks its signature against this member's. A
   * member that went past the call without it failed the call's operation before: the operation's
   * abort is on its way, and fails this wait.
   */
  async arrival(member: number): Promise<void> {
    if (this.checked[member] === true) return;
    const { segment, id } = this;
    await this.waitFor(member, () => segment.arrived(member, id));
    const theirs = segment.signatureOf(member, id);
    if (theirs === undefined) {
      await this.waitFor(member, () => false);
      return;
    }
    const mismatch = signatureMismatch(`${this.context.operation}: shared memory with rank ${this.context.groupRankOf(member)} of group '${this.call.route.name}' (rank ${this.call.groupRank} here)`, this.call.signature, theirs);
    if (mismatch !== undefined) throw mismatch;
    this.checked[member] = true;
  }

  /** Waits until `member` has published step `step` (1..14) of round `round` of this call (and checks its signature first). */
  async published(member: number, round: number, step: number): Promise<void> {
    await this.arrival(member);
    const { segment, id } = this;
    const at = inCall(round, step);
    await this.waitFor(member, () => segment.published(member, id, at));
  }

  /** Before writing this member's chunk of `round`: waits until every member is done with what it last wrote into that half. Returns the chunk's offset. */
  async claim(round: number): Promise<number> {
    const { segment, id } = this;
    const previous = segment.claimHalf(id, round);
    for (let member = 0; previous !== undefined && member < this.size; member += 1) {
      if (member !== this.rank) await this.waitFor(member, () => segment.consumed(member, previous.call, previous.at));
    }
    return segment.chunkOffset(this.rank, id, round);
  }

  /** Waits until every other member is done reading round `round` (what it read from this member's memory may change then). */
  async readByAll(round: number): Promise<void> {
    const { segment, id } = this;
    const at = inCall(round, LAST_STEP);
    for (let member = 0; member < this.size; member += 1) {
      if (member !== this.rank) await this.waitFor(member, () => segment.consumed(member, id, at));
    }
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
  const segment = await segmentOf(context);
  const call = new SegmentCall(segment, context);
  try {
    await call.begin();
    const result = await body(call);
    await call.finish();
    return result;
  } catch (error) {
    // A lost member breaks the group: every member's engine fails its waits, naming the lost process.
    if (!segment.confirmed) segment.forget();
    else if (!(error instanceof PeerLostError) && segment.calls[0] === call.id) segment.abandon(call.id, error as Error, call.call.groupRank);
    throw error;
  }
}
