/**
 * Bodies for the shared-memory rings: a sender flooding a receiver whose thread is blocked (its
 * ring fills and must hold the sender), and messages of sizes around the ring's, the eager and
 * the copy boundaries (each frame then wraps the ring at another offset).
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { Reductions } from '../../src/index.js';
import type { ColGroupMaster } from '../../src/index.js';
import { progressEngine } from '../../src/engine/progress.js';
import { ShmDevice } from '../../transport/shm/shm-device.js';
import type { ShmStats } from '../../transport/shm/shm-device.js';
import { UcxDevice } from '../../transport/ucx/ucx-device.js';
import type { Body } from './p2p.js';

/** A deterministic generator, so that both sides agree on sizes and contents. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

/** Bytes of message `index`: a pattern only it has. */
function pattern(index: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 1) bytes[i] = (index * 31 + i * 7) & 0xff;
  return bytes;
}

function expectPattern(bytes: unknown, index: number, length: number): void {
  expect(bytes, `message ${index}`).to.be.instanceOf(Uint8Array);
  const received = bytes as Uint8Array;
  expect(received.byteLength, `length of message ${index}`).to.equal(length);
  for (let i = 0; i < length; i += 1) {
    if (received[i] !== ((index * 31 + i * 7) & 0xff)) throw new Error(`message ${index} (${length} bytes) differs at byte ${i}`);
  }
}

/** The shm device that serves the endpoint of group rank `peer`. */
function shmDeviceTowards(master: ColGroupMaster, endpoint: number): ShmDevice {
  const device = master.engine.deviceOf(endpoint);
  if (!(device instanceof ShmDevice)) throw new Error(`endpoint ${endpoint} is served by ${device?.name ?? 'nothing'}, not shm`);
  return device;
}

export interface FloodReport {
  readonly messages: number;
  readonly bytes: number;
  readonly stats: ShmStats;
  readonly receiveWindow: number;
}

/**
 * Rank 0 sends `bytes` in messages of random sizes (up to 200 KiB, eager and rendezvous alike) to
 * rank 1, whose thread is blocked for `blockMs` (its rings are not read at all); rank 1 then takes
 * them all and checks each. Rank 0 reports its device's counters.
 */
export function blockedReceiver(master: ColGroupMaster, bytes: number, blockMs: number): Body<FloodReport | number> {
  return async (member, group, rank) => {
    const next = random(7);
    const sizes: number[] = [];
    for (let total = 0; total < bytes; total += sizes[sizes.length - 1] as number) sizes.push(Math.floor(next() * 200 * 1024));
    if (rank === 0) {
      const device = shmDeviceTowards(master, group.endpointOf(1));
      await member.barrier(group);
      await Promise.all(sizes.map((size, index) => member.sendAsync(group, pattern(index, size), 1)));
      await member.barrier(group);
      return { messages: sizes.length, bytes, stats: { ...device.stats }, receiveWindow: master.config.receiveWindow };
    }
    await member.barrier(group);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, blockMs);
    for (const [index, size] of sizes.entries()) expectPattern(await member.receive(group, 0), index, size);
    await member.barrier(group);
    return sizes.length;
  };
}

/**
 * `count` messages from rank 0 to rank 1 of sizes at and around the ring's capacity, half of it,
 * the copy limit, the eager limit and the ring's alignment (± 24 bytes), and random sizes beyond;
 * through sendAsync and sendSync in turn. Rank 1 returns how many arrived intact, rank 0 how many
 * it sent and how many of those its device had rank 1 read from its memory (single copy).
 */
