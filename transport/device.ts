/**
 * The device layer, after F-MPJ's xxdev (seed 002, 4.1): non-blocking isend/irecv with requests,
 * probe, and messages identified by (context, source, destination, tag). A device moves opaque
 * packets between processes; what the bytes mean is the messaging layer's business.
 *
 * A device progresses either from events (sockets call back into it) or by polling: a device
 * that polls exposes `progress()`, and `Request.wait()` spins on it for a bounded time before it
 * blocks (seed 002, Figure 2), because on this kind of machine a blocked wake-up costs ~20 µs
 * while a spinning hop costs ~0.1 µs.
 */
import type { Request } from './request.js';

/** A message as devices see it: a small head plus raw body parts, each its own aligned buffer. */
export interface Packet {
  readonly head: Uint8Array;
  readonly bodies: readonly Uint8Array[];
}

/**
 * Where a message belongs. `context` is the group's job-wide id, `source` and `destination` are
 * ranks in that group, `tag` separates point-to-point traffic from each collective operation.
 */
export interface Envelope {
  readonly context: number;
  readonly source: number;
  readonly destination: number;
  readonly tag: number;
}

export interface SendOptions {
  /** Complete only once the receiver has matched the message (sendSync, MPI_Ssend). */
  readonly synchronous: boolean;
  /** The caller will not wait for the request before reusing its buffers: copy what is kept. */
  readonly callerReusesBuffers: boolean;
}

/** Called by a device when a peer process is lost, so the layers above can fail fast. */
export type PeerLostListener = (processRank: number, error: Error) => void;

export interface Device {
  readonly name: string;
  /**
   * Starts sending `packet` to a member in process `processRank`. The request completes when the
   * packet's buffers may be reused (and, if synchronous, when the receiver matched it).
   */
  isend(processRank: number, envelope: Envelope, packet: Packet, options: SendOptions): Request<void>;
  /** Posts a receive for a message from a member in process `processRank` matching `envelope`. */
  irecv(processRank: number, envelope: Envelope): Request<Packet>;
  /** True when a message matching `envelope` has arrived and is not yet received. */
  iprobe(processRank: number, envelope: Envelope): boolean;
  /** Polling devices: advance communication, returning the number of events handled. */
  progress?(): number;
  /** Fails every pending request involving `processRank` and every later one. */
  markLost(processRank: number, error: Error): void;
  /** Counts of messages that arrived but were never received, by envelope (reported at close). */
  unreceived(): Map<string, number>;
  /** Flushes outgoing data, says goodbye to peers and releases sockets, memory and threads. */
  close(): Promise<void>;
}
