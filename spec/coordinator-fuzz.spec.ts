/**
 * Fuzzing a running job's ports (issue 11): malformed length prefixes, random msgpack values,
 * well-shaped control messages with wrong field types and ranges, huge declared lengths,
 * slowloris half-messages and idle connections, from strangers and from peers that know the
 * secret; random data frames against a tcp device. No crash, no false loss, correct results,
 * bounded growth of process 0's memory. A bounded number runs by default (FUZZ_CASES below);
 * CCJS_FULL_FUZZ=1 runs 100,000 control inputs and 100,000 data frames (a few minutes).
 * CCJS_FUZZ_SEED picks the random sequence (printed in the test title).
 */
import { expect } from 'chai';
import type net from 'node:net';
import { randomBytes } from 'node:crypto';
import { decode } from '@msgpack/msgpack';
import type { SpawnedProcess } from './harness.js';
import { authenticated, closesWithin, controlFrame, guardedJobForSuite, inParallel, probe, sleep } from './strangers.js';
import { Coordinator } from '../src/runtime/coordinator.js';
import { mulberry32 } from '../examples/common.js';
import { helloBytes } from '../transport/stream.js';

const FULL = process.env.CCJS_FULL_FUZZ === '1';
const CONTROL_CASES = FULL ? 100_000 : 2_000;
const DATA_CASES = FULL ? 100_000 : 500;
const IDLE_CONNECTIONS = 200;
const SEED = Number(process.env.CCJS_FUZZ_SEED ?? Date.now() % 1_000_000);
/** The bound on process 0's resident set growth while it is fuzzed. */
const RSS_GROWTH_BOUND = 64 * 1024 * 1024;
/** Every connection of the fuzzed job authenticates within min(timeoutMs, 10 s). */
const TIMEOUT_MS = 5000;


class Fuzzer {
  readonly random: () => number;
  constructor(seed: number) {
    this.random = mulberry32(seed);
  }

