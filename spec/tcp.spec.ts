import { expect } from 'chai';
import net from 'node:net';
import { Connection } from '../transport/tcp/connection.js';
import { Frame, FrameType, NO_BODIES, bodiesSize } from '../transport/frame.js';
import { FRAME_CHARGE } from '../src/engine/engine.js';
import { closeAll, createMasters, runGroup } from './harness.js';

/** A connected pair of real loopback sockets. */
async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = net.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', noDelay: true });
  const pair: [net.Socket, net.Socket] = [client, await accepted];
  server.close();
  return pair;
}

describe('tcp device', function () {
  it('parses frames split at arbitrary points, with empty and multiple bodies, hellos and control frames', async function () {
    const [writer, reader] = await socketPair();
    const frames: Frame[] = [];
    const hellos: { rank: number; payload: string }[] = [];
    new Connection(reader, { frame: (frame) => frames.push(frame), hello: (rank, payload) => hellos.push({ rank, payload: payload.toString() }), closed: () => {}, refused: () => {} });
    // Serialize frames with a Connection on a throwaway pair, then replay the bytes in odd slices.
    const [capturing, capture] = await socketPair();
    const bytes: Buffer[] = [];
    capture.on('data', (chunk: Buffer) => bytes.push(chunk));
    const sender = new Connection(capturing, { frame: () => {}, hello: () => {}, closed: () => {}, refused: () => {} });
    const bodies = [
      [Uint8Array.of(4, 5), new Uint8Array(0), new Uint8Array(100_000).fill(6)],
      [],
      [Float64Array.of(1.5, -2), new Uint8Array(70_000).fill(8)],
    ];
    const message = (index: number) => new Frame(FrameType.Eager, 1, 7, 1, 2, index, 11, 3, 99, 8, bodies[index] as Uint8Array[], bodiesSize(bodies[index] as Uint8Array[]), 9, 640);
    sender.hello(5, Buffer.from('job-x'));
    for (let index = 0; index < bodies.length; index += 1) sender.send(message(index), undefined);
    sender.send(new Frame(FrameType.Ack, 0, 7, 2, 1, 0, 0, 0, 0, 0, NO_BODIES, 0, 9, 64), undefined);
    const total = 56 + 5 + bodies.reduce((sum, list) => sum + 56 + 8 * list.length + bodiesSize(list), 0) + 56;
    while (bytes.reduce((sum, chunk) => sum + chunk.length, 0) < total) await new Promise((resolve) => setTimeout(resolve, 5));
    const stream = Buffer.concat(bytes);
    expect(stream.length).to.equal(total);
    for (let offset = 0, step = 1; offset < stream.length; offset += step, step = (step * 7 + 3) % 4093 || 1) {
      writer.write(stream.subarray(offset, offset + step));
      await new Promise((resolve) => setImmediate(resolve));
    }
    while (frames.length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(hellos).to.deep.equal([{ rank: 5, payload: 'job-x' }]);
    expect(frames.map((frame) => frame.type)).to.deep.equal([FrameType.Eager, FrameType.Eager, FrameType.Eager, FrameType.Ack]);
    frames.slice(0, 3).forEach((frame, index) => {
      expect(frame).to.include({ flags: 1, context: 7, source: 1, destination: 2, tag: index, operation: 11, root: 3, reduction: 99, format: 8, id: 9, credit: 640 });
      expect(frame.bodies.map((body) => Buffer.from(body as Uint8Array).toString('hex'))).to.deep.equal((bodies[index] as Uint8Array[]).map((body) => Buffer.from(new Uint8Array(body.buffer, body.byteOffset, body.byteLength)).toString('hex')));
    });
    expect(frames[3]).to.include({ type: FrameType.Ack, id: 9, credit: 64, size: 0 });
    for (const socket of [writer, reader, capturing, capture]) socket.destroy();
  });

  it('holds a flood of large sends at the senders (rendezvous), not in the receiver', async function () {
    const masters = await createMasters(2, { eagerLimit: 64 * 1024, sendBuffer: 128 * 1024 * 1024 });
    try {
      const count = 20;
      const size = 4 * 1024 * 1024;
      await runGroup(masters, [1, 1], 'flood', async (member, group, rank) => {
        // A second group carries the "all sent" signal past the queue of large messages.
        const master = masters[group.processOf(rank)];
        master.addMember('flood-signal', member);
        const signal = await master.getGroup('flood-signal', 2);
        const peer = 1 - signal.getRank(member);
        if (rank === 0) {
          for (let i = 0; i < count; i += 1) await member.sendAsync(group, new Uint8Array(size).fill(i), 1);
          await member.sendSync(signal, 'all sent', peer);
          return;
        }
        const engine = masters[1].engine;
        expect(await member.receive(signal, peer)).to.equal('all sent');
        // Every large message has announced itself, yet none of its data is held here.
        expect(await member.probe(group, 0)).to.deep.equal({ source: 0, tag: 0, bytes: size });
        expect(engine.stats.unexpectedBytes).to.equal(count * FRAME_CHARGE);
        for (let i = 0; i < count; i += 1) {
          const received = await member.receive<Uint8Array>(group, 0);
          expect(received.length).to.equal(size);
          expect(received[0]).to.equal(i);
          expect(received[size - 1]).to.equal(i);
        }
      });
    } finally {
      await closeAll(masters);
    }
  });

  it('delivers a large sendAsync whose sender closes before the receiver asks for it', async function () {
    const masters = await createMasters(2);
    try {
      const size = 1 << 20;
      await runGroup(masters, [1, 1], 'late-receiver', async (member, group, rank) => {
        if (rank === 0) {
          await member.sendAsync(group, new Uint8Array(size).fill(7), 1);
          await member.done();
          // Process 0 starts closing now; it finishes once process 1 closes too (closeAll below).
          void masters[0].close();
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        const received = await member.receive<Uint8Array>(group, 0);
        expect(received.length).to.equal(size);
        expect(received[size - 1]).to.equal(7);
      });
    } finally {
      await closeAll(masters);
    }
  });
});
