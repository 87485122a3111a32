/**
 * The pluggable object serializer (docs/API.md, "Serialization"). `encode` may return several parts:
 * part 0 is the serialized object graph, the others are out-of-band buffers (large typed arrays
 * found inside the value), which travel beside the graph as raw bytes and are handed back to
 * `decode` in the same order.
 */
export interface Serializer {
  /** Short name, carried in every message so that a mismatch between processes is caught. */
  readonly name: string;
  /**
   * The bytes of `value`: one array, or the graph followed by out-of-band parts.
   *
   * @throws {@link SerializationError} for what it cannot encode.
   */
  encode(value: unknown): Uint8Array | Uint8Array[];
  /**
   * The value `encode` was given, from its part 0 and the other parts in order.
   *
   * @throws {@link SerializationError} for bytes it cannot decode.
   */
  decode(bytes: Uint8Array, outOfBand?: readonly Uint8Array[]): unknown;
}
