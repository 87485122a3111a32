/** Counters of the shared-memory device, which a test or a benchmark may read (ShmDevice.stats). */
export interface ShmStats {
  /** Times a frame found its ring full and waited at this sender. */
  ringFull: number;
  /** Bytes of frames waiting at this sender for ring room, now, and the most that ever were. */
  queuedBytes: number;
  queuedHighWater: number;
  /** Frames this sender had the receiver read from its memory (single copy). */
  singleCopies: number;
  /** Chunks of such frames this sender copied itself, helping its receiver. */
  helpedChunks: number;
  /** Times a sender was late with a chunk it claimed, and this receiver copied the whole body itself. */
  lateSenders: number;
  /** Times the safety timer found this endpoint asleep with output waiting for a peer, and polled. */
  safetyWakes: number;
  /** Bodies this receiver read from a sender's memory straight into the buffer its receive gave (`into`). */
  readIntoBuffers: number;
}
