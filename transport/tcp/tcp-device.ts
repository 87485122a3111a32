/**
 * The TCP device: one connection per pair of endpoints it serves, carrying the engine's frames in
 * order. The endpoint with the higher rank dials, the lower one accepts; every connection first
 * passes the job's challenge–response (src/security/handshake.ts), then its first frame says who
 * dialled and for which job. Everything else (matching, protocols, flow control) is the engine's.
 * With `tls` on, each connection is TLS first (src/security/tls.ts) and all of the above runs
 * inside it.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Device, DeviceHost, DevicePeer, Releasable } from '../device.js';
import type { Frame } from '../frame.js';
import { COALESCE_BYTES, Connection } from './connection.js';
import type { ConnectionHandler } from './connection.js';
import { ConfigError, FrameError, TimeoutError, TransportError } from '../../src/base/errors.js';
import { Gatekeeper, authenticate, handshakeDeadline } from '../../src/security/handshake.js';
import { describeEncryption, tlsClientOptions, tlsFailure, tlsServerOptions } from '../../src/security/tls.js';

/** How long a dropped peer may take to read what was written to it (a goodbye that says why) and close. */
const DISCONNECT_GRACE_MS = 1000;

/** Connections still authenticating at once; a flood beyond it drops the oldest. */
const MAX_UNAUTHENTICATED = 256;

export interface TcpDeviceOptions {
  readonly rank: number;
  /** Address to listen on: 127.0.0.1 for single-host jobs, an interface address otherwise. */
  readonly listenHost: string;
  /** Bound for connecting to the peers; the keep-alive probe interval for dead hosts. */
  readonly timeoutMs: number;
  /** Connections presenting another job's id are refused (ports get reused between jobs). */
  readonly jobId: () => string | undefined;
  /** The job secret every connection proves it knows. */
  readonly secret: Buffer;
  /** Encrypt every connection with TLS keyed by the secret. */
  readonly tls: boolean;
  /** Check every frame with a CRC32C (checked-blocks.ts); every endpoint of the job must agree. */
  readonly checksum?: boolean;
  /** Told once per encrypted link (CCJS_TRACE). */
  readonly trace?: ((line: string) => void) | undefined;
}

/** The record an endpoint publishes for this device. */
export interface TcpAddress {
  readonly host: string;
  readonly port: number;
}

export function parseTcpAddress(record: unknown, rank: number): TcpAddress {
  const { host, port } = (record ?? {}) as Partial<TcpAddress>;
  if (typeof host !== 'string' || typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConfigError(`endpoint ${rank} published no usable tcp address (${JSON.stringify(record)})`);
  }
  return { host, port };
}

/** A connection that said hello before this endpoint was ready to check it, with what followed. */
interface EarlyConnection {
  readonly rank: number;
  readonly jobId: string;
  readonly connection: Connection;
  readonly frames: Frame[];
}

export class TcpDevice implements Device {
  readonly name = 'tcp';
  readonly copyLimit = COALESCE_BYTES - 1024;
  private readonly connections = new Map<number, Connection>();
  private host: DeviceHost | undefined;
  /** Ranks this device expects to accept from. */
  private expected = new Set<number>();
  private early: EarlyConnection[] = [];
  private linkEstablished: () => void = () => {};
  private closing = false;
  private readonly gatekeeper: Gatekeeper;

  private constructor(
    private readonly options: TcpDeviceOptions,
    private readonly server: net.Server,
    readonly address: TcpAddress,
  ) {
    const what = `the tcp device of endpoint ${options.rank}`;
    this.gatekeeper = new Gatekeeper({ what, secret: options.secret, deadlineMs: handshakeDeadline(options.timeoutMs), maxPending: MAX_UNAUTHENTICATED, admit: (socket) => this.accept(socket) });
    if (server instanceof tls.Server) {
      server.on('secureConnection', (socket: tls.TLSSocket) => this.gatekeeper.accept(socket));
      server.on('tlsClientError', (error: Error, socket: tls.TLSSocket) => {
        process.stderr.write(`ccjs: ${what} refused a connection from ${socket.remoteAddress ?? 'an unknown address'}:${socket.remotePort ?? '?'}: TLS handshake failed (${tlsFailure(error)})\n`);
      });
    } else {
      server.on('connection', (socket) => this.gatekeeper.accept(socket));
    }
  }

