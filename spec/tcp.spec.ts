import { expect } from 'chai';
import net from 'node:net';
import { Connection } from '../transport/tcp/connection.js';
import { FrameType } from '../transport/tcp/frame.js';
import type { FrameHeader } from '../transport/tcp/frame.js';
import type { Packet } from '../transport/device.js';
import { TcpDevice } from '../transport/tcp/tcp-device.js';
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
  it('parses frames split at arbitrary points, with empty and multiple bodies', async function () {
    const [writer, reader] = await socketPair();
    const frames: { header: FrameHeader; packet: Packet | undefined }[] = [];
    new Connection(reader, { frame: (header, packet) => frames.push({ header, packet }), closed: () => {} });
    // Serialize frames with a Connection on a throwaway pair, then replay the bytes in odd slices.
    const [capturing, capture] = await socketPair();
    const bytes: Buffer[] = [];
    capture.on('data', (chunk: Buffer) => bytes.push(chunk));
    const sender = new Connection(capturing, { frame: () => {}, closed: () => {} });
    const envelope = { context: 7, source: 1, destination: 2, tag: 0, flags: 0, sendId: 9 };
    const packets: Packet[] = [
      { head: Uint8Array.of(1, 2, 3), bodies: [Uint8Array.of(4, 5), new Uint8Array(0), new Uint8Array(100_000).fill(6)] },
      { head: new Uint8Array(0), bodies: [] },
      { head: Uint8Array.of(9), bodies: [new Uint8Array(70_000).fill(8)] },
    ];
    for (const packet of packets) sender.sendPacket({ ...envelope, type: FrameType.Eager }, packet, false);
    sender.sendControl({ ...envelope, type: FrameType.Ack, payloadLength: 0 });
    const total = packets.reduce((sum, p) => sum + 32 + 8 + 8 * p.bodies.length + p.head.length + p.bodies.reduce((s, b) => s + b.length, 0), 32);
    while (bytes.reduce((sum, chunk) => sum + chunk.length, 0) < total) await new Promise((resolve) => setTimeout(resolve, 5));
    const stream = Buffer.concat(bytes);
    for (let offset = 0, step = 1; offset < stream.length; offset += step, step = (step * 7 + 3) % 4093 || 1) {
      writer.write(stream.subarray(offset, offset + step));
      await new Promise((resolve) => setImmediate(resolve));
    }
    while (frames.length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(frames.map((frame) => frame.header.type)).to.deep.equal([FrameType.Eager, FrameType.Eager, FrameType.Eager, FrameType.Ack]);
    frames.slice(0, 3).forEach((frame, index) => {
      expect(frame.header).to.include({ context: 7, source: 1, destination: 2, sendId: 9 });
      expect([...(frame.packet as Packet).head]).to.deep.equal([...packets[index].head]);
      expect((frame.packet as Packet).bodies.map((body) => Buffer.from(body).toString('hex'))).to.deep.equal(packets[index].bodies.map((body) => Buffer.from(body).toString('hex')));
    });
    for (const socket of [writer, reader, capturing, capture]) socket.destroy();
  });

  it('holds a flood of large sends at the senders (rendezvous), not in the receiver', async function () {
    const masters = await createMasters(2, { eagerLimit: 64 * 1024 });
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
        const device = masters[1].messenger.transport.device(0) as TcpDevice;
        expect(await member.receive(signal, peer)).to.equal('all sent');
        // Every large message has announced itself, yet none of its data is held here.
        expect(device.iprobe(0, { context: group.context, source: 0, destination: 1, tag: 0 })).to.equal(true);
        expect(device.bufferedBytes()).to.equal(0);
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
