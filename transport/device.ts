/**
 * The device interface: a device only moves frames between endpoints, like a BTL under Open MPI's
 * PML or a transport under Gloo's pairs. Matching, ordering, the eager and rendezvous protocols,
 * flow control and progress are the engine's (src/engine/), written once for every device; a new
 * device implements this interface and touches nothing above it.
 *
 * A device is created before the job's endpoints know each other and publishes an address record
 * (through the coordinator); once the world is known, the engine asks it to connect the peers the
 * device table gave it. Frames to one peer arrive in the order they were sent.
 */
import type { Frame } from './frame.js';

/** The devices: in-process (`local`), `tcp`, shared memory (`shm`) and `ucx` (InfiniBand, RoCE, ...). */
export type DeviceName = 'local' | 'tcp' | 'shm' | 'ucx';

/** What the engine gives a device: where arriving frames and failures go. */
export interface DeviceHost {
  /** A frame from endpoint `peer` arrived; the engine owns it (and its bodies) from now on. */
  deliver(peer: number, frame: Frame): void;
  /** The link to `peer` failed (closed without goodbye, reset, timed out). */
  lost(peer: number, error: Error): void;
  /**
   * For a device that reads a frame's bodies itself before delivering it (shm's single copy, UCX's
   * deferred bodies): memory its receive wants its one binary body (of `format` below 256, `bytes`
   * long) read into, if any. The device must deliver the frame before anything else runs.
   */
  destinationFor?(peer: number, frame: Frame, format: number, bytes: number): Uint8Array | undefined;
}

/** Told by a device once the bodies of a frame it kept may be reused. */
export interface Releasable {
  released(): void;
}

/** A peer endpoint a device serves, with the record it published for this device. */
export interface DevicePeer {
  readonly rank: number;
  readonly address: unknown;
}

export interface Device {
  readonly name: DeviceName;
  /** What peers need to reach this endpoint through this device (published through the coordinator), or undefined. */
  readonly address: unknown;
  /**
   * Frames up to this many bytes are copied by `send` before it returns; for larger ones the
   * engine passes a Releasable and keeps the bodies unchanged until it is told.
   */
  readonly copyLimit: number;
  /** Opens links to `peers`; resolves once every one of them is up. */
  connect(peers: readonly DevicePeer[], host: DeviceHost): Promise<void>;
  /**
   * Sends `frame` to `peer`; the device owns the frame object from now on. Returns true when the
   * bodies may be reused at once; otherwise calls `releasable.released()` once they may. Without a
   * releasable (frames within `copyLimit`, control frames) it must return true. `lend` says that
   * whoever waits for the release may wait until the peer has read the bodies: a device that can
   * let the peer copy them from this endpoint's memory (lendsTo) may then do so.
   */
  send(peer: number, frame: Frame, releasable: Releasable | undefined, lend?: boolean): boolean;
  /** True when frames to `peer` sent with `lend` may stay here until the peer copies them from this endpoint's memory. */
  lendsTo?(peer: number): boolean;
  /**
   * For a device whose transport places a body before the frame is read (UCX's rendezvous): the
   * Data frame `id` from `peer`, about to be cleared, carries one body of `memory`'s length, which
   * its receive wants in `memory`. (A device that reads bodies itself asks DeviceHost.destinationFor instead.)
   */
  receiveInto?(peer: number, id: number, memory: Uint8Array): void;
  /** Polling devices: moves what arrived into the engine and returns how many frames that was. */
  progress?(): number;
  /** Drops the link to `peer`, which was lost. */
  disconnect(peer: number): void;
  /** What the device holds and waits for, one line, for the watchdog's dump of a job that hangs. */
  describe?(): string;
  /** Flushes what was sent, closes every link and releases sockets, memory and handles. */
  close(): Promise<void>;
}
