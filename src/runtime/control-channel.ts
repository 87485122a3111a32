/**
 * The coordinator's control connection: length-prefixed msgpack messages, each checked by a
 * parser (src/runtime/control-messages.ts) before anyone uses it. Group formation and job control are
 * rare and small, so this favours plainness over speed; but what arrives is never trusted: frames
 * have a size limit, each byte is copied once (into its frame's body, allocated when the length
 * prefix is in), and a frame that cannot be decoded or checked closes this connection only.
 */
import type { Socket } from 'node:net';
import { decode, encode } from '@msgpack/msgpack';
import type { EndpointInfo } from '../engine/endpoints.js';
import { TransportError } from '../base/errors.js';

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
  readonly machine: string;
  readonly pid: number;
  readonly receiveWindow: number;
  readonly addresses: Record<string, unknown>;
}

/** What endpoints send to the coordinator. */
export type ToCoordinator =
  | ({ type: 'hello' } & Hello)
  | { type: 'join'; group: string; localId: number; order: number; key: number[] }
  | { type: 'get'; group: string; size: number; timeoutMs: number }
  | { type: 'abort'; endpointRank: number; message: string }
  | { type: 'dump'; endpointRank: number }
  /** This endpoint refused a frame of endpoint `endpointRank` (the message says what was wrong): the job must count it lost. */
  | { type: 'faulty'; endpointRank: number; message: string }
  /** The world did not form in time here: which endpoints are missing? */
  | { type: 'missing' }
  | { type: 'bye' };

/** What the coordinator sends to endpoints. */
export type FromCoordinator =
  | { type: 'refused'; message: string }
  | { type: 'world'; jobId: string; processCount: number; threadCount: number; endpoints: EndpointInfo[] }
  /** The answer to 'missing'. */
  | { type: 'missing'; message: string }
  /** The coordinator stops before the world formed (process 0 failed to start); the message says why. */
  | { type: 'gaveUp'; timeout: boolean; message: string }
  | { type: 'group'; group: string; context: number; members: MemberAddress[] }
  | { type: 'groupError'; group: string; timeout: boolean; message: string }
  /** Group `group` formed with `context` (every endpoint hears it, so that a frame of an unknown context can be judged). */
  | { type: 'active'; group: string; context: number }
  | { type: 'lost'; endpointRank: number; message: string }
  | { type: 'abort'; endpointRank: number; message: string }
  | { type: 'dump'; endpointRank: number };

export interface ControlChannelOptions<In> {
  /** Checks a decoded value; throws TransportError for anything that is not a valid message. */
  readonly parse: (value: unknown) => In;
  readonly onMessage: (message: In) => void;
  /** A frame or message was bad (or a handler failed): the connection is destroyed after this. */
  readonly onError: (error: Error) => void;
  /** Frames declaring a larger body are refused at their length prefix. */
  readonly maxFrameBytes: number;
}

const PREFIX_BYTES = 4;

export class ControlChannel<In, Out> {
  private readonly prefix = Buffer.alloc(PREFIX_BYTES);
  private prefixFilled = 0;
  /** The body being received, allocated once its length is known (so every byte is copied once). */
  private body: Buffer | undefined;
  private bodyFilled = 0;
  private failed = false;

  constructor(
    readonly socket: Socket,
    private readonly options: ControlChannelOptions<In>,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.failed) return;
      try {
        this.receive(chunk);
      } catch (error) {
        // Nothing escapes a 'data' handler: a bad peer costs its own connection, nothing more.
        this.failed = true;
        this.body = undefined;
        options.onError(error instanceof Error ? error : new TransportError(String(error)));
        socket.destroy();
      }
    });
  }

  send(message: Out): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    const body = encode(message);
    const frame = Buffer.allocUnsafe(PREFIX_BYTES + body.byteLength);
    frame.writeUInt32LE(body.byteLength, 0);
    frame.set(body, PREFIX_BYTES);
    this.socket.write(frame);
  }

  private receive(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length && !this.failed && !this.socket.destroyed) {
      if (this.body === undefined) {
        const prefixPart = Math.min(PREFIX_BYTES - this.prefixFilled, chunk.length - offset);
        chunk.copy(this.prefix, this.prefixFilled, offset, offset + prefixPart);
        this.prefixFilled += prefixPart;
        offset += prefixPart;
        if (this.prefixFilled < PREFIX_BYTES) return;
        const bodyBytes = this.prefix.readUInt32LE(0);
        if (bodyBytes > this.options.maxFrameBytes) {
          throw new TransportError(`a control frame declares ${bodyBytes} bytes, more than the limit of ${this.options.maxFrameBytes}`);
        }
        this.prefixFilled = 0;
        if (chunk.length - offset >= bodyBytes) {
          // The whole body is in this piece: read it where it is.
          this.deliver(chunk.subarray(offset, offset + bodyBytes));
          offset += bodyBytes;
          continue;
        }
        this.body = Buffer.allocUnsafe(bodyBytes);
        this.bodyFilled = 0;
      }
      const bodyPart = Math.min(this.body.length - this.bodyFilled, chunk.length - offset);
      chunk.copy(this.body, this.bodyFilled, offset, offset + bodyPart);
      this.bodyFilled += bodyPart;
      offset += bodyPart;
      if (this.bodyFilled === this.body.length) {
        const body = this.body;
        this.body = undefined;
        this.deliver(body);
      }
    }
  }

  private deliver(body: Buffer): void {
    let value: unknown;
    try {
      value = decode(body);
    } catch (error) {
      throw new TransportError(`a control frame is not valid msgpack (${(error as Error).message})`, { cause: error });
    }
    this.options.onMessage(this.options.parse(value));
  }
}
