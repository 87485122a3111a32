/**
 * The UCX device beside ucx_perftest, in one run, over UCX_TLS=tcp and UCX_TLS=sm (rounds
 * alternate the measurements in fresh processes, so that all see the same machine noise):
 *   - 8-byte hop between two processes: ccjs (Float64Array(1)) beside ucx_perftest tag_lat;
 *   - ping-pong bandwidth at 1 MiB and 16 MiB: ccjs (sendSync, MPI_Send's contract; received into
 *     new memory, and into one buffer as MPI_Recv and ucx_perftest do) beside ucx_perftest tag_lat
 *     at the same size (a ping-pong too), and tag_bw (a stream) for scale;
 *   - ucx_perftest tag_lat at each size again with -e, the peer error handling ccjs runs with
 *     (and its UCX_{POSIX,SYSV}_ERROR_HANDLING=y), which changes UCX's protocols;
 *   - the time from a kill -9 of a process to the PeerLostError of a receive pending on it.
 *
 *   node dist/bench/ucx.js [--quick] [--rounds N]
 *   node dist/bench/ucx.js report [ROUNDS]   (redraw the table and chart from bench/results/ucx.json)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember, PeerLostError } from '../src/index.js';
import { collectSamples, hopEndpoint, hopRepeats } from './hopping.js';
import type { Repeats, Samples, Series } from './hopping.js';
import { Progress, warnIfLoaded } from './progress.js';
import { writeComparison } from './comparison.js';
import type { Row } from './comparison.js';
import { freeLoopbackPort, runJob } from './job.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const quick = process.argv.includes('--quick');
const MiB = 1024 * 1024;
const TRANSPORTS = ['tcp', 'sm'] as const;

const { small: SMALL, oneMiB: ONE_MIB, sixteenMiB: SIXTEEN_MIB } = hopRepeats(quick);
const SIZES = [
  ['8 B', 8, SMALL],
  ['1 MiB', MiB, ONE_MIB],
  ['16 MiB', 16 * MiB, SIXTEEN_MIB],
] as const;

const SERIES: Series[] = [
  { name: '8 B', value: Float64Array.of(1.5), repeats: SMALL },
  { name: '1 MiB', value: new Float64Array(MiB / 8).fill(1.5), repeats: ONE_MIB, sync: true },
  { name: '16 MiB', value: new Float64Array((16 * MiB) / 8).fill(1.5), repeats: SIXTEEN_MIB, sync: true },
  { name: '1 MiB into a buffer', value: new Float64Array(MiB / 8).fill(1.5), repeats: ONE_MIB, sync: true, into: true },
  { name: '16 MiB into a buffer', value: new Float64Array((16 * MiB) / 8).fill(1.5), repeats: SIXTEEN_MIB, sync: true, into: true },
];

// ---- ccjs ----

/** Rank 0 waits on a receive from rank 1, which the benchmark kills; prints when the receive failed. */
class LossWatcher extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('loss', 2);
    if (group.getRank(this) === 1) {
      process.stdout.write('ready\n');
      await new Promise(() => undefined);
    }
    try {
      await this.receive(group, 1);
    } catch (error) {
      if (!(error instanceof PeerLostError)) throw error;
      process.stdout.write(`lost ${Date.now()}\n`);
    }
  }
}

async function lossEndpoint(): Promise<void> {
  const master = await ColGroupMaster.create({ abortOnError: false });
  const member = new LossWatcher(master);
  master.addMember('loss', member);
  await member.start();
  process.exit(0);
}

