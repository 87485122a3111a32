/**
 * The UCX device's parts that need no job (frames as messages, lanes), and the package without UCX
 * (CCJS_NO_UCX=1 at run time acts as an install without libucx-dev): 'ucx' is a ConfigError that
 * says how to enable it, 'auto' goes on over the other devices. Jobs over UCX are in
 * devices.spec.ts (every payload and algorithm) and jobs.spec.ts (kill -9).
 */
import { expect } from 'chai';
import path from 'node:path';
import { Frame, FrameType, NO_BODIES } from '../src/engine/frame.js';
import { TransportError } from '../src/errors.js';
import { messageParts, readMessage, wholeMessage } from '../transport/ucx/frames.js';
import { laneTransports } from '../transport/ucx/ucx-device.js';
import { distRoot, run } from './harness.js';

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
