/**
 * The UCX device's parts that need no job (frames as messages, lanes), two devices of one process
 * that flood each other past what the inbox holds, and the package without UCX
 * (CCJS_NO_UCX=1 at run time acts as an install without libucx-dev): 'ucx' is a ConfigError that
 * says how to enable it, 'auto' goes on over the other devices. Large sendSync messages go eagerly
 * while the window allows. Jobs over UCX are in devices.spec.ts (every payload and algorithm)
 * and jobs.spec.ts (kill -9).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { Frame, FrameType, NO_BODIES } from '../transport/frame.js';
import { FrameError, TransportError } from '../src/base/errors.js';
import { MAX_BYTE_VIEW, viewBytes } from '../src/base/typed-arrays.js';
import { messageParts, readMessage, wholeMessage } from '../transport/ucx/frames.js';
import { ucxMissing, ucxNative } from '../transport/ucx/native.js';
import type { UcxNative } from '../transport/ucx/native.js';
import { UcxDevice, laneTransports } from '../transport/ucx/ucx-device.js';
import type { DeviceHost } from '../transport/device.js';
import { distRoot, fixture, run, runScenario } from './harness.js';
import type { LentOrCopiedReport, LentReport } from './scenarios/rings.js';
import { expectLentOrCopied } from './lending.js';

function joined(parts: readonly Uint8Array[]): ArrayBuffer {
  const bytes = Buffer.concat(parts.map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength)));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

/** Each part as its own message, as the addon receives a large frame. */
function apart(parts: readonly Uint8Array[]): ArrayBuffer[] {
  return parts.map((part) => joined([part]));
}

function eager(bodies: Uint8Array[]): Frame {
  const size = bodies.reduce((sum, body) => sum + body.byteLength, 0);
  return new Frame(FrameType.Eager, 0, 3, 1, 2, 7, 0, 0, 0, 1, bodies, size, 9, 64);
}

