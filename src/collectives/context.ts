/**
 * What an algorithm sees of one collective call: its rank and the group's size, and sends and
 * receives that carry this call's tag (CCJ 3.1's per-group counter) and signature, both fixed once
 * per call. Algorithms speak to the engine through this, never to a device.
 */
import type { ColGroup } from '../../groups/col-group.js';
import type { MemberCore } from '../member.js';
import { FLAG_COLLECTIVE } from '../engine/frame.js';
import { SendMode } from '../engine/calls.js';
import { Delivery, MemberReceive, messageFrame } from '../messages.js';
import type { Signature } from '../messages.js';

export class CollectiveContext {
  readonly size: number;
  /** How this call's sends and receives name themselves ("allReduce: send" to rank 3, ...). */
  private readonly sending: string;
  private readonly receiving: string;

  constructor(
    private readonly core: MemberCore,
    readonly group: ColGroup,
    readonly rank: number,
    /** The member-facing operation, e.g. 'allReduce', for error messages. */
    readonly operation: string,
    private readonly tag: number,
    private readonly signature: Signature,
  ) {
    this.size = group.size();
    this.sending = `${operation}: send`;
    this.receiving = `${operation}: receive`;
  }

  /** Sends and resolves once `value`'s buffers may be reused (the receiver need not have it yet). */
  send(destination: number, value: unknown): Promise<void> {
    const master = this.core.master(this.sending);
    const frame = messageFrame(master.serializer, value, FLAG_COLLECTIVE, this.group.context, this.rank, destination, this.tag, this.signature);
    return master.engine.send(this.group.route, frame, SendMode.Borrowed, this.core, this.sending);
  }

  /** MPI_Isend: starts a send for the caller to await later; a failure in the meantime is not unhandled. */
  isend(destination: number, value: unknown): Promise<void> {
    const sent = this.send(destination, value);
    sent.catch(() => undefined);
    return sent;
  }

  /** Receives from `source`, spinning on polling devices while it waits. */
  receive<T>(source: number): Promise<T> {
    return this.post(source).result<T>(true);
  }

  /**
   * MPI_Irecv: posts the receive now, for the caller to await later (possibly after other awaits);
   * it does not spin, and a failure surfaces where the promise is awaited.
   */
  postReceive<T>(source: number): Promise<T> {
    const received = this.post(source).result<T>(false);
    received.catch(() => undefined);
    return received;
  }

  /** MPI_Sendrecv: posts the receive, sends, then waits for the receive (spinning). */
  async sendReceive<T>(destination: number, value: unknown, source: number): Promise<T> {
    const receive = this.post(source);
    await this.send(destination, value);
    return receive.result<T>(true);
  }

  private post(source: number): MemberReceive {
    const master = this.core.master(this.operation);
    const receive = new MemberReceive(this.group.route, this.receiving, this.core, this.rank, source, this.tag, master.serializer, Delivery.Value, this.signature);
    master.engine.post(receive);
    return receive;
  }
}
