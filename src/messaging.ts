/**
 * The messaging layer between members and devices: turns values into packets and back, and
 * addresses them by group context and ranks (CCJ 3.1). Tag 0 is point-to-point traffic; each
 * collective operation of a group uses its own tag, the group's operation counter.
 *
 * Every packet head starts with the sender's operation signature (empty for point-to-point),
 * e.g. "broadcast(root 0) binomial": a receiver expecting another signature has found members
 * calling collectives in different orders or with different arguments, and says so instead of
 * misreading the data.
 */
import type { ColGroup } from '../groups/col-group.js';
import type { Transport } from '../transport/transport.js';
import type { Request } from '../transport/request.js';
import type { Envelope, Packet } from '../transport/device.js';
import type { Serializer } from './serialization/serializer.js';
import { decodeMessage, encodeMessage } from './serialization/message.js';
import { CollectiveMismatchError, TransportError } from './errors.js';

export const POINT_TO_POINT_TAG = 0;

/**
 * - 'captured': the value is captured (encoded, and copied where the device would keep a
 *   reference) before the request completes; the request never waits for the receiver.
 * - 'synchronous': completes once the receiver has matched the message.
 * - 'borrowed': completes once the value's buffers may be reused (MPI_Isend); for collectives,
 *   which wait for their requests anyway and so save the copy.
 */
export type SendMode = 'captured' | 'synchronous' | 'borrowed';

const NO_SIGNATURE: Uint8Array = new Uint8Array(0);
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/** The bytes of an operation signature, as carried at the front of packet heads. */
export function signatureBytes(signature: string): Uint8Array {
  const bytes = textEncoder.encode(signature);
  if (bytes.byteLength > 255) throw new RangeError(`operation signature too long: ${signature}`);
  return bytes;
}

export class Messenger {
  constructor(
    readonly transport: Transport,
    readonly serializer: Serializer,
  ) {}

  /** Starts sending `value` to rank `destination` of `group` (see SendMode). */
  isend(group: ColGroup, source: number, destination: number, tag: number, value: unknown, mode: SendMode, signature = NO_SIGNATURE): Request<void> {
    const envelope: Envelope = { context: group.context, source, destination, tag };
    const encoded = encodeMessage(value, this.serializer);
    const head = new Uint8Array(1 + signature.byteLength + encoded.head.byteLength);
    head[0] = signature.byteLength;
    head.set(signature, 1);
    head.set(encoded.head, 1 + signature.byteLength);
    const options = { synchronous: mode === 'synchronous', callerReusesBuffers: mode === 'captured' };
    return this.transport.isend(group.processOf(destination), envelope, { head, bodies: encoded.bodies }, options);
  }

  irecv(group: ColGroup, destination: number, source: number, tag: number): Request<Packet> {
    return this.transport.irecv(group.processOf(source), { context: group.context, source, destination, tag });
  }

  /** The value in `packet`; CollectiveMismatchError when it was sent under another signature. */
  decode<T>(packet: Packet, expected = NO_SIGNATURE, describe?: () => string): T {
    const { head } = packet;
    const length = head[0];
    if (length === undefined || head.byteLength < 1 + length) throw new TransportError('corrupt packet head: no operation signature');
    if (!sameBytes(head.subarray(1, 1 + length), expected)) {
      const theirs = length === 0 ? 'a point-to-point message' : textDecoder.decode(head.subarray(1, 1 + length));
      const ours = expected.byteLength === 0 ? 'a point-to-point message' : textDecoder.decode(expected);
      const sameCall = ours.split(' ')[0] === theirs.split(' ')[0];
      const advice = sameCall
        ? 'the members chose different algorithms: give every member the same configuration, and for a size-dependent broadcast or scatter table let non-roots pass an object of the root\'s size (not null), or name the algorithm in the call'
        : 'members must call collectives in the same order with the same root and reduction';
      throw new CollectiveMismatchError(`${describe?.() ?? 'receive'}: expected ${ours}, but the sender called ${theirs}; ${advice}`);
    }
    return decodeMessage({ head: head.subarray(1 + length), bodies: packet.bodies }, this.serializer) as T;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i += 1) if (a[i] !== b[i]) return false;
  return true;
}
