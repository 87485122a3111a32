/**
 * What the master's listeners hear of failures. Apart from src/runtime/failure-policy.ts, which
 * tells them, so that the published typings of these events reach none of the runtime's
 * Node-specific modules (a project without @types/node type-checks against them).
 */

/** A peer endpoint was lost: its process died, its connection closed without close(), or its process's heartbeats stopped for timeoutMs. */
export interface PeerLostEvent {
  /** The lost endpoint's process. */
  readonly process: number;
  /** The lost endpoint ({@link ColGroupMaster.rank} there). */
  readonly endpoint: number;
  /** Why it counts as lost, for people. */
  readonly reason: string;
}

/** The job is being aborted: an exception escaped a member's run() at `origin`, here or elsewhere. */
export interface AbortEvent {
  /** What failed, naming the member. */
  readonly message: string;
  /** The endpoint whose member failed. */
  readonly origin: number;
}

/** Who hears of failures: the master's listeners. */
export interface FailureListeners {
  peerLost(event: PeerLostEvent): void;
  abort(event: AbortEvent): void;
}
