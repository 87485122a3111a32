/**
 * The coordinator's control connection: length-prefixed msgpack messages. Group formation and
 * job control are rare and small, so this favours plainness over speed.
 */
import type { Socket } from 'node:net';
import { decode, encode } from '@msgpack/msgpack';
import type { EndpointInfo } from '../src/engine/endpoints.js';

/** A member: the endpoint it lives in and its place among that endpoint's members. */
export type MemberAddress = readonly [endpointRank: number, localId: number];

/** What an endpoint tells the coordinator about itself. */
export interface Hello {
  readonly processRank: number;
  readonly processCount: number;
  readonly threadRank: number;
  readonly threadCount: number;
  readonly jobKey: string;
  readonly host: string;
  readonly hostname: string;
  readonly pid: number;
  readonly receiveWindow: number;
  readonly addresses: Record<string, unknown>;
}

export type ControlMessage =
  | ({ type: 'hello' } & Hello)
  | { type: 'refused'; message: string }
  | { type: 'world'; jobId: string; processCount: number; threadCount: number; endpoints: EndpointInfo[] }
  | { type: 'join'; group: string; localId: number; order: number; key: number[] }
  | { type: 'get'; group: string; size: number; timeoutMs: number }
  | { type: 'group'; group: string; context: number; members: MemberAddress[] }
  | { type: 'groupError'; group: string; timeout: boolean; message: string }
  | { type: 'active'; group: string }
  | { type: 'lost'; endpointRank: number; message: string }
  | { type: 'abort'; endpointRank: number; message: string }
  | { type: 'dump'; endpointRank: number }
  | { type: 'bye' };

export class ControlChannel {
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    readonly socket: Socket,
    onMessage: (message: ControlMessage) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4) {
        const length = this.pending.readUInt32LE(0);
        if (this.pending.length < 4 + length) break;
        const body = this.pending.subarray(4, 4 + length);
        this.pending = this.pending.subarray(4 + length);
        onMessage(decode(body) as ControlMessage);
      }
    });
  }

  send(message: ControlMessage): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    const body = encode(message);
    const frame = Buffer.allocUnsafe(4 + body.byteLength);
    frame.writeUInt32LE(body.byteLength, 0);
    frame.set(body, 4);
    this.socket.write(frame);
  }
}