describe('ucx frames', function () {
  it('carry a frame whole or as parts, and read it back with its bodies in place', function () {
    const frame = eager([Uint8Array.of(1, 2, 3), new Uint8Array(new Float64Array([1.5, -2]).buffer)]);
    const whole = joined(wholeMessage(frame));
    const parts = apart(messageParts(frame));
    expect(parts.map((part) => part.byteLength)).to.deep.equal([56 + 16, 3, 16]);
    for (const message of [whole, parts]) {
      const read = readMessage(message);
      expect([read.type, read.context, read.source, read.destination, read.tag, read.size, read.id, read.credit]).to.deep.equal([FrameType.Eager, 3, 1, 2, 7, 19, 9, 64]);
      expect(read.bodies.map((body) => Array.from(body as Uint8Array))).to.deep.equal([[1, 2, 3], Array.from(new Uint8Array(new Float64Array([1.5, -2]).buffer))]);
      expect((read.bodies[0] as Uint8Array).buffer).to.equal(message instanceof ArrayBuffer ? message : message[1]);
    }
    const control = new Frame(FrameType.ReadyToSend, 0, 3, 1, 2, 7, 0, 0, 0, 1, NO_BODIES, 1 << 20, 5);
    expect(readMessage(joined(wholeMessage(control))).size).to.equal(1 << 20);
  });

  it('carry a CRC32C with the checksum on, whole or as parts, and refuse a frame whose bytes changed', function () {
    const frame = eager([Uint8Array.of(1, 2, 3), new Uint8Array(new Float64Array([1.5, -2]).buffer)]);
    const whole = joined(wholeMessage(frame, true));
    const parts = apart(messageParts(frame, true));
    expect(whole.byteLength).to.equal(56 + 16 + 19 + 4);
    expect(parts.map((part) => part.byteLength)).to.deep.equal([56 + 16 + 4, 3, 16]);
    for (const message of [whole, parts]) expect(readMessage(message, undefined, true).bodies.map((body) => body.byteLength)).to.deep.equal([3, 16]);
    const flipped = new Uint8Array(whole.slice(0));
    flipped[56 + 16 + 1] = (flipped[56 + 16 + 1] as number) ^ 1;
    expect(() => readMessage(flipped.buffer, undefined, true)).to.throw(FrameError, /changed on the way/);
    new Uint8Array(parts[2] as ArrayBuffer)[0] ^= 0x80;
    expect(() => readMessage(parts, undefined, true)).to.throw(FrameError, /changed on the way/);
    expect(() => readMessage(new ArrayBuffer(2), undefined, true)).to.throw(FrameError, /without its checksum/);
  });

  it('refuse a body longer than one part can be, at the sender, with a TransportError', function () {
    // Past 4 GiB on Node 20 (buffer.constants.MAX_LENGTH); the pages are never touched.
    const long = new DataView(new ArrayBuffer(MAX_BYTE_VIEW + 8));
    const frame = new Frame(FrameType.Eager, 0, 3, 1, 2, 7, 0, 0, 0, 1, [long], long.byteLength, 9, 64);
    expect(() => messageParts(frame)).to.throw(TransportError, /longer than one UCX part can be here/);
  });

  it('refuse messages that are no frames of ours, naming what is wrong', function () {
    const good = Buffer.from(joined(wholeMessage(eager([Uint8Array.of(1, 2, 3)]))));
    const bad = (edit: (bytes: Buffer) => Buffer) => () => {
      const bytes = edit(Buffer.from(good));
      return readMessage(new Uint8Array(bytes).buffer);
    };
    expect(bad((bytes) => bytes.subarray(0, 10))).to.throw(TransportError, /a message of 10 bytes/);
    expect(bad((bytes) => ((bytes[0] = 0x00), bytes))).to.throw(TransportError, /magic byte/);
    expect(bad((bytes) => (bytes.writeUInt32LE(70_000, 44), bytes))).to.throw(TransportError, /70000 bodies/);
    expect(bad((bytes) => (bytes.writeUInt32LE(1000, 56), bytes))).to.throw(TransportError, /past the message's end/);
    expect(bad((bytes) => Buffer.concat([bytes, Buffer.from([0])]))).to.throw(TransportError, /1 bytes after the frame/);
    const parts = apart(messageParts(eager([Uint8Array.of(1, 2, 3), Uint8Array.of(4)])));
    expect(() => readMessage(parts.slice(0, 2))).to.throw(TransportError, /2 bodies in 1 parts/);
    expect(() => readMessage([parts[0] as ArrayBuffer, parts[2] as ArrayBuffer, parts[1] as ArrayBuffer])).to.throw(TransportError, /a body of 3 bytes in a part of 1/);
    expect(() => readMessage([])).to.throw(TransportError, /no parts/);
  });
});

describe('ucx lanes', function () {
  it("are read from UCX's description of an endpoint", function () {
    const description = [
      '#',
      '# UCP endpoint',
      '#',
      '#               peer: <no debug data>',
      '#                 lane[0]:  3:posix/memory.0 md[3]          -> md[3]/posix/sysdev[255] am am_bw#0',
      '#                 lane[1]:  8:cma/memory md[5]              -> md[5]/cma/sysdev[255] rma_bw#0',
      '#                 lane[2]:  1:tcp/lo md[1]                  -> md[1]/tcp/sysdev[255] wireup',
    ].join('\n');
    expect(laneTransports(description)).to.deep.equal(['posix', 'cma', 'tcp']);
  });
});

describe('two ucx devices of one process', function () {
  /** A frame whose tag is `sequence` and whose one body of `length` bytes counts from it. */
  function numbered(sequence: number, length: number): Frame {
    const body = new Uint8Array(length).map((_, i) => (sequence + i) & 0xff);
    return new Frame(FrameType.Eager, 0, 3, 1, 2, sequence, 0, 0, 0, 1, [body], length, sequence, 0);
  }

  for (const tls of ['sm', 'tcp']) {
    it(`carry a flood past the inbox's room in order, small frames through it and larger ones held (UCX_TLS=${tls})`, async function () {
      if (ucxMissing() !== undefined) this.skip();
      const saved = process.env.UCX_TLS;
      process.env.UCX_TLS = tls;
      const native = ucxNative() as UcxNative;
      const received: Frame[] = [];
      const lost: Error[] = [];
      const host = (into: Frame[]): DeviceHost => ({ deliver: (_, frame) => into.push(frame), lost: (_, error) => lost.push(error), refused: (_, error) => lost.push(error) });
      const options = { host: 'here', listenHost: '127.0.0.1', timeoutMs: 10_000, native, trace: undefined };
      const a = new UcxDevice({ ...options, rank: 0 });
      const b = new UcxDevice({ ...options, rank: 1 });
      try {
        await Promise.all([a.connect([{ rank: 1, address: b.address }], host([])), b.connect([{ rank: 0, address: a.address }], host(received))]);
        // Sizes around the inbox's limit (native.inlineBytes), and 1,500 frames in one turn: far more than its 32 largest records.
        const lengths = Array.from({ length: 1500 }, (_, i) => [0, 8, 4000, native.inlineBytes - 64, native.inlineBytes - 56, native.inlineBytes, 70_000][i % 7] as number);
        const released: number[] = [];
        lengths.forEach((length, sequence) => {
          if (!a.send(1, numbered(sequence, length), { released: () => released.push(sequence) })) expect(length).to.be.above(a.copyLimit);
        });
        const deadline = Date.now() + 20_000;
        while (received.length < lengths.length && lost.length === 0 && Date.now() < deadline) {
          a.progress();
          b.progress();
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(lost).to.deep.equal([]);
        expect(received.map((frame) => frame.tag)).to.deep.equal(lengths.map((_, sequence) => sequence));
        for (const frame of received) {
          const length = lengths[frame.tag] as number;
          expect(frame.size).to.equal(length);
          const body = frame.bodies.length === 0 ? new Uint8Array(0) : new Uint8Array(Buffer.concat(frame.bodies.map(viewBytes)));
          expect(body.length).to.equal(length);
          expect(body.every((byte, i) => byte === ((frame.tag + i) & 0xff)), `frame ${frame.tag}`).to.equal(true);
        }
      } finally {
        await Promise.all([a.close(), b.close()]);
        if (saved === undefined) delete process.env.UCX_TLS;
        else process.env.UCX_TLS = saved;
      }
    });
  }
});

describe('a ucx receiver whose sender stops in the middle of a body', function () {
  for (const tls of ['sm', 'tcp']) {
    it(`gives the body up after its timeout and reports the sender lost, instead of holding its thread (UCX_TLS=${tls})`, async function () {
      if (ucxMissing() !== undefined) this.skip();
      const saved = process.env.UCX_TLS;
      process.env.UCX_TLS = tls;
      // The second frame's body (2 MiB, sent without asking) waits in UCX until the receiver reads
      // the frame's header; then the receiver takes it at once, which needs the stopped sender to move it.
      const sender = spawn(process.execPath, [fixture('ucx-stopping-sender'), String(2 * 1024 * 1024)], { stdio: ['pipe', 'pipe', 'inherit'] });
      const receiver = new UcxDevice({ rank: 1, host: 'here', listenHost: '127.0.0.1', timeoutMs: 1000, native: ucxNative() as UcxNative, trace: undefined });
      const delivered: Frame[] = [];
      const lost: Error[] = [];
      try {
        // The sender's lines (UCX may print warnings there too): its address, then "ready".
        const lines = readline.createInterface({ input: sender.stdout })[Symbol.asyncIterator]();
        const nextLine = async (prefix: string): Promise<string> => {
          for (;;) {
            const { value, done } = (await lines.next()) as IteratorResult<string, undefined>;
            if (done === true) throw new Error(`the sender ended before printing ${prefix}`);
            if (value.startsWith(prefix)) return value;
          }
        };
        const address = await nextLine('{');
        sender.stdin.write(`${JSON.stringify(receiver.address)}\n`);
        await receiver.connect([{ rank: 0, address: JSON.parse(address) as unknown }], {
          deliver: (_, frame) => delivered.push(frame),
          lost: (peer, error) => {
            lost.push(error);
            receiver.disconnect(peer);
          },
          refused: (peer, error) => {
            lost.push(error);
            receiver.disconnect(peer);
          },
        });
        await nextLine('ready');
        while (delivered.length === 0) {
          receiver.progress();
          await new Promise((resolve) => setImmediate(resolve));
        }
        sender.stdin.write('go\n');
        // Busy while the sender announces the body and stops.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
        const started = Date.now();
        while (lost.length === 0 && delivered.length === 1 && Date.now() - started < 20_000) {
          receiver.progress();
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(delivered.map((frame) => frame.tag)).to.deep.equal([1]);
        expect(lost.map((error) => error.message)).to.have.lengthOf(1);
        expect(lost[0]?.message).to.match(/a message body of 2097152 bytes did not arrive within 1000 ms/);
        expect(Date.now() - started).to.be.below(10_000);
      } finally {
        sender.kill('SIGKILL');
        await receiver.close();
        if (saved === undefined) delete process.env.UCX_TLS;
        else process.env.UCX_TLS = saved;
      }
    });
  }
});

describe('ucx jobs', function () {
  for (const tls of ['sm', 'tcp']) {
    it(`take sendSync messages larger than the eager limit eagerly while the window allows, and lose nothing (UCX_TLS=${tls})`, async function () {
      if (ucxMissing() !== undefined) this.skip();
      const bytes = 512 * 1024;
      const results = (await runScenario(2, 1, 'lentUnexpected', { count: 12, bytes, blockMs: 300 }, { CCJS_TRANSPORT: 'ucx', UCX_TLS: tls })).results as [[LentReport], [LentReport]];
      const [[sender], [receiver]] = results;
      expect(sender.sent).to.equal(12);
      // Several waited at the receiver whole (a rendezvous would have left only its announcement there), never more than its window.
      expect(receiver.unexpectedHighWater).to.be.above(2 * bytes);
      expect(receiver.unexpectedHighWater).to.be.at.most(receiver.receiveWindow);
    });

    it(`lends large sendAsync data to a receiver that waits for it, and copies it for one that does not (UCX_TLS=${tls})`, async function () {
      if (ucxMissing() !== undefined) this.skip();
      const results = (await runScenario(2, 1, 'lentOrCopied', { count: 40, bytes: 1024 * 1024 }, { CCJS_TRANSPORT: 'ucx', UCX_TLS: tls })).results as [[LentOrCopiedReport], [number]];
      expectLentOrCopied(results);
    });

    it(`receive bodies straight into the buffer a receive gives, whichever protocol carried them (UCX_TLS=${tls})`, async function () {
      if (ucxMissing() !== undefined) this.skip();
      // 128 KiB: sendSync and sendAsync go eagerly (their bodies wait in UCX until the receiver has
      // read the header and names the buffer); 2 MiB: sendSync eagerly, sendAsync by rendezvous
      // (the receiver names the buffer as it clears the message).
      for (const bytes of [128 * 1024, 2 * 1024 * 1024]) {
        const results = (await runScenario(2, 1, 'intoOneBuffer', { count: 10, bytes }, { CCJS_TRANSPORT: 'ucx', UCX_TLS: tls })).results as [[number], [number]];
        expect(results[1][0], `bodies of ${bytes} bytes received into the buffer`).to.equal(20);
      }
    });
  }
});

describe('the package without UCX (CCJS_NO_UCX=1)', function () {
  const ring = path.join(distRoot, 'examples', 'ring.js');
  const ccjrun = path.join(distRoot, '..', 'bin', 'ccjrun.js');

  it("refuses transport 'ucx' with a ConfigError that says how to enable it", async function () {
    const result = await run(process.execPath, [ccjrun, '-n', '2', ring, '2'], { CCJS_NO_UCX: '1', CCJS_TRANSPORT: 'ucx' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/ConfigError: transport 'ucx' was asked for \(threads, host, network pairs\), but the UCX device is switched off \(CCJS_NO_UCX=1\); to use it, install UCX's headers \(apt-get install libucx-dev\) and rebuild the addon/);
  });

  it("runs a job over the other devices with transport 'auto'", async function () {
    const result = await run(process.execPath, [ccjrun, '-n', '2', ring, '2'], { CCJS_NO_UCX: '1', CCJS_TRANSPORT: 'auto' });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('ring ok');
  });
});