export function sizesAroundBoundaries(master: ColGroupMaster, count: number): Body<number | { sent: number; singleCopies: number }> {
  return async (member, group, rank) => {
    const peer = group.endpointOf(rank ^ 1);
    const device = shmDeviceTowards(master, peer);
    const ring = master.config.shmRingBytes;
    const boundaries = [0, 8, 64, ring / 2, ring, 2 * ring, device.copyLimit, master.config.eagerLimit];
    const next = random(11);
    const sizes = Array.from({ length: count }, (_, index) => {
      if (index % 2 === 1) return Math.floor(next() * 3 * ring);
      const boundary = boundaries[Math.floor(next() * boundaries.length)] as number;
      return Math.max(0, boundary + Math.floor(next() * 49) - 24);
    });
    if (rank === 0) {
      for (const [index, size] of sizes.entries()) {
        if (index % 2 === 0) await member.sendAsync(group, pattern(index, size), 1);
        else await member.sendSync(group, pattern(index, size), 1);
      }
      return { sent: count, singleCopies: device.stats.singleCopies };
    }
    for (const [index, size] of sizes.entries()) expectPattern(await member.receive(group, 0), index, size);
    return count;
  };
}

/** What the two ends of lentUnexpected report. */
export interface LentReport {
  readonly sent: number;
  /** Over shm: the frames the peer read from this endpoint's memory. */
  readonly singleCopies: number | undefined;
  /** Receiver: the most bytes of messages that waited here for their receive, and its window. */
  readonly unexpectedHighWater: number;
  readonly receiveWindow: number;
}

/**
 * `count` sendSync calls of `bytes` each, all started at once, to a receiver that posts no receive
 * for `blockMs` (its event loop runs, so what arrives is taken in) and then receives them in order. Each sendSync may go eagerly, read from the
 * sender's memory (the device lends: shm, ucx; and sendSync waits for its receive anyway), until
 * the credit of the receiver's window runs short; the rest go by rendezvous. Both ends report.
 */
export function lentUnexpected(master: ColGroupMaster, count: number, bytes: number, blockMs: number): Body<LentReport> {
  return async (member, group, rank) => {
    const device = master.engine.deviceOf(group.endpointOf(rank ^ 1));
    await member.barrier(group);
    if (rank === 0) {
      const received = Array.from({ length: count }, () => false);
      await Promise.all(Array.from({ length: count }, (_, index) => member.sendSync(group, pattern(index, bytes), 1).then(() => (received[index] = true))));
      expect(received.every(Boolean)).to.equal(true);
    } else {
      await new Promise((resolve) => setTimeout(resolve, blockMs));
      for (let index = 0; index < count; index += 1) expectPattern(await member.receive(group, 0), index, bytes);
    }
    await member.barrier(group);
    return { sent: count, singleCopies: device instanceof ShmDevice ? device.stats.singleCopies : undefined, unexpectedHighWater: master.engine.stats.unexpectedHighWater, receiveWindow: master.config.receiveWindow };
  };
}

/** What the sender of lentOrCopied reports. */
export interface LentOrCopiedReport {
  /** Messages sent to a receiver that waited for each, and how many of them were copied. */
  readonly awaited: number;
  readonly copiedWhileAwaited: number;
  /** Copies made of the one message the receiver did not wait for. */
  readonly copiedWhileBusy: number;
  /** Whether the sender's waiting calls spin (the lending needs it). */
  readonly spinning: boolean;
}

/**
 * sendAsync of `bytes` (above the eager limit) from rank 0 to rank 1: first `count` times to a
 * receiver whose receive waits for each (a ping-pong), so that the data may be lent instead of
 * copied; then once while rank 1 waits for a message of tag 1 instead. That sendAsync must resolve
 * without its receive (rank 0 says so in the tag-1 message, which rank 1 takes first), by copying
 * the data: the caller's changes after it never reach rank 1.
 */
