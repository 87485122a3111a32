/**
 * The in-process device: members in the same process. Delivery copies the packet's bodies, so a
 * receiver gets its own copy (CCJ's semantics) and the sender may reuse its buffers at once.
 */
import type { Device, Envelope, Packet, SendOptions } from '../device.js';
import { MatchingQueues } from '../matching.js';
import { Request } from '../request.js';
import { copyPacket } from '../packet.js';

interface LocalArrival {
  readonly packet: Packet;
  /** Completes a synchronous send once the message is matched. */
  readonly matched: Request<void> | undefined;
}

export class LocalDevice implements Device {
  readonly name = 'local';
  private readonly queues = new MatchingQueues<LocalArrival, Request<Packet>>();

  isend(_processRank: number, envelope: Envelope, packet: Packet, options: SendOptions): Request<void> {
    const copy = copyPacket(packet);
    const matched = options.synchronous ? new Request<void>() : undefined;
    const receive = this.queues.arrive(envelope, { packet: copy, matched });
    if (receive) {
      receive.complete(copy);
      return Request.completed<void>(undefined);
    }
    return matched ?? Request.completed<void>(undefined);
  }

  irecv(_processRank: number, envelope: Envelope): Request<Packet> {
    const receive = new Request<Packet>();
    const arrival = this.queues.post(envelope, receive);
    if (arrival) {
      arrival.matched?.complete(undefined);
      receive.complete(arrival.packet);
    }
    return receive;
  }

  iprobe(_processRank: number, envelope: Envelope): boolean {
    return this.queues.probe(envelope);
  }

  /** Members in one process cannot lose each other. */
  markLost(): void {}

  unreceived(): Map<string, number> {
    return this.queues.unreceived();
  }

  async close(): Promise<void> {}
}
