import type { Packet } from './device.js';

/**
 * Copies the head and every body into its own fresh ArrayBuffer, so the copy outlives the
 * sender's buffers. (`new Uint8Array(view)` copies; `Buffer#slice` would not.)
 */
export function copyPacket(packet: Packet): Packet {
  return { head: new Uint8Array(packet.head), bodies: packet.bodies.map((body) => new Uint8Array(body)) };
}

/** Head plus bodies in bytes. Plain number additions: exact far beyond 2^32 (up to 2^53). */
export function packetByteLength(packet: Packet): number {
  let total = packet.head.byteLength;
  for (const body of packet.bodies) total += body.byteLength;
  return total;
}
