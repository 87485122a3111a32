/**
 * The cost of the job-secret handshake on connection set-up: a plain TCP connect on loopback
 * against connect + the mutual challenge–response (src/security/handshake.ts), and against a TLS
 * connection (CCJS_TLS, src/security/tls.ts) with the challenge–response inside, both ends in this
 * process, in interleaved rounds. Prints best, median and 90th percentile of each and the added
 * time.   node dist/bench/handshake.js [runs=1000]
 */
import net from 'node:net';
import tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Gatekeeper, authenticate } from '../src/security/handshake.js';
import { tlsClientOptions, tlsServerOptions } from '../src/security/tls.js';

const runs = Number(process.argv[2] ?? '1000');
const secret = randomBytes(32);

type Setup = 'plain' | 'handshake' | 'tls';

async function listen(onConnection: (socket: net.Socket) => void, encrypted = false): Promise<{ server: net.Server; port: number }> {
  const server = encrypted ? tls.createServer({ ...tlsServerOptions(secret, 10_000), noDelay: true }, onConnection) : net.createServer({ noDelay: true }, onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as net.AddressInfo).port };
}

/** Microseconds from dialling until the connection is usable (connected, or also authenticated). */
function connectOnce(port: number, setup: Setup): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = setup === 'tls' ? tls.connect({ ...tlsClientOptions(secret), host: '127.0.0.1', port }).setNoDelay(true) : net.connect({ host: '127.0.0.1', port, noDelay: true });
    socket.once('error', reject);
    socket.once(setup === 'tls' ? 'secureConnect' : 'connect', () => {
      const ready = setup === 'plain' ? Promise.resolve() : authenticate(socket, secret, 'client', 10_000);
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
const encrypted = await listen((socket) => gatekeeper.accept(socket), true);
const ports: Record<Setup, number> = { plain: plain.port, handshake: guarded.port, tls: encrypted.port };
const samples: Record<Setup, number[]> = { plain: [], handshake: [], tls: [] };
const setups = Object.keys(samples) as Setup[];
for (let warmup = 0; warmup < 50; warmup += 1) for (const setup of setups) await connectOnce(ports[setup], setup);
for (let run = 0; run < runs; run += 1) for (const setup of setups) samples[setup].push(await connectOnce(ports[setup], setup));
const names: Record<Setup, string> = { plain: 'plain connect', handshake: 'connect + handshake', tls: 'TLS + handshake' };
const rows = Object.fromEntries(setups.map((setup) => [setup, summary(samples[setup])])) as Record<Setup, ReturnType<typeof summary>>;
console.log(`connection set-up on loopback, ${runs} runs each (µs):`);
for (const setup of setups) console.log(`  ${names[setup].padEnd(20)} best ${rows[setup].best.toFixed(0).padStart(5)}  median ${rows[setup].median.toFixed(0).padStart(5)}  p90 ${rows[setup].p90.toFixed(0).padStart(5)}`);
for (const setup of ['handshake', 'tls'] as const) {
  console.log(`  ${`${names[setup]} adds`.padEnd(20)} best ${(rows[setup].best - rows.plain.best).toFixed(0).padStart(5)}  median ${(rows[setup].median - rows.plain.median).toFixed(0).padStart(5)}`);
}
for (const { server } of [plain, guarded, encrypted]) server.close();
