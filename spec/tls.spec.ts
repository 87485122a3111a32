/**
 * TLS on the tcp device (issue 11, item 1): frames cross the wire encrypted (checked on the bytes a
 * proxy between two devices relays, beside the same exchange without TLS, where the proxy does see
 * the plaintext), and a peer with another secret or without TLS is refused. Whole jobs over TLS run
 * in devices.spec (3 processes over tcp with CCJS_TLS=1).
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { TcpDevice } from '../transport/tcp/tcp-device.js';
import type { DeviceHost } from '../transport/device.js';
import { Frame, FrameType } from '../transport/frame.js';
import { recordingProxy } from './strangers.js';

const MARKER = Buffer.from('plaintext that must not be readable on the wire; '.repeat(40));

interface Linked {
  readonly delivered: Frame[];
  readonly sender: TcpDevice;
  readonly receiver: TcpDevice;
  /** What the sender's side wrote, as the proxy between them relayed it. */
  readonly wire: () => Buffer;
  readonly close: () => Promise<void>;
}

/** Endpoint 1 dials endpoint 0 through a recording proxy. */
async function link(tls: { sender: boolean; receiver: boolean }, secrets: { sender: Buffer; receiver: Buffer }): Promise<Linked> {
  const options = (rank: number, secret: Buffer, encrypted: boolean) => ({ rank, listenHost: '127.0.0.1', timeoutMs: 3000, jobId: () => 'tls-spec', secret, tls: encrypted });
  const receiver = await TcpDevice.listen(options(0, secrets.receiver, tls.receiver));
  const sender = await TcpDevice.listen(options(1, secrets.sender, tls.sender));
  const proxy = await recordingProxy(receiver.address.port);
  const delivered: Frame[] = [];
  const host = (onFrame: (frame: Frame) => void): DeviceHost => ({ deliver: (_peer, frame) => onFrame(frame), lost: () => {}, refused: () => {} });
  const close = async () => {
    proxy.close();
    await Promise.allSettled([sender.close(), receiver.close()]);
  };
  try {
    await Promise.all([
      receiver.connect([{ rank: 1, address: sender.address }], host((frame) => delivered.push(frame))),
      sender.connect([{ rank: 0, address: { host: '127.0.0.1', port: proxy.port } }], host(() => {})),
    ]);
  } catch (error) {
    await close();
    throw error;
  }
  return { delivered, sender, receiver, wire: () => Buffer.concat(proxy.sent), close };
}

/** Sends MARKER from endpoint 1 to 0 and waits until it arrived. */
async function sendMarker(linked: Linked): Promise<void> {
  linked.sender.send(0, new Frame(FrameType.Eager, 0, 1, 1, 0, 7, 0, 0, 0, 0, [new Uint8Array(MARKER)], MARKER.length), undefined);
  for (let waited = 0; linked.delivered.length === 0 && waited < 3000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(linked.delivered).to.have.lengthOf(1);
  expect(Buffer.from(linked.delivered[0]?.bodies[0] as Uint8Array).equals(MARKER)).to.equal(true);
}

describe('tcp device over TLS', function () {
  this.timeout(20_000);
  const secret = randomBytes(32);

  it('carries frames the wire does not show, on a link both ends call encrypted', async () => {
    const linked = await link({ sender: true, receiver: true }, { sender: secret, receiver: secret });
    try {
      await sendMarker(linked);
      expect(linked.sender.encryption(0)).to.equal('TLSv1.2 TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256');
      expect(linked.receiver.encryption(1)).to.equal('TLSv1.2 TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256');
      const wire = linked.wire();
      expect(wire.length).to.be.above(MARKER.length);
      expect(wire[0], 'a TLS handshake record opens the connection').to.equal(0x16);
      for (const text of [MARKER.subarray(0, 24), Buffer.from('CCJSAUT1'), Buffer.from('tls-spec')]) expect(wire.includes(text)).to.equal(false);
    } finally {
      await linked.close();
    }
  });

  it('shows the same exchange in the clear without TLS (so the check above can fail)', async () => {
    const linked = await link({ sender: false, receiver: false }, { sender: secret, receiver: secret });
    try {
      await sendMarker(linked);
      expect(linked.sender.encryption(0)).to.equal(undefined);
      expect(linked.wire().includes(MARKER.subarray(0, 24))).to.equal(true);
    } finally {
      await linked.close();
    }
  });

  for (const [what, tls, secrets] of [
    ['another secret', { sender: true, receiver: true }, { sender: randomBytes(32), receiver: secret }],
    ['no TLS at the dialling end', { sender: false, receiver: true }, { sender: secret, receiver: secret }],
    ['no TLS at the accepting end', { sender: true, receiver: false }, { sender: secret, receiver: secret }],
  ] as const) {
    it(`refuses a peer with ${what}, and nothing crosses`, async () => {
      let failure: unknown;
      const linked = await link(tls, secrets).catch((error: unknown) => {
        failure = error;
        return undefined;
      });
      await linked?.close();
      expect(linked).to.equal(undefined);
      expect(String(failure)).to.match(/TransportError|TimeoutError/);
    });
  }
});
