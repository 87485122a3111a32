/**
 * What one endpoint keeps about one peer endpoint: the device that reaches it, the flow-control
 * credit both ways, the protocol steps still open with it, and whether it is gone (lost or closed).
 * The engine runs the protocol on it; losses.ts marks it gone and empties it.
 */
import { Queue } from '../base/queue.js';
import type { Receive, SendCall } from './calls.js';
import type { Device } from '../../transport/device.js';

export class Link {
  /** Bytes this endpoint may still send without the peer matching anything. */
  credit: number;
  /** Credit this endpoint owes the peer for messages it matched. */
  owed = 0;
  /** Bytes the peer's unmatched messages hold here. */
  unmatchedBytes = 0;
  failure: Error | undefined;
  /** Its loss is confirmed: its calls failed and its groups are broken. */
  lost = false;
  /** The peer said goodbye (or this endpoint is closing): once gone, it is not lost, and its groups stay whole. */
  goodbye = false;
  /** Sends waiting for credit, in order. */
  readonly blocked = new Queue<SendCall>();
  draining = false;
  readonly awaitingAck = new Map<number, SendCall>();
  readonly awaitingClearance = new Map<number, SendCall>();
  readonly awaitingData = new Map<number, Receive>();
  /**
   * Settles once the last send to the peer whose settling was put off (to the next turn of the
   * event loop, see ProgressEngine.mustYield) has settled, never rejecting; undefined once it did.
   * Sends after it settle after it, so that sends to one peer settle in call order.
   */
  sendsSettled: Promise<void> | undefined;
  /** Messages this endpoint sent the peer, and their bytes (MessageCounts). */
  messagesSent = 0;
  bytesSent = 0;

  /** Largest eager message, and the room eager messages leave for rendezvous records: a quarter of the window. */
  readonly eagerRoom: number;

  constructor(
    readonly peer: number,
    readonly device: Device,
    readonly window: number,
    readonly otherHost: boolean,
  ) {
    this.credit = window;
    this.eagerRoom = window / 4;
  }
}
