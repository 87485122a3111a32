/**
 * Routes each pair of processes to its device: members of one process through the in-process
 * device, other processes through the configured inter-process device (seed 002's device layer
 * under the messaging layer).
 */
import type { Device, Envelope, Packet, SendOptions } from './device.js';
import type { Request } from './request.js';
import { TransportError } from '../src/errors.js';

export class Transport {
  constructor(
    readonly processRank: number,
    private readonly local: Device,
    private readonly remote: Device | undefined,
  ) {}

  device(processRank: number): Device {
    if (processRank === this.processRank) return this.local;
    if (this.remote === undefined) throw new TransportError(`no device connects process ${this.processRank} to process ${processRank}`);
    return this.remote;
  }

  isend(processRank: number, envelope: Envelope, packet: Packet, options: SendOptions): Request<void> {
    return this.device(processRank).isend(processRank, envelope, packet, options);
  }

  irecv(processRank: number, envelope: Envelope): Request<Packet> {
    return this.device(processRank).irecv(processRank, envelope);
  }

  iprobe(processRank: number, envelope: Envelope): boolean {
    return this.device(processRank).iprobe(processRank, envelope);
  }

  markLost(processRank: number, error: Error): void {
    if (processRank !== this.processRank) this.remote?.markLost(processRank, error);
  }

  /** Messages that arrived but were never received, by envelope key. */
  unreceived(): Map<string, number> {
    const counts = new Map(this.local.unreceived());
    for (const [key, count] of this.remote?.unreceived() ?? []) counts.set(key, (counts.get(key) ?? 0) + count);
    return counts;
  }

  async close(): Promise<void> {
    await Promise.all([this.local.close(), this.remote?.close()]);
  }
}
