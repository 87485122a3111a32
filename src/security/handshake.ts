/**
 * The mutual challenge–response every connection of a job passes before any other byte of it is
 * parsed (coordinator and tcp data connections alike). Each side sends a greeting (a version tag
 * and a fresh random nonce); each then proves it knows the job secret with an HMAC-SHA-256 over
 * both nonces and its own role, so that neither a recorded handshake (the nonces are fresh) nor a
 * reflected proof (the role differs) passes. The server proves itself only after the client has,
 * so a stranger learns nothing but the server's random nonce. Messages have fixed sizes, and the
 * whole exchange has a deadline.
 */
import type { Socket } from 'node:net';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { TransportError } from '../base/errors.js';

/** The dialling side is the client, the accepting side the server. */
export type HandshakeRole = 'client' | 'server';

/** Protocol and version: a peer speaking anything else is refused at its first bytes. */
const GREETING_TAG = Buffer.from('CCJSAUT1');
const NONCE_BYTES = 32;
const GREETING_BYTES = GREETING_TAG.length + NONCE_BYTES;
const PROOF_BYTES = 32;
/** A client sends nothing after its proof until it has the server's: more is no peer of ours. */
const MOST_BYTES_BEFORE_SUCCESS = GREETING_BYTES + PROOF_BYTES;
/** Handshakes never wait longer than this, whatever the job's timeout. */
export const MAX_HANDSHAKE_MS = 10_000;

/** A failed handshake: TransportError, saying whether the peer had greeted as a ccjs endpoint. */
export class HandshakeError extends TransportError {
  constructor(
    message: string,
    /** The peer sent a ccjs greeting: it speaks our protocol, so a failure after it is a secret that differs, not another program. */
    readonly peerGreeted: boolean,
  ) {
    super(message);
  }
}

/** How long a handshake may take in a job with timeout `timeoutMs`. */
export function handshakeDeadline(timeoutMs: number): number {
  return Math.min(timeoutMs, MAX_HANDSHAKE_MS);
}

function proof(secret: Buffer, role: HandshakeRole, clientNonce: Buffer, serverNonce: Buffer): Buffer {
  return createHmac('sha256', secret).update(GREETING_TAG).update(role).update(clientNonce).update(serverNonce).digest();
}

/**
 * Authenticates the connected `socket` as `role`; resolves once both sides have proved they know
 * `secret`. Bytes the peer sent after its part stay in the socket for whoever reads it next. On
 * failure the socket is destroyed and the promise rejects with a HandshakeError saying what went
 * wrong (never the secret).
 */
export function authenticate(socket: Socket, secret: Buffer, role: HandshakeRole, deadlineMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const ownNonce = randomBytes(NONCE_BYTES);
    let peerNonce: Buffer | undefined;
    const nonces = (): [client: Buffer, server: Buffer] => (role === 'client' ? [ownNonce, peerNonce as Buffer] : [peerNonce as Buffer, ownNonce]);

    const finish = (failure: string | undefined): void => {
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('close', onClose);
      socket.off('error', onError);
      if (failure === undefined) {
        resolve();
        return;
      }
      socket.destroy();
      reject(new HandshakeError(`authentication failed: ${failure}`, peerNonce !== undefined));
    };
    const onClose = (): void => finish('the peer closed the connection during authentication');
    const onError = (error: Error): void => finish(`connection error during authentication (${error.message})`);
    const timer = setTimeout(() => finish(`no complete answer within ${deadlineMs} ms`), deadlineMs);

    /** Takes exactly `bytes` bytes once they are all there; reading less than that is no progress. */
    const take = (bytes: number): Buffer | undefined => {
      if (socket.readableLength < bytes) return undefined;
      return (socket.read(bytes) as Buffer | null) ?? undefined;
    };

    const onReadable = (): void => {
      if (role === 'server' && socket.readableLength > MOST_BYTES_BEFORE_SUCCESS) {
        finish('the peer sent more than a handshake');
        return;
      }
      if (peerNonce === undefined) {
        const greeting = take(GREETING_BYTES);
        if (greeting === undefined) return;
        if (!greeting.subarray(0, GREETING_TAG.length).equals(GREETING_TAG)) {
          finish('the peer is no ccjs endpoint of this version (wrong greeting)');
          return;
        }
        peerNonce = Buffer.from(greeting.subarray(GREETING_TAG.length));
        if (role === 'client') socket.write(proof(secret, 'client', ...nonces()));
      }
      const peerProof = take(PROOF_BYTES);
      if (peerProof === undefined) return;
      const peerRole: HandshakeRole = role === 'client' ? 'server' : 'client';
      if (!timingSafeEqual(peerProof, proof(secret, peerRole, ...nonces()))) {
        finish('the peer does not know the job secret (wrong proof)');
        return;
      }
      if (role === 'server') socket.write(proof(secret, 'server', ...nonces()));
      finish(undefined);
    };

    socket.on('readable', onReadable);
    socket.on('close', onClose);
    socket.on('error', onError);
    socket.write(Buffer.concat([GREETING_TAG, ownNonce]));
    // Bytes may have arrived before we listened.
    if (socket.readableLength > 0) onReadable();
  });
}

export interface GatekeeperOptions {
  /** What the listening socket serves, for the log line ("coordinator", "tcp device of endpoint 2"). */
  readonly what: string;
  readonly secret: Buffer;
  readonly deadlineMs: number;
  /** Unauthenticated connections held at once; beyond it the oldest is dropped. */
  readonly maxPending: number;
  /** Called with each connection that passed; it owns the socket from then on. */
  readonly admit: (socket: Socket) => void;
}

/**
 * The accepting side of a listening socket: authenticates each connection before handing it on,
 * bounds how many wait unauthenticated (dropping the oldest, so a flood of idle connections
 * cannot lock members out), and logs one line per refusal (on stderr; no secret, no job details).
 */
export class Gatekeeper {
  private readonly pending = new Set<Socket>();

  constructor(private readonly options: GatekeeperOptions) {}

  accept(socket: Socket): void {
    const { what, secret, deadlineMs, maxPending, admit } = this.options;
    const from = `${socket.remoteAddress ?? 'an unknown address'}:${socket.remotePort ?? '?'}`;
    socket.on('error', () => {});
    if (this.pending.size >= maxPending) this.pending.values().next().value?.destroy();
    this.pending.add(socket);
    authenticate(socket, secret, 'server', deadlineMs).then(
      () => {
        this.pending.delete(socket);
        admit(socket);
      },
      (error: Error) => {
        this.pending.delete(socket);
        process.stderr.write(`ccjs: ${what} refused a connection from ${from}: ${error.message}\n`);
      },
    );
  }

  /** Drops the connections still authenticating. */
  close(): void {
    for (const socket of this.pending) socket.destroy();
    this.pending.clear();
  }
}
