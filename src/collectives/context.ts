/**
 * What an algorithm sees of one collective call: its rank and the group's size, and sends and
 * receives that carry this call's tag and operation signature (CCJ 3.1's per-group counter).
 */
import type { ColGroup } from '../../groups/col-group.js';
import type { MemberCore } from '../member.js';
import type { Request } from '../../transport/request.js';

export class CollectiveContext {
  readonly size: number;

  constructor(
    private readonly core: MemberCore,
    readonly group: ColGroup,
    readonly rank: number,
    /** The member-facing operation, e.g. 'allReduce', for error messages. */
    readonly operation: string,
    private readonly tag: number,
    private readonly signature: Uint8Array,
  ) {
    this.size = group.size();
  }

  /** Sends and waits until `value`'s buffers may be reused (the receiver need not have it yet). */
  send(destination: number, value: unknown): Promise<void> {
    return this.core.send(this.group, this.rank, destination, this.tag, value, 'borrowed', `${this.operation}: send to`, this.signature);
  }

  /** Starts a send; for algorithms that post several at once. */
  isend(destination: number, value: unknown): Request<void> {
    return this.core.isend(this.group, this.rank, destination, this.tag, value, 'borrowed', this.signature);
  }

  receive<T>(source: number): Promise<T> {
    return this.core.receive<T>(this.group, this.rank, source, this.tag, `${this.operation}: receive from`, this.signature);
  }
}
