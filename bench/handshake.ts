/**
 * The cost of the job-secret handshake on connection set-up: a plain TCP connect on loopback
 * against connect + the mutual challenge–response (src/security/handshake.ts), both ends in this
 * process, in interleaved rounds. Prints best, median and 90th percentile of each and the added
 * time.   node dist/bench/handshake.js [runs=1000]
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Gatekeeper, authenticate } from '../src/security/handshake.js';

const runs = Number(process.argv[2] ?? '1000');
const secret = randomBytes(32);

async function listen(onConnection: (socket: net.Socket) => void): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer({ noDelay: true }, onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as net.AddressInfo).port };
}

/** Microseconds from dialling until the connection is usable (connected, or also authenticated). */
function connectOnce(port: number, handshake: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
    socket.once('error', reject);
    socket.once('connect', () => {
      const ready = handshake ? authenticate(socket, secret, 'client', 10_000) : Promise.resolve();
      ready.then(() => {
        const micros = (performance.now() - started) * 1000;
        socket.destroy();
        resolve(micros);
      }, reject);
    });
  });
}

function summary(samples: number[]): { best: number; median: number; p90: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
  return { best: sorted[0] as number, median: at(0.5), p90: at(0.9) };
}

const plain = await listen((socket) => socket.on('error', () => {}));
const gatekeeper = new Gatekeeper({ what: 'the bench server', secret, deadlineMs: 10_000, maxPending: 256, admit: (socket) => socket.on('error', () => {}) });
const guarded = await listen((socket) => gatekeeper.accept(socket));
const samples = { plain: [] as number[], handshake: [] as number[] };
for (let warmup = 0; warmup < 50; warmup += 1) await Promise.all([connectOnce(plain.port, false), connectOnce(guarded.port, true)]);
for (let run = 0; run < runs; run += 1) {
  samples.plain.push(await connectOnce(plain.port, false));
  samples.handshake.push(await connectOnce(guarded.port, true));
}
const rows = { 'plain connect': summary(samples.plain), 'connect + handshake': summary(samples.handshake) };
console.log(`connection set-up on loopback, ${runs} runs each (µs):`);
for (const [name, { best, median, p90 }] of Object.entries(rows)) console.log(`  ${name.padEnd(20)} best ${best.toFixed(0).padStart(5)}  median ${median.toFixed(0).padStart(5)}  p90 ${p90.toFixed(0).padStart(5)}`);
console.log(`  handshake adds       best ${(rows['connect + handshake'].best - rows['plain connect'].best).toFixed(0).padStart(5)}  median ${(rows['connect + handshake'].median - rows['plain connect'].median).toFixed(0).padStart(5)}`);
plain.server.close();
guarded.server.close();
