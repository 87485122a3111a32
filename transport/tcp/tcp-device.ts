/**
 * The TCP device: one connection per pair of processes, multiplexing every member and group.
 * Small messages go eagerly; above `eagerLimit` the rendezvous protocol of seed 002 (4.3.2)
 * asks before sending, so a flood of large sends cannot exhaust the receiver's memory.
 */
import net from 'node:net';
import type { Device, Envelope, Packet, SendOptions } from '../device.js';
import { MatchingQueues } from '../matching.js';
import { Request } from '../request.js';
import { copyPacket, packetByteLength } from '../packet.js';
import { Connection } from './connection.js';
import { FLAG_SYNCHRONOUS, FrameType } from './frame.js';
import type { FrameHeader } from './frame.js';
import { PeerLostError, TimeoutError, TransportError } from '../../src/errors.js';

export interface TcpDeviceOptions {
  readonly processRank: number;
  readonly processCount: number;
  /** Address to listen on: 127.0.0.1 for single-host jobs, an interface address otherwise. */
  readonly listenHost: string;
  /** Messages up to this many bytes are sent eagerly. */
  readonly eagerLimit: number;
  /** Bound for connecting to the peers, and the keep-alive probe interval for dead hosts. */
  readonly timeoutMs: number;
}

export interface PeerAddress {
  readonly host: string;
  readonly port: number;
}

/** What the receiver keeps for a message that arrived before its receive was posted. */
type Arrival =
  | { readonly kind: 'eager'; readonly processRank: number; readonly packet: Packet; readonly ackId: number | undefined }
  | { readonly kind: 'rts'; readonly processRank: number; readonly sendId: number };

interface PostedReceive {
  readonly processRank: number;
  readonly request: Request<Packet>;
}

interface RendezvousSend {
  readonly envelope: Envelope;
  readonly packet: Packet;
  readonly request: Request<void>;
}

/** A connection that said hello before this process could check it, with what followed. */
interface EarlyHello {
  readonly processRank: number;
  readonly jobId: string;
  readonly connection: Connection;
  readonly frames: [FrameHeader, Packet | undefined][];
}

/** Per-peer protocol state. */
class Link {
  lost: Error | undefined;
  goodbye = false;
  /** Synchronous eager sends waiting for their ACK, by send id. */
  readonly awaitingAck = new Map<number, Request<void>>();
  /** Large sends waiting for clearance, by send id. */
  readonly awaitingClearance = new Map<number, RendezvousSend>();
  /** Receives that cleared a large message and wait for its data, by the peer's send id. */
  readonly awaitingData = new Map<number, Request<Packet>>();

  constructor(
    readonly processRank: number,
    readonly connection: Connection,
  ) {}
}

export class TcpDevice implements Device {
  readonly name = 'tcp';
  private readonly links = new Map<number, Link>();
  private readonly queues = new MatchingQueues<Arrival, PostedReceive>();
  private nextSendId = 1;
  /** Bytes of eager messages waiting for their receive: the memory unexpected messages hold. */
  private unexpectedBytes = 0;
  private closing = false;
  private lostListener: ((processRank: number, error: Error) => void) | undefined;
  /** Connections presenting another job's id are refused (ports get reused between jobs). */
  private jobId: string | undefined;
  /** Hellos that came before this process learnt the job id (peers may learn it first). */
  private earlyHellos: EarlyHello[] = [];
  /** Called as each link comes up, while `connect` waits for all of them. */
  private linkEstablished: () => void = () => {};