  int(below: number): number {
    return Math.floor(this.random() * below);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  bytes(length: number): Buffer {
    return Buffer.from(Array.from({ length }, () => this.int(256)));
  }

  /** Any msgpack value, nested up to `depth`. */
  value(depth = 3): unknown {
    const kind = this.int(depth > 0 ? 10 : 7);
    switch (kind) {
      case 0: return null;
      case 1: return this.random() < 0.5;
      case 2: return this.pick([0, -1, 1, 0.5, 2 ** 31, 2 ** 40, -(2 ** 53), Number.MAX_VALUE, NaN, Infinity, this.int(1000)]);
      case 3: return 'x'.repeat(this.pick([0, 1, 17, 5000]));
      case 4: return this.pick(['hello', 'join', 'get', 'abort', 'dump', 'bye', 'missing', 'world', 'lost', '__proto__', 'length', 'constructor']);
      case 5: return this.bytes(this.int(64));
      case 6: return BigInt(this.pick([0, 1, -1])) * 2n ** 63n;
      case 7: return Array.from({ length: this.int(6) }, () => this.value(depth - 1));
      default: {
        const map: Record<string, unknown> = {};
        for (let i = this.int(6); i > 0; i -= 1) map[this.pick(['type', 'group', 'size', 'processRank', 'length', 'key', 'members', 'toString', String(this.int(9))])] = this.value(depth - 1);
        return map;
      }
    }
  }

  /**
   * A message of a real type with one field made wrong (type, range, length) or missing; some
   * such values fit the field after all. `surelyBad`: only values no field accepts (null, missing).
   */
  misshapen(surelyBad = false): Record<string, unknown> {
    const templates: Record<string, unknown>[] = [
      { type: 'hello', processRank: 2, processCount: 4, threadRank: 0, threadCount: 1, jobKey: '', host: 'h', hostname: 'h', machine: 'h', pid: 1, receiveWindow: 1024, addresses: {} },
      { type: 'join', group: 'guarded', localId: 0, order: 0, key: [] },
      { type: 'get', group: 'guarded', size: 4, timeoutMs: 100 },
      { type: 'abort', endpointRank: 2, message: 'injected' },
      { type: 'dump', endpointRank: 1 },
    ];
    const message = { ...this.pick(templates) };
    const field = this.pick(Object.keys(message).filter((key) => key !== 'type'));
    if (surelyBad) message[field] = this.pick([null, undefined]);
    else if (this.random() < 0.1) delete message[field];
    else message[field] = this.pick([0.5, -1, 2 ** 40, 'x', null, [], {}, 'y'.repeat(300_000), Array(100).fill(1), { length: 1e9 }, NaN, true]);
    return message;
  }

  /** A length prefix that lies, or bytes that are no frame at all; `surelyBad`: a length over the limit. */
  malformedFrame(surelyBad = false): Buffer {
    const prefix = Buffer.alloc(4);
    const overLimit = [0xffff_ffff, 0x4000_0000, 2 << 20, (1 << 20) + 1];
    prefix.writeUInt32LE(this.pick(surelyBad ? overLimit : [...overLimit, 0, 3, this.int(1 << 20)]), 0);
    return Buffer.concat([prefix, this.bytes(this.int(256))]);
  }
}

interface Case {
  readonly authenticate: boolean;
  readonly payload: Buffer;
  /** A slowloris: the payload is the start of something bigger; the fuzzer gives up after a while. */
  readonly half?: boolean;
}

function controlCase(fuzz: Fuzzer): Case {
  const authenticate = fuzz.random() < 0.7;
  switch (fuzz.int(6)) {
    case 0: return { authenticate, payload: fuzz.malformedFrame() };
    case 1: return { authenticate, payload: controlFrame(fuzz.value()) };
    case 2: return { authenticate, payload: controlFrame(fuzz.misshapen()) };
    case 3: return { authenticate, payload: fuzz.bytes(1 + fuzz.int(512)) };
    case 4: {
      // A frame cut short: a slowloris half-message.
      const whole = controlFrame(fuzz.value());
      return { authenticate, payload: whole.subarray(0, Math.max(1, fuzz.int(whole.length))), half: true };
    }
    default: {
      // A valid hello for a rank that is taken: refused, and the job goes on.
      const hello = { type: 'hello', processRank: fuzz.int(4), processCount: 4, threadRank: 0, threadCount: 1, jobKey: '', host: 'h', hostname: 'h', machine: 'h', pid: 1, receiveWindow: 1024, addresses: {} };
      return { authenticate, payload: controlFrame(hello) };
    }
  }
}

function dataCase(fuzz: Fuzzer): Case {
  const authenticate = fuzz.random() < 0.7;
  const hello = helloBytes(fuzz.pick([0, 1, 2, 3, 99]), fuzz.bytes(fuzz.int(40)));
  switch (fuzz.int(3)) {
    case 0: return { authenticate, payload: fuzz.bytes(1 + fuzz.int(512)) };
    case 1: return { authenticate, payload: Buffer.concat([hello, fuzz.bytes(fuzz.int(512))]) };
    default: {
      const corrupted = Buffer.from(hello);
      for (let i = 1 + fuzz.int(4); i > 0; i -= 1) corrupted[fuzz.int(corrupted.length)] = fuzz.int(256);
      return { authenticate, payload: corrupted };
    }
  }
}

/** Sends one case on a connection of its own; returns whether the job's side closed it. */
async function send(port: number, secret: Buffer, fuzzCase: Case): Promise<boolean> {
  let socket: net.Socket;
  let closed: Promise<void>;
  if (fuzzCase.authenticate) {
    socket = await authenticated(port, secret);
    closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.resume();
  } else {
    const stranger = await probe(port);
    ({ socket, closed } = stranger);
  }
  socket.write(fuzzCase.payload);
  const closedByJob = await closesWithin(closed, fuzzCase.half ? 50 : 500);
  socket.destroy();
  return closedByJob;
}

describe(`fuzzing a running job (seed ${SEED}${FULL ? ', full' : ''})`, function () {
  this.timeout(FULL ? 3_600_000 : 180_000);
  const secret = randomBytes(32);
  const guarded = guardedJobForSuite({ CCJS_SECRET: secret.toString('hex'), CCJS_TIMEOUT_MS: String(TIMEOUT_MS) });

  it(`holds ${IDLE_CONNECTIONS} idle and 20 half-greeting unauthenticated connections, closing each within its deadline + 1 s`, async () => {
    const { coordinatorPort } = guarded();
    const started = Date.now();
    const idle = await Promise.all(Array.from({ length: IDLE_CONNECTIONS }, () => probe(coordinatorPort)));
    const halfGreetings = await Promise.all(Array.from({ length: 20 }, () => probe(coordinatorPort)));
    for (const half of halfGreetings) half.socket.write(Buffer.from('CCJSAUT1 and less than a nonce'));
    const closed = await Promise.all([...idle, ...halfGreetings].map((connection) => closesWithin(connection.closed, TIMEOUT_MS + 1000 - (Date.now() - started))));
    expect(closed.every(Boolean)).to.equal(true);
  });

  it(`survives ${CONTROL_CASES} fuzzed control inputs, from strangers and from peers with the secret`, async () => {
    const { processes: job, coordinatorPort } = guarded();
    const fuzz = new Fuzzer(SEED);
    const cases = Array.from({ length: CONTROL_CASES }, () => controlCase(fuzz));
    let closedByJob = 0;
    await inParallel(cases, 16, async (fuzzCase) => {
      if (await send(coordinatorPort, secret, fuzzCase)) closedByJob += 1;
    });
    // Every input but the half-messages (and a short stranger's greeting, which waits for its deadline) is closed at once.
    expect(closedByJob).to.be.above(CONTROL_CASES * 0.6);
    expect((job[0] as SpawnedProcess).child.exitCode).to.equal(null);
  });

  it(`survives ${DATA_CASES} fuzzed data frames against a tcp device`, async () => {
    const { processes: job, dataPort } = guarded();
    expect(dataPort).to.be.above(0);
    const fuzz = new Fuzzer(SEED + 1);
    const cases = Array.from({ length: DATA_CASES }, () => dataCase(fuzz));
    let closedByJob = 0;
    await inParallel(cases, 16, async (fuzzCase) => {
      if (await send(dataPort, secret, fuzzCase)) closedByJob += 1;
    });
    expect(closedByJob).to.be.above(DATA_CASES * 0.6);
    expect((job[1] as SpawnedProcess).child.exitCode).to.equal(null);
  });

  it('finishes with correct results, no false loss, and bounded memory in process 0', async () => {
    const { processes: job } = guarded();
    guarded().finish();
    const codes = await Promise.all(job.map((spawned) => spawned.exited));
    expect(codes, job.map((spawned) => spawned.stderr.slice(-2000)).join('\n')).to.deep.equal([0, 0, 0, 0]);
    for (const spawned of job) {
      expect(spawned.stdout).to.match(/GUARDED ok \d+/);
      expect(spawned.stderr).not.to.match(/was lost|aborting the job|job was aborted|PeerLostError/);
    }
    const [, atReady, peak] = /RSS (\d+) (\d+)/.exec((job[0] as SpawnedProcess).stdout) ?? [];
    const growth = Number(peak) - Number(atReady);
    console.log(`      process 0: RSS ${(Number(atReady) / 2 ** 20).toFixed(1)} MiB at ready, peak ${(Number(peak) / 2 ** 20).toFixed(1)} MiB (growth ${(growth / 2 ** 20).toFixed(1)} MiB, bound ${RSS_GROWTH_BOUND / 2 ** 20} MiB)`);
    expect(growth).to.be.below(RSS_GROWTH_BOUND);
  });
});

describe('a coordinator fuzzed by an admitted endpoint', function () {
  this.timeout(60_000);

  it('closes only that endpoint on its first bad message, reports it lost once, and keeps serving the others', async () => {
    const fuzz = new Fuzzer(SEED + 2);
    const secret = randomBytes(32);
    for (let round = 0; round < 20; round += 1) {
      const coordinator = await Coordinator.start('127.0.0.1', 0, 2, 1, 'job', secret, TIMEOUT_MS);
      const received: Record<string, unknown>[][] = [[], []];
      const endpoints = await Promise.all([0, 1].map(async (rank) => {
        const socket = await authenticated(coordinator.port, secret);
        socket.on('data', (chunk: Buffer) => {
          // Small frames, each in one piece on loopback: enough for this test's bookkeeping.
          for (let offset = 0; offset + 4 <= chunk.length; offset += 4 + chunk.readUInt32LE(offset)) {
            received[rank]?.push(decode(chunk.subarray(offset + 4, offset + 4 + chunk.readUInt32LE(offset))) as Record<string, unknown>);
          }
        });
        socket.write(controlFrame({ type: 'hello', processRank: rank, processCount: 2, threadRank: 0, threadCount: 1, jobKey: 'job', host: 'h', hostname: 'h', machine: 'h', pid: 1, receiveWindow: 1024, addresses: {} }));
        return socket;
      }));
      const [first, second] = endpoints as [net.Socket, net.Socket];
      // Valid but random traffic, then one bad message.
      for (let i = 0; i < 10; i += 1) {
        const group = `g${fuzz.int(5)}`;
        second.write(controlFrame(fuzz.pick([
          { type: 'join', group, localId: fuzz.int(3), order: i, key: fuzz.random() < 0.5 ? [] : [fuzz.int(9)] },
          { type: 'get', group, size: 1 + fuzz.int(4), timeoutMs: 50 },
          { type: 'dump', endpointRank: 1 },
          { type: 'missing' },
        ])));
      }
      const secondClosed = new Promise<void>((resolve) => second.once('close', () => resolve()));
      second.write(fuzz.random() < 0.5 ? controlFrame(fuzz.misshapen(true)) : fuzz.malformedFrame(true));
      expect(await closesWithin(secondClosed, 2000)).to.equal(true);
      // The other endpoint is told once, and can still form a group.
      first.write(Buffer.concat([controlFrame({ type: 'join', group: 'after', localId: 0, order: 0, key: [] }), controlFrame({ type: 'get', group: 'after', size: 1, timeoutMs: 1000 })]));
      for (let waited = 0; waited < 2000 && !received[0]?.some((message) => message.type === 'group' && message.group === 'after'); waited += 20) await sleep(20);
      expect(received[0]?.filter((message) => message.type === 'lost').map((message) => message.endpointRank)).to.deep.equal([1]);
      expect(received[0]?.some((message) => message.type === 'group' && message.group === 'after')).to.equal(true);
      first.write(controlFrame({ type: 'bye' }));
      first.end();
      await coordinator.close();
    }
  });
});
