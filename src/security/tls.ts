/**
 * Optional TLS for the tcp device (CCJS_TLS): TLS 1.2 keyed by the job secret as a pre-shared key,
 * so a site needs no certificates, with ECDHE for forward secrecy (a secret stolen later does not
 * open recorded traffic). Node's TLS 1.3 takes no external pre-shared keys, hence 1.2. The job's
 * own challenge–response still runs inside the encrypted connection.
 */
import type tls from 'node:tls';
import { hkdfSync } from 'node:crypto';

const CIPHER = 'ECDHE-PSK-CHACHA20-POLY1305';
const IDENTITY = 'ccjs-job';
const PROTOCOL = { ciphers: CIPHER, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' } as const;

function keyOf(secret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'ccjs tcp device tls key', 32));
}

/** Options of a listening TLS server: only a client holding the job's key completes the handshake, within `deadlineMs`. */
export function tlsServerOptions(secret: Buffer, deadlineMs: number): tls.TlsOptions {
  const key = keyOf(secret);
  return { ...PROTOCOL, handshakeTimeout: deadlineMs, pskCallback: (_socket, identity) => (identity === IDENTITY ? key : null) };
}

/** Options of a dialling TLS client (with PSK there is no certificate, so no server identity to check). */
export function tlsClientOptions(secret: Buffer): tls.ConnectionOptions {
  const key = keyOf(secret);
  return { ...PROTOCOL, pskCallback: () => ({ psk: key, identity: IDENTITY }), checkServerIdentity: () => undefined };
}

/** "TLSv1.2 TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256" for an established TLS socket. */
export function describeEncryption(socket: tls.TLSSocket): string {
  return `${socket.getProtocol() ?? '?'} ${socket.getCipher().standardName}`;
}

/** Why a TLS handshake failed, in OpenSSL's words without its file and line. */
export function tlsFailure(error: Error): string {
  return (error as Error & { reason?: string }).reason ?? error.message;
}