  private constructor(
    private readonly options: TcpDeviceOptions,
    private readonly server: net.Server,
    readonly address: PeerAddress,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Starts listening; peers learn `address` through the coordinator, then `connect` runs. */
  static async listen(options: TcpDeviceOptions): Promise<TcpDevice> {
    const server = net.createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new TransportError(`tcp device cannot listen on ${options.listenHost}: ${error.message}`, { cause: error })));
      server.listen(0, options.listenHost, () => resolve());
    });
    const port = (server.address() as net.AddressInfo).port;
    return new TcpDevice(options, server, { host: options.listenHost, port });
  }

  /** Calls `listener` once for each peer process lost. */
  onPeerLost(listener: (processRank: number, error: Error) => void): void {
    this.lostListener = listener;
  }

  /**
   * Connects every pair once: this process dials the lower ranks and accepts the higher ones.
   * Rejects with TimeoutError naming the peers that did not show up in time.
   */
  async connect(addresses: readonly PeerAddress[], jobId: string): Promise<void> {
    const { processRank, processCount, timeoutMs } = this.options;
    this.jobId = jobId;
    const expected = processCount - 1;
    if (expected === 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const missing = [...Array(processCount).keys()].filter((rank) => rank !== processRank && !this.links.has(rank));
        reject(new TimeoutError(`tcp device of process ${processRank}: no connection from process(es) ${missing.join(', ')} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.linkEstablished = () => {
        if (this.links.size === expected) {
          clearTimeout(timer);
          resolve();
        }
      };
      for (const hello of this.earlyHellos) this.admit(hello);
      this.earlyHellos = [];
      for (let rank = 0; rank < processRank; rank += 1) {
        this.dial(rank, addresses[rank], jobId).then(this.linkEstablished, (error: Error) => {
          clearTimeout(timer);
          reject(error);
        });
      }
    });
  }

  isend(processRank: number, envelope: Envelope, packet: Packet, options: SendOptions): Request<void> {
    const link = this.links.get(processRank);
    if (link === undefined) return Request.failed(new TransportError(`tcp device: no connection to process ${processRank}`));
    if (link.lost) return Request.failed(link.lost);
    const sendId = this.nextSendId++;
    if (packetByteLength(packet) <= this.options.eagerLimit) {
      const flags = options.synchronous ? FLAG_SYNCHRONOUS : 0;
      link.connection.sendPacket({ ...envelope, type: FrameType.Eager, flags, sendId }, packet, true);
      if (!options.synchronous) return Request.completed<void>(undefined);
      const acknowledged = new Request<void>();
      link.awaitingAck.set(sendId, acknowledged);
      return acknowledged;
    }
    const request = new Request<void>();
    // Rendezvous: keep the data until the receiver clears it. A caller that will not wait for
    // the request before touching its buffers gets its data copied now (like MPI_Bsend).
    const detached = options.callerReusesBuffers && !options.synchronous;
    const kept = detached ? copyPacket(packet) : packet;
    link.awaitingClearance.set(sendId, { envelope, packet: kept, request });
    link.connection.sendControl(control(FrameType.ReadyToSend, envelope, sendId));
    return detached ? Request.completed<void>(undefined) : request;
  }

  irecv(processRank: number, envelope: Envelope): Request<Packet> {
    const request = new Request<Packet>();
    const link = this.links.get(processRank);
    if (link === undefined) return Request.failed(new TransportError(`tcp device: no connection to process ${processRank}`));
    const arrival = this.queues.post(envelope, { processRank, request });
    if (arrival?.kind === 'eager') this.unexpectedBytes -= packetByteLength(arrival.packet);
    if (arrival) this.match(link, envelope, arrival, request);
    else if (link.lost) this.queues.removePosted((posted) => posted.request === request);
    if (link.lost && !request.done) request.fail(link.lost);
    return request;
  }

  iprobe(_processRank: number, envelope: Envelope): boolean {
    return this.queues.probe(envelope);
  }

  markLost(processRank: number, error: Error): void {
    const link = this.links.get(processRank);
    if (link === undefined || link.lost) return;
    link.lost = error;
    for (const request of link.awaitingAck.values()) request.fail(error);
    for (const send of link.awaitingClearance.values()) send.request.fail(error);
    for (const request of link.awaitingData.values()) request.fail(error);
    link.awaitingAck.clear();
    link.awaitingClearance.clear();
    link.awaitingData.clear();
    for (const posted of this.queues.removePosted((receive) => receive.processRank === processRank)) posted.request.fail(error);
    link.connection.socket.destroy();
  }

  /** Bytes held for messages that arrived before their receive (large ones wait at the sender). */
  bufferedBytes(): number {
    return this.unexpectedBytes;
  }

  unreceived(): Map<string, number> {
    return this.queues.unreceived();
  }

  /**
   * Sends the large messages still waiting for their receivers first (a sendAsync has returned
   * long ago, so its data must not be dropped), for at most `timeoutMs`; then says goodbye.
   */
  async close(): Promise<void> {
    const unsent = [...this.links.values()].flatMap((link) => [...link.awaitingClearance.values()].map((send) => send.request.wait().catch(() => {})));
    if (unsent.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.timeoutMs)));
      await Promise.race([Promise.all(unsent), expired]);
      clearTimeout(timer);
      const left = [...this.links.values()].reduce((count, link) => count + link.awaitingClearance.size, 0);
      if (left > 0) process.stderr.write(`ccjs: process ${this.options.processRank} closes with ${left} large message(s) never received within ${this.options.timeoutMs} ms\n`);
    }
    this.closing = true;
    for (const link of this.links.values()) {
      if (!link.lost) link.connection.sendControl(control(FrameType.Goodbye, { context: 0, source: this.options.processRank, destination: 0, tag: 0 }, 0));
    }
    await Promise.all([...this.links.values()].map((link) => link.connection.end()));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private dial(processRank: number, address: PeerAddress, jobId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: address.host, port: address.port, noDelay: true });
      socket.once('error', (error) => reject(new TransportError(`tcp device: cannot connect to process ${processRank} at ${address.host}:${address.port}: ${error.message}`, { cause: error })));
      socket.once('connect', () => {
        this.tune(socket);
        const connection = new Connection(socket, this.handlerFor(processRank));
        connection.sendControl(
          { type: FrameType.Hello, flags: 0, context: 0, source: this.options.processRank, destination: processRank, tag: 0, sendId: 0, payloadLength: 0 },
          Buffer.from(jobId),
        );
        this.links.set(processRank, new Link(processRank, connection));
        resolve();
      });
    });
  }

  /**
   * An incoming connection says who it is in its first frame, a Hello with the job id. A peer may
   * learn the job id, connect and even send before this process has learnt it: such a connection
   * and its frames wait in `earlyHellos` until `connect` can check them.
   */
  private accept(socket: net.Socket): void {
    this.tune(socket);
    let early: EarlyHello | undefined;
    const connection: Connection = new Connection(socket, {
      frame: (header, packet, payload) => {
        if (early) {
          early.frames.push([header, packet]);
        } else if (header.type !== FrameType.Hello || payload === undefined) {
          socket.destroy();
        } else {
          early = { processRank: header.source, jobId: payload.toString(), connection, frames: [] };
          if (this.jobId === undefined) this.earlyHellos.push(early);
          else this.admit(early);
        }
      },
      closed: () => {},
    });
  }

  private admit(hello: EarlyHello): void {
    const { processRank, connection } = hello;
    const valid = hello.jobId === this.jobId && processRank > this.options.processRank && processRank < this.options.processCount && !this.links.has(processRank);
    if (!valid) {
      connection.socket.destroy();
      return;
    }
    this.links.set(processRank, new Link(processRank, connection));
    const handler = this.handlerFor(processRank);
    connection.setHandler(handler);
    for (const [header, packet] of hello.frames) handler.frame(header, packet, undefined);
    this.linkEstablished();
  }

  private tune(socket: net.Socket): void {
    socket.setNoDelay(true);
    // The kernel probes an idle peer, so a dead host is found even while this process computes.
    socket.setKeepAlive(true, Math.max(1000, Math.floor(this.options.timeoutMs / 2)));
  }

  private handlerFor(processRank: number): Parameters<Connection['setHandler']>[0] {
    return {
      frame: (header, packet) => this.received(processRank, header, packet),
      closed: (error) => {
        const link = this.links.get(processRank);
        if (link === undefined || link.lost) return;
        const reason = link.goodbye || this.closing ? 'closed its connection' : `was lost (${error ? error.message : 'connection closed without close()'})`;
        const lost = new PeerLostError(`process ${processRank} ${reason}`, processRank, { cause: error });
        this.markLost(processRank, lost);
        if (!link.goodbye && !this.closing) this.lostListener?.(processRank, lost);
      },
    };
  }

  private received(processRank: number, header: FrameHeader, packet: Packet | undefined): void {
    const link = this.links.get(processRank) as Link;
    switch (header.type) {
      case FrameType.Eager: {
        const ackId = header.flags & FLAG_SYNCHRONOUS ? header.sendId : undefined;
        this.arrive(link, header, { kind: 'eager', processRank, packet: packet as Packet, ackId });
        return;
      }
      case FrameType.ReadyToSend:
        this.arrive(link, header, { kind: 'rts', processRank, sendId: header.sendId });
        return;
      case FrameType.ClearToSend: {
        const send = link.awaitingClearance.get(header.sendId);
        if (send === undefined) return;
        link.awaitingClearance.delete(header.sendId);
        const data = { ...send.envelope, type: FrameType.Data, flags: 0, sendId: header.sendId };
        link.connection.sendPacket(data, send.packet, false, () => send.request.complete(undefined));
        return;
      }
      case FrameType.Data: {
        const request = link.awaitingData.get(header.sendId);
        link.awaitingData.delete(header.sendId);
        request?.complete(packet as Packet);
        return;
      }
      case FrameType.Ack:
        link.awaitingAck.get(header.sendId)?.complete(undefined);
        link.awaitingAck.delete(header.sendId);
        return;
      case FrameType.Goodbye:
        link.goodbye = true;
        return;
      default:
        link.connection.socket.destroy(new TransportError(`tcp device: unexpected frame type ${header.type} from process ${processRank}`));
    }
  }

  private arrive(link: Link, envelope: Envelope, arrival: Arrival): void {
    const posted = this.queues.arrive(envelope, arrival);
    if (posted) this.match(link, envelope, arrival, posted.request);
    else if (arrival.kind === 'eager') this.unexpectedBytes += packetByteLength(arrival.packet);
  }

  /** A message met its receive: complete it, acknowledging or clearing as the protocol says. */
  private match(link: Link, envelope: Envelope, arrival: Arrival, request: Request<Packet>): void {
    if (arrival.kind === 'eager') {
      if (arrival.ackId !== undefined && !link.lost) link.connection.sendControl(control(FrameType.Ack, envelope, arrival.ackId));
      request.complete(arrival.packet);
      return;
    }
    if (link.lost) {
      request.fail(link.lost);
      return;
    }
    link.awaitingData.set(arrival.sendId, request);
    link.connection.sendControl(control(FrameType.ClearToSend, envelope, arrival.sendId));
  }
}

function control(type: FrameType, envelope: Envelope, sendId: number): FrameHeader {
  return { type, flags: 0, context: envelope.context, source: envelope.source, destination: envelope.destination, tag: envelope.tag, sendId, payloadLength: 0 };
}
