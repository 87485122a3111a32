/** Base of every failure ccjs reports; the class tells programs what failed, the message tells people. */
export class CCJError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Misuse of groups: joining an active group, too many members, inconsistent sizes, non-members. */
export class GroupError extends CCJError {}

/** Something did not happen within the configured `timeoutMs`. */
export class TimeoutError extends CCJError {}

/** A peer went away (connection closed or reset without `close()`); names its process and endpoint. */
export class PeerLostError extends CCJError {
  /** The lost endpoint (equal to processRank in jobs of one endpoint per process). */
  readonly endpointRank: number;

  constructor(
    message: string,
    /** The lost process. */
    readonly processRank: number,
    options?: { cause?: unknown; endpointRank?: number },
  ) {
    super(message, options);
    this.endpointRank = options?.endpointRank ?? processRank;
  }
}

/** A value could not be encoded or decoded; the message names the path inside the value. */
export class SerializationError extends CCJError {
  constructor(
    message: string,
    /** Where in the value encoding failed, such as `value.rows[3].owner` ('' when not known). */
    readonly path: string = '',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A message could not be received into the buffer a receive gave (`into`): it is not binary data,
 * or it does not fit, or its bytes are not a whole number of the buffer's elements (MPI's
 * truncation error). The message is taken all the same; the next receive gets the next one.
 */
export class ReceiveBufferError extends CCJError {}

/** A device failed in a way that is not a lost peer (bad frame, protocol version, listen error). */
export class TransportError extends CCJError {}

/** The part of a frame that was wrong: a header field, the body lengths, the checksum, or the bytes as a whole. */
export type FrameField = 'type' | 'source' | 'destination' | 'context' | 'size' | 'checksum' | 'framing';

/** Bytes from a peer that are no valid frame, or a frame whose `field` cannot be right (thrown by devices and the engine's checks). */
export class FrameError extends TransportError {
  constructor(
    /** What was wrong. */
    readonly field: FrameField,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A peer endpoint sent a frame that cannot be right (a wrong source, destination or context,
 * lengths that disagree, a checksum that does not match): the endpoint that read it dropped the
 * link and told the job, so every member counts that peer's process as lost, and it alone.
 * `processRank` and `endpointRank` name the sender, `field` what was wrong; the cause is the FrameError.
 */
export class BadFrameError extends PeerLostError {
  constructor(
    message: string,
    processRank: number,
    /** What was wrong in the frame. */
    readonly field: FrameField,
    options?: { cause?: unknown; endpointRank?: number },
  ) {
    super(message, processRank, options);
  }
}

/** A bad option, environment variable or config file entry. */
export class ConfigError extends CCJError {}

/** The job was aborted because a member elsewhere failed (seen by calls when `abortOnError` is false). */
export class AbortError extends CCJError {}

/** Members called collectives in different orders, or with different roots, reductions or algorithms; the message names both calls. */
export class CollectiveMismatchError extends CCJError {
  constructor(
    message: string,
    /** Group rank of the member that found the mismatch, when it is another one (its part of the call was abandoned here). */
    readonly failedRank?: number,
  ) {
    super(message);
  }
}

/**
 * A collective call failed at another member (the message says where and why), so this member's
 * part of it was abandoned instead of waiting for data that would never come.
 */
export class CollectiveAbortedError extends CCJError {
  constructor(
    message: string,
    /** Group rank of the member where the call failed. */
    readonly failedRank: number,
  ) {
    super(message);
  }
}
