/**
 * The in-process device: members of one endpoint. It delivers a frame at once, with copies of its
 * bodies (a binary value is copied as its own type, which keeps small typed arrays on V8's heap),
 * so the receiver owns what it gets and the sender may reuse its buffers when `send` returns.
 */
import type { Device, DeviceHost, DevicePeer } from '../device.js';
import { copyBodies } from '../frame.js';
import type { Frame } from '../frame.js';

export class LocalDevice implements Device {
  readonly name = 'local';
  readonly address = undefined;
  readonly copyLimit = Infinity;
  private host: DeviceHost | undefined;

  async connect(_peers: readonly DevicePeer[], host: DeviceHost): Promise<void> {
    this.host = host;
  }

  send(peer: number, frame: Frame): boolean {
    copyBodies(frame);
    this.host?.deliver(peer, frame);
    return true;
  }

  /** Members of one endpoint cannot lose each other. */
  disconnect(): void {}

  async close(): Promise<void> {}
}