  /** Starts listening; peers learn `address` through the coordinator, then `connect` runs. */
  static async listen(options: TcpDeviceOptions): Promise<TcpDevice> {
    const server = options.tls
      ? tls.createServer({ ...tlsServerOptions(options.secret, handshakeDeadline(options.timeoutMs)), noDelay: true })
      : net.createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new TransportError(`tcp device cannot listen on ${options.listenHost}: ${error.message}`, { cause: error })));
      server.listen(0, options.listenHost, () => resolve());
    });
    const port = (server.address() as net.AddressInfo).port;
    return new TcpDevice(options, server, { host: options.listenHost, port });
  }

  /** Dials the peers of lower rank, accepts the others; rejects with TimeoutError naming those missing. */
  async connect(peers: readonly DevicePeer[], host: DeviceHost): Promise<void> {
    this.host = host;
    const { rank, timeoutMs } = this.options;
    this.expected = new Set(peers.filter((peer) => peer.rank > rank).map((peer) => peer.rank));
    if (peers.length === 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const missing = peers.filter((peer) => !this.connections.has(peer.rank)).map((peer) => peer.rank);
        reject(new TimeoutError(`tcp device of endpoint ${rank}: no connection with endpoint(s) ${missing.join(', ')} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.linkEstablished = () => {
        if (this.connections.size === peers.length) {
          clearTimeout(timer);
          resolve();
        }
      };
      for (const early of this.early) this.admit(early);
      this.early = [];
      for (const peer of peers) {
        if (peer.rank >= rank) continue;
        this.dial(peer.rank, parseTcpAddress(peer.address, peer.rank)).then(this.linkEstablished, (error: Error) => {
          clearTimeout(timer);
          reject(error);
        });
      }
    });
  }

  send(peer: number, frame: Frame, releasable: Releasable | undefined): boolean {
    const connection = this.connections.get(peer);
    if (connection === undefined) throw new TransportError(`tcp device of endpoint ${this.options.rank}: no connection to endpoint ${peer}`);
    return connection.send(frame, releasable);
  }

  disconnect(peer: number): void {
    this.connections.get(peer)?.endSoon(DISCONNECT_GRACE_MS);
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.connections.values()].map((connection) => connection.end()));
    for (const early of this.early) early.connection.socket.destroy();
    this.gatekeeper.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The TLS protocol and cipher of the link to `peer`, or undefined when it is not encrypted. */
  encryption(peer: number): string | undefined {
    const socket = this.connections.get(peer)?.socket;
    return socket instanceof tls.TLSSocket ? describeEncryption(socket) : undefined;
  }

  private dial(rank: number, address: TcpAddress): Promise<void> {
    return new Promise((resolve, reject) => {
      const { host, port } = address;
      // Nagle's algorithm off from the start: the TLS handshake's small writes would meet delayed ACKs (40 ms).
      const socket = this.options.tls
        ? tls.connect({ ...tlsClientOptions(this.options.secret), host, port }).setNoDelay(true)
        : net.connect({ host, port, noDelay: true });
      const where = `endpoint ${rank} at ${host}:${port}`;
      socket.once('error', (error) => reject(new TransportError(`tcp device: cannot connect to ${where}: ${error.message}`, { cause: error })));
      socket.once(this.options.tls ? 'secureConnect' : 'connect', () => {
        this.tune(socket);
        authenticate(socket, this.options.secret, 'client', handshakeDeadline(this.options.timeoutMs)).then(
          () => {
            const connection = new Connection(socket, this.handlerFor(rank), this.options.checksum);
            connection.hello(this.options.rank, Buffer.from(this.options.jobId() ?? ''));
            this.connections.set(rank, connection);
            this.traceEncryption(rank);
            resolve();
          },
          (error: Error) => reject(new TransportError(`tcp device: ${where} did not authenticate: ${error.message}`, { cause: error })),
        );
      });
    });
  }

  /**
   * An authenticated incoming connection says who it is in its first frame. A peer may learn the world, connect
   * and even send before this endpoint has: such a connection and its frames wait until `connect`.
   */
  private accept(socket: net.Socket): void {
    this.tune(socket);
    let early: EarlyConnection | undefined;
    const connection: Connection = new Connection(socket, {
      frame: (frame) => {
        if (early === undefined) socket.destroy();
        else early.frames.push(frame);
      },
      hello: (rank, payload) => {
        if (early !== undefined) {
          socket.destroy();
          return;
        }
        early = { rank, jobId: payload.toString(), connection, frames: [] };
        if (this.host === undefined) this.early.push(early);
        else this.admit(early);
      },
      closed: () => {},
      refused: () => socket.destroy(),
    }, this.options.checksum);
  }

  private admit(early: EarlyConnection): void {
    const { rank, connection } = early;
    const valid = early.jobId === this.options.jobId() && this.expected.has(rank) && !this.connections.has(rank);
    if (!valid) {
      connection.socket.destroy();
      return;
    }
    this.connections.set(rank, connection);
    this.traceEncryption(rank);
    const handler = this.handlerFor(rank);
    connection.setHandler(handler);
    for (const frame of early.frames) handler.frame(frame);
    this.linkEstablished();
  }

  private traceEncryption(peer: number): void {
    const encryption = this.encryption(peer);
    if (encryption !== undefined) this.options.trace?.(`ccjs trace: tcp endpoint ${this.options.rank} ↔ endpoint ${peer}: ${encryption}`);
  }

  private tune(socket: net.Socket): void {
    socket.setNoDelay(true);
    // The kernel probes an idle peer, so a dead host is found even while this endpoint computes.
    socket.setKeepAlive(true, Math.max(1000, Math.floor(this.options.timeoutMs / 2)));
  }

  private handlerFor(rank: number): ConnectionHandler {
    return {
      frame: (frame) => this.host?.deliver(rank, frame),
      hello: () => this.host?.refused(rank, new FrameError('type', 'a second hello')),
      refused: (error) => this.host?.refused(rank, error),
      closed: (error) => {
        if (this.connections.get(rank) === undefined) return;
        this.host?.lost(rank, error ?? new TransportError(this.closing ? 'connection closed' : 'connection closed without close()'));
      },
    };
  }
}
