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
import type { FrameError } from '../src/base/errors.js';

/** The devices: in-process (`local`), `tcp`, shared memory (`shm`) and `ucx` (InfiniBand, RoCE, ...). */
export type DeviceName = 'local' | 'tcp' | 'shm' | 'ucx';

/** What the engine gives a device: where arriving frames and failures go, and what a device must ask of it. */
export interface DeviceHost {
  /** A frame from endpoint `peer` arrived; the engine owns it (and its bodies) from now on. */
  deliver(peer: number, frame: Frame): void;
  /** The link to `peer` failed (closed without goodbye, reset, timed out). */
  lost(peer: number, error: Error): void;
  /**
   * `peer` sent bytes that are no frame of ours, or a frame that cannot be right (`error` says
   * what): the peer is at fault, not the link. The engine tells it so on the link, which must
   * still carry frames to it, then disconnects it.
   */
  refused(peer: number, error: FrameError): void;
  /**
   * For a device that reads a frame's bodies itself before delivering it (shm's single copy, UCX's
   * deferred bodies): memory its receive wants its one binary body (of `format` below 256, `bytes`
   * long) read into, if any. The device must deliver the frame before anything else runs.
   */
  destinationFor?(peer: number, frame: Frame, format: number, bytes: number): Uint8Array | undefined;
  /**
   * Whether a receive may want the body of the Eager frame `frame` (one binary value,
   * carriesOneBinary) in a buffer of its own: a point-to-point message's, never a collective's. A
   * device that can hold such a body back until its receiver says where (UCX) holds only these.
   * Absent: any such frame's.
   */
  mayReceiveInto?(frame: Frame): boolean;
  /**
   * Whether the decoder of messages of `format` copies every binary value it returns and keeps no
   * byte of the body (the built-in serializers): a small body of it may then be read into memory
   * shared with other buffers (Node's pool, see memory-frames.ts). Absent: of no format.
   */
  mayPoolBodies?(format: number): boolean;
  /**
   * Whether this thread spins on its polling devices while its calls wait (it has a core of its
   * own): a device may then spend its polls on work that saves its peer time (shm's share of a
   * copy). Absent: it does not.
   */
  spins?(): boolean;
  /** A doorbell (an event fd) of a polling device rang for this thread: counted (ProgressEngine's wakeUps). */
  wokenUp?(): void;
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

/**
 * The polling contract of a device whose frames move only when it is polled (shm, ucx). The engine
 * registers it with its thread's progress engine (src/engine/progress.ts) once it connected a peer,
 * and until it closes: a call that waits polls it (spinning), then lets it sleep. Asleep, the
 * device wakes itself (a doorbell, an event fd) and moves what arrived.
 */
export interface PollingDevice {
  /** Moves what arrived into the engine and what waits to go out; returns how much moved (0: nothing did). */
  progress(): number;
  /** Called after a spin that found nothing: arm the doorbell, so that a sender wakes this thread. */
  sleep?(): void;
}

export interface Device extends Partial<PollingDevice> {
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
  /** Drops the link to `peer`, which was lost. */
  disconnect(peer: number): void;
  /** What the device holds and waits for, one line, for the watchdog's dump of a job that hangs. */
  describe?(): string;
  /** Flushes what was sent, closes every link and releases sockets, memory and handles. */
  close(): Promise<void>;
}

/** Whether `device` must be polled (it implements PollingDevice). */
export function polls(device: Device): device is Device & PollingDevice {
  return device.progress !== undefined;
}