export function lentOrCopied(master: ColGroupMaster, count: number, bytes: number): Body<LentOrCopiedReport | number> {
  return async (member, group, rank) => {
    if (rank === 0) {
      const stats = master.engine.stats;
      for (let index = 0; index < count; index += 1) {
        await member.sendAsync(group, pattern(index, bytes), 1);
        expect(await member.receive(group, 1)).to.equal(index);
      }
      const copiedWhileAwaited = stats.copiedSends;
      const data = pattern(count, bytes);
      await member.sendAsync(group, data, 1);
      data.fill(0);
      await member.sendSync(group, 'resolved', 1, { tag: 1 });
      return { awaited: count, copiedWhileAwaited, copiedWhileBusy: stats.copiedSends - copiedWhileAwaited, spinning: progressEngine.spinning };
    }
    // Checked after the ping-pong: a receiver that computes between receives sleeps through some of them.
    const received: unknown[] = [];
    for (let index = 0; index < count; index += 1) {
      received.push(await member.receive(group, 0));
      await member.sendAsync(group, index, 0);
    }
    for (const [index, message] of received.entries()) expectPattern(message, index, bytes);
    expect(await member.receive(group, 0, { tag: 1 })).to.equal('resolved');
    expectPattern(await member.receive(group, 0), count, bytes);
    return count + 1;
  };
}

/** How many bodies the device (shm or ucx) towards `endpoint` placed straight into the buffers their receives gave. */
function placedIntoBuffers(master: ColGroupMaster, endpoint: number): number {
  const device = master.engine.deviceOf(endpoint);
  if (device instanceof ShmDevice) return device.stats.readIntoBuffers;
  if (device instanceof UcxDevice) return device.stats.receivedIntoBuffers;
  throw new Error(`endpoint ${endpoint} is served by ${device?.name ?? 'nothing'}, which places no bodies`);
}

/**
 * Rank 0 sends `count` messages of `bytes` doubles by sendSync, then `count` by sendAsync, each
 * once rank 1 said (tag 1) that its receive is posted; rank 1 receives each into one buffer of its
 * own, checks it, and returns how many bodies its device (shm or ucx) placed straight into that buffer.
 */
export function intoOneBuffer(master: ColGroupMaster, count: number, bytes: number): Body<number> {
  return async (member, group, rank) => {
    const length = bytes / 8;
    if (rank === 0) {
      for (let index = 0; index < 2 * count; index += 1) {
        const message = new Float64Array(length).fill(index);
        await member.receive(group, 1, { tag: 1 });
        await (index < count ? member.sendSync(group, message, 1) : member.sendAsync(group, message, 1));
      }
      return 0;
    }
    const buffer = new Float64Array(length);
    for (let index = 0; index < 2 * count; index += 1) {
      const received = member.receive<Float64Array>(group, 0, { into: buffer });
      await member.sendAsync(group, 'posted', 0, { tag: 1 });
      const value = await received;
      expect(value.buffer).to.equal(buffer.buffer);
      if (value[0] !== index || value[length - 1] !== index) throw new Error(`message ${index} arrived as ${value[0]}..${value[length - 1]}`);
    }
    return placedIntoBuffers(master, group.endpointOf(0));
  };
}

/**
 * Rank 0 sends `count` messages of `bytes` by sendAsync and ends at once (its endpoint closes);
 * rank 1 receives them only after `sleepMs`, returning credit for them to a peer that is gone.
 * Rank 1 returns how many arrived intact.
 */
export function receivedAfterClose(count: number, bytes: number, sleepMs: number): Body<number> {
  return async (member, group, rank) => {
    if (rank === 0) {
      for (let index = 0; index < count; index += 1) await member.sendAsync(group, pattern(index, bytes), 1);
      return count;
    }
    await new Promise((resolve) => setTimeout(resolve, sleepMs));
    for (let index = 0; index < count; index += 1) expectPattern(await member.receive(group, 0), index, bytes);
    return count;
  };
}

/** What the sender of largeMessages reports. */
export interface LargeReport {
  readonly sent: number;
  readonly singleCopies: number;
  readonly helpedChunks: number;
}

/**
 * `count` messages from rank 0 to rank 1 of sizes from 256 KiB to 4 MiB (at, and a byte off,
 * the copy job's chunk boundaries, and random between), through sendSync and sendAsync in turn:
 * the sizes both ends copy parts of. Rank 1 returns how many arrived intact, rank 0 a LargeReport.
 */