/** ms from the kill -9 of rank 1 to rank 0's PeerLostError. */
async function timeLoss(tls: string): Promise<number> {
  const coordinator = `127.0.0.1:${await freeLoopbackPort()}`;
  const children = [0, 1].map((rank) =>
    spawn(process.execPath, [SCRIPT, 'loss'], {
      env: { ...process.env, CCJS_RANK: String(rank), CCJS_SIZE: '2', CCJS_COORDINATOR: coordinator, CCJS_TRANSPORT: 'ucx', UCX_TLS: tls },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const [watcher, victim] = children as [ReturnType<typeof spawn>, ReturnType<typeof spawn>];
  await new Promise<void>((resolve) => victim.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve()));
  // Let the receive reach the engine first.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const killedAt = Date.now();
  victim.kill('SIGKILL');
  const lostAt = await new Promise<number>((resolve, reject) => {
    watcher.stdout?.on('data', (chunk: Buffer) => {
      const at = /lost (\d+)/.exec(chunk.toString())?.[1];
      if (at !== undefined) resolve(Number(at));
    });
    watcher.on('exit', (code) => code !== 0 && reject(new Error(`the watcher exited with ${code}`)));
  });
  return lostAt - killedAt;
}

// ---- ucx_perftest ----

/** The environment and flag of ucx_perftest with the peer error handling ccjs runs with (transport/ucx's setUcxDefaults). */
const PEER_ERRORS = { env: { UCX_POSIX_ERROR_HANDLING: 'y', UCX_SYSV_ERROR_HANDLING: 'y' }, flag: '-e' };

/**
 * µs per hop (tag_lat) or per message (tag_bw) of each repetition, server and client on this
 * host; `peerErrors`: with UCP_ERR_HANDLING_MODE_PEER, as ccjs.
 */
async function perftest(tls: string, test: 'tag_lat' | 'tag_bw', bytes: number, repeats: Repeats, peerErrors = false): Promise<number[]> {
  const samples: number[] = [];
  for (let repetition = 0; repetition < repeats.repetitions; repetition += 1) {
    const port = String(await freeLoopbackPort());
    const args = ['-t', test, '-s', String(bytes), '-n', String(repeats.trips), '-w', String(repeats.warmUp), '-p', port, ...(peerErrors ? [PEER_ERRORS.flag] : [])];
    const env = { ...process.env, UCX_TLS: tls, ...(peerErrors ? PEER_ERRORS.env : {}) };
    // (Its stdout stays unread: a full pipe would stop it while spawnSync blocks this process.)
    const server = spawn('ucx_perftest', args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let serverErrors = '';
    server.stderr.on('data', (chunk: Buffer) => (serverErrors += chunk.toString()));
    server.on('exit', (code, signal) => (serverErrors += `(exited: ${code ?? signal})\n`));
    // The server listens once it has started, later on a loaded machine: the client tries again.
    let client = spawnSync('ucx_perftest', ['127.0.0.1', ...args], { env, encoding: 'utf8' });
    for (let attempt = 1; attempt < 50 && / connect\(\) failed: Connection refused/.test(`${client.stdout}${client.stderr}`); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      client = spawnSync('ucx_perftest', ['127.0.0.1', ...args], { env, encoding: 'utf8' });
    }
    server.kill();
    // "Final: iterations p50-latency avg-latency overall-latency avg-MB/s overall-MB/s ..."
    const final = /Final:\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)/.exec(client.stdout);
    if (final === null) throw new Error(`ucx_perftest printed no result:\n${client.stdout}${client.stderr}\nits server:\n${serverErrors}`);
    samples.push(Number(final[3]));
  }
  return samples;
}

function hasPerftest(): boolean {
  return spawnSync('ucx_perftest', ['-h'], { encoding: 'utf8' }).error === undefined;
}

// ---- the run ----

async function orchestrate(): Promise<void> {
  warnIfLoaded();
  const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 3;
  const reference = hasPerftest();
  const { all, keep } = collectSamples();
  const progress = new Progress('ucx', rounds * TRANSPORTS.length * (2 + (reference ? 8 : 0)));
  for (let round = 1; round <= rounds; round += 1) {
    for (const tls of TRANSPORTS) {
      process.env.UCX_TLS = tls;
      keep(JSON.parse(await runJob(SCRIPT, 2, ['hops', tls, ...flags()], 'ucx')) as Samples);
      progress.tick(`round ${round}: ccjs over UCX_TLS=${tls}`);
      delete process.env.UCX_TLS;
      keep({ [`${tls} kill -9`]: [await timeLoss(tls)] });
      progress.tick(`round ${round}: kill -9 over UCX_TLS=${tls}`);
      if (!reference) continue;
      for (const [name, bytes, repeats] of SIZES) {
        keep({ [`perftest ${tls} ${name}`]: await perftest(tls, 'tag_lat', bytes, repeats) });
        progress.tick(`round ${round}: ucx_perftest tag_lat ${name} over ${tls}`);
        keep({ [`perftest -e ${tls} ${name}`]: await perftest(tls, 'tag_lat', bytes, repeats, true) });
        progress.tick(`round ${round}: ucx_perftest tag_lat -e ${name} over ${tls}`);
      }
      for (const [name, bytes, repeats] of SIZES.slice(1)) {
        keep({ [`perftest bw ${tls} ${name}`]: await perftest(tls, 'tag_bw', bytes, repeats) });
        progress.tick(`round ${round}: ucx_perftest tag_bw ${name} over ${tls}`);
      }
    }
  }
  progress.finish();
  report(all, rounds, reference);
}

/** Writes the table, the samples and the chart; `reference`: whether ucx_perftest ran. */
function report(all: Samples, rounds: number, reference: boolean): void {
  const rows: Row[] = TRANSPORTS.flatMap((tls) => [
    { name: `ucx_perftest tag_lat, 8 B hop (UCX_TLS=${tls})`, samples: `perftest ${tls} 8 B`, unit: 'µs' },
    { name: `ucx_perftest tag_lat -e (peer error handling, as ccjs), 8 B hop (UCX_TLS=${tls})`, samples: `perftest -e ${tls} 8 B`, unit: 'µs' },
    { name: `ccjs ucx, 8 B hop (UCX_TLS=${tls})`, samples: `${tls} 8 B`, unit: 'µs', reference: `perftest ${tls} 8 B`, target: tls === 'tcp' ? '≤ 1.5×' : '≤ 1 µs', label: `8 B hop over ${tls}` },
    { name: `the same against ucx_perftest -e (UCX_TLS=${tls})`, samples: `${tls} 8 B`, unit: 'µs', reference: `perftest -e ${tls} 8 B` },
    ...SIZES.slice(1).flatMap(([name, bytes]): Row[] => [
      { name: `ucx_perftest tag_lat, ${name} ping-pong (UCX_TLS=${tls})`, samples: `perftest ${tls} ${name}`, unit: 'MB/s', bytes },
      { name: `ucx_perftest tag_lat -e (peer error handling, as ccjs), ${name} ping-pong (UCX_TLS=${tls})`, samples: `perftest -e ${tls} ${name}`, unit: 'MB/s', bytes },
      { name: `ucx_perftest tag_bw, ${name} stream (UCX_TLS=${tls})`, samples: `perftest bw ${tls} ${name}`, unit: 'MB/s', bytes },
      { name: `ccjs ucx, ${name} ping-pong, sendSync (UCX_TLS=${tls})`, samples: `${tls} ${name}`, unit: 'MB/s', bytes, reference: `perftest ${tls} ${name}`, target: '≥ 0.9×', label: `${name} ping-pong over ${tls}` },
      { name: `the same against ucx_perftest -e (UCX_TLS=${tls})`, samples: `${tls} ${name}`, unit: 'MB/s', bytes, reference: `perftest -e ${tls} ${name}` },
      { name: `ccjs ucx, ${name} ping-pong, sendSync, receive into a buffer (UCX_TLS=${tls})`, samples: `${tls} ${name} into a buffer`, unit: 'MB/s', bytes, reference: `perftest ${tls} ${name}`, target: '≥ 0.9×', label: `${name} into a buffer over ${tls}` },
      { name: `the same against ucx_perftest -e (UCX_TLS=${tls})`, samples: `${tls} ${name} into a buffer`, unit: 'MB/s', bytes, reference: `perftest -e ${tls} ${name}` },
    ]),
    { name: `kill -9 to PeerLostError of a pending receive (UCX_TLS=${tls})`, samples: `${tls} kill -9`, unit: 'ms' },
  ]);
  const notes = reference ? [] : ['Not measured: ucx_perftest (apt-get install ucx-utils)'];
  const text = writeComparison(RESULTS, { name: 'ucx', title: 'ccjs over UCX', rows, notes }, all, `${rounds} rounds${quick ? ' (--quick)' : ''}`);
  process.stdout.write(`\n${text}`);
}

function flags(): string[] {
  return quick ? ['--quick'] : [];
}

const role = process.argv[2];
if (role === 'hops') await hopEndpoint(process.argv[3] as string, SERIES);
else if (role === 'loss') await lossEndpoint();
else if (role === 'report') {
  const all = JSON.parse(fs.readFileSync(path.join(RESULTS, 'ucx.json'), 'utf8')) as Samples;
  report(all, Number(process.argv[3]) || 3, Object.keys(all).some((name) => name.startsWith('perftest')));
}
else await orchestrate();
