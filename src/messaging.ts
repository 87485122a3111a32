/**
 * The messaging layer between members and devices: turns values into packets and back, and
 * addresses them by group context and ranks (CCJ 3.1). Tag 0 is point-to-point traffic; each
 * collective operation of a group uses its own tag, the group's operation counter.
 */
import type { ColGroup } from '../groups/col-group.js';
import type { Transport } from '../transport/transport.js';
import type { Request } from '../transport/request.js';
import type { Envelope, Packet } from '../transport/device.js';
import type { Serializer } from './serialization/serializer.js';
import { decodeMessage, encodeMessage } from './serialization/message.js';

export const POINT_TO_POINT_TAG = 0;

/**
 * - 'captured': the value is captured (encoded, and copied where the device would keep a
 *   reference) before the request completes; the request never waits for the receiver.
 * - 'synchronous': completes once the receiver has matched the message.
 * - 'borrowed': completes once the value's buffers may be reused (MPI_Isend); for collectives,
 *   which wait for their requests anyway and so save the copy.
 */
export type SendMode = 'captured' | 'synchronous' | 'borrowed';

export class Messenger {
  constructor(
    readonly transport: Transport,
    readonly serializer: Serializer,
  ) {}

  /** Starts sending `value` to rank `destination` of `group` (see SendMode). */
  isend(group: ColGroup, source: number, destination: number, tag: number, value: unknown, mode: SendMode): Request<void> {
    const envelope: Envelope = { context: group.context, source, destination, tag };
    const packet = encodeMessage(value, this.serializer);
    const options = { synchronous: mode === 'synchronous', callerReusesBuffers: mode === 'captured' };
    return this.transport.isend(group.processOf(destination), envelope, packet, options);
  }

  irecv(group: ColGroup, destination: number, source: number, tag: number): Request<Packet> {
    return this.transport.irecv(group.processOf(source), { context: group.context, source, destination, tag });
  }

  decode<T>(packet: Packet): T {
    return decodeMessage(packet, this.serializer) as T;
  }
}