export function largeMessages(master: ColGroupMaster, count: number): Body<number | LargeReport> {
  return async (member, group, rank) => {
    const device = shmDeviceTowards(master, group.endpointOf(rank ^ 1));
    const KiB = 1024;
    const boundaries = [256 * KiB, 256 * KiB + 1, 2048 * KiB - 1, 2048 * KiB, 4096 * KiB];
    const next = random(13);
    const sizes = Array.from({ length: count }, (_, index) => (index % 2 === 0 ? (boundaries[index % boundaries.length] as number) : 256 * KiB + Math.floor(next() * 3840 * KiB)));
    if (rank === 0) {
      for (const [index, size] of sizes.entries()) {
        if (index % 2 === 0) await member.sendSync(group, pattern(index, size), 1);
        else await member.sendAsync(group, pattern(index, size), 1);
      }
      await member.barrier(group);
      return { sent: count, singleCopies: device.stats.singleCopies, helpedChunks: device.stats.helpedChunks };
    }
    for (const [index, size] of sizes.entries()) expectPattern(await member.receive(group, 0), index, size);
    await member.barrier(group);
    return count;
  };
}

/** What the receiver of stoppedSender reports. */
export interface StoppedReport {
  readonly messages: number;
  readonly intact: number;
  readonly lateSenders: number;
}

/**
 * Rank 0 sends 16 MiB messages to rank 1 while a shell stops it for 30 ms every 40 ms (SIGSTOP,
 * SIGCONT), until rank 1 has seen it late with a chunk it claimed (or after 300 messages).
 * Rank 1 returns what arrived and how often its sender was late.
 */
export function stoppedSender(master: ColGroupMaster): Body<StoppedReport | number> {
  return async (member, group, rank) => {
    const device = shmDeviceTowards(master, group.endpointOf(rank ^ 1));
    const expected = Buffer.from(pattern(1, 16 * 1024 * 1024));
    if (rank === 0) {
      await member.sendSync(group, process.pid, 1);
      let sent = 0;
      while ((await member.receive(group, 1)) === true) {
        await member.sendSync(group, expected, 1);
        sent += 1;
      }
      return sent;
    }
    const pid = (await member.receive(group, 0)) as number;
    const stopper = spawn('sh', ['-c', `while :; do kill -STOP ${pid}; sleep 0.03; kill -CONT ${pid}; sleep 0.01; done`], { stdio: 'ignore' });
    let messages = 0;
    let intact = 0;
    try {
      while (messages < 300 && (messages < 10 || device.stats.lateSenders === 0)) {
        await member.sendSync(group, true, 0);
        const received = (await member.receive(group, 0)) as Uint8Array;
        messages += 1;
        if (Buffer.from(received.buffer, received.byteOffset, received.byteLength).equals(expected)) intact += 1;
      }
    } finally {
      stopper.kill('SIGKILL');
      await new Promise((resolve) => stopper.once('exit', resolve));
      process.kill(pid, 'SIGCONT');
    }
    await member.sendSync(group, false, 0);
    return { messages, intact, lateSenders: device.stats.lateSenders };
  };
}

/**
 * `calls` allReduces of 1 MiB of doubles, then each member sends 1 MiB to the next and returns at
 * once: a member's last sends are rendezvous data its peers read from its memory just before they
 * close. Returns the calls whose result was right.
 */
export function largeUntilTheEnd(calls: number): Body<number> {
  return async (member, group, rank) => {
    const size = group.size();
    const value = new Float64Array(MIB_OF_DOUBLES).fill(rank + 1);
    let right = 0;
    for (let call = 0; call < calls; call += 1) {
      const sum = await member.allReduce(group, value, Reductions.SUM);
      if (sum[0] === (size * (size + 1)) / 2 && sum[MIB_OF_DOUBLES - 1] === sum[0]) right += 1;
    }
    const [, passed] = await Promise.all([member.sendSync(group, value, (rank + 1) % size), member.receive(group, (rank + size - 1) % size)]);
    expect((passed as Float64Array)[7]).to.equal(((rank + size - 1) % size) + 1);
    return right;
  };
}

const MIB_OF_DOUBLES = (1024 * 1024) / 8;
