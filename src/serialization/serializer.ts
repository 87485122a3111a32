/**
 * The pluggable object serializer (API.md "Serialization"). `encode` may return several parts:
 * part 0 is the serialized object graph, the others are out-of-band buffers (large typed arrays
 * found inside the value), which travel beside the graph as raw bytes and are handed back to
 * `decode` in the same order.
 */
export interface Serializer {
  /** Short name, carried in every message so that a mismatch between processes is caught. */
  readonly name: string;
  encode(value: unknown): Uint8Array | Uint8Array[];
  decode(bytes: Uint8Array, outOfBand?: readonly Uint8Array[]): unknown;
}
