/**
 * Ping-pong between two processes over TCP on this machine: ccjs (sendAsync/receive of a
 * Float64Array, and of a small object) side by side with a raw Node `net` socket ping-pong that
 * frames messages the simplest way. Reports the half round-trip time (minimum over repetitions,
 * the performance-model paper, section 3) and bandwidth, as a table, JSON and an SVG plot under bench/results/.
 *
 *   node dist/bench/pingpong.js [--quick] [--rounds N]
 *   node dist/bench/pingpong.js report      (redraw the table and plots from bench/results/pingpong.json)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import type { ColGroup } from '../src/index.js';
import { lineChart } from './svg.js';
import { Progress, warnIfLoaded } from './progress.js';
import { formatBytes } from './units.js';
import { runJob, runScript } from './job.js';
import { rawClient, rawEchoServer } from './raw-net.js';

const SCRIPT = fileURLToPath(import.meta.url);
const RESULTS = path.resolve(path.dirname(SCRIPT), '..', '..', 'bench', 'results');

interface Sample {
  readonly bytes: number;
  /** Half round trip, microseconds (minimum over repetitions). */
  readonly microseconds: number;
}

const quick = process.argv.includes('--quick');
const SIZES = quick ? [8, 1024, 65536, 1 << 20, 16 << 20] : [8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20, 16 << 20];
const CCJS_ASYNC = 'ccjs sendAsync';
const CCJS_SYNC = 'ccjs sendSync';
const CCJS_OBJECT = 'ccjs small object (msgpack)';
const SMALL_OBJECT = { id: 7, name: 'pivot', value: 3.25, flags: [true, false] };

/** Round trips per repetition: many for small messages so timer resolution does not matter. */
function roundTrips(bytes: number): number {
  const base = quick ? 200 : 1000;
  return Math.max(4, Math.min(base, Math.floor((base * 4096) / Math.max(bytes, 4096))));
}
const REPETITIONS = quick ? 3 : 5;

/** Times `repetitions` batches of `trips` round trips of `once()`; returns the best half round trip in µs. */
async function timeRoundTrips(trips: number, once: () => Promise<void>): Promise<number> {
  for (let i = 0; i < Math.min(trips, 50); i += 1) await once();
  let best = Infinity;
  for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < trips; i += 1) await once();
    const elapsed = Number(process.hrtime.bigint() - start) / 1000;
    best = Math.min(best, elapsed / trips / 2);
  }
  return best;
}

// ---------- raw Node net ----------

async function rawSamples(port: number): Promise<Sample[]> {
  const client = await rawClient(port);
  const samples: Sample[] = [];
  for (const bytes of SIZES) {
    const payload = new Uint8Array(new Float64Array(bytes / 8).fill(1.5).buffer);
    samples.push({ bytes, microseconds: await timeRoundTrips(roundTrips(bytes), () => client.roundTrip(payload)) });
  }
  client.close();
  return samples;
}

// ---------- ccjs ----------

class PingPong extends ColMember {
  results: Record<string, Sample[]> = {};

  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('pingpong', 2);
    const rank = group.getRank(this);
    const send = { sendAsync: this.sendAsync.bind(this), sendSync: this.sendSync.bind(this) };
    const exchange = async (group: ColGroup, value: unknown, call: keyof typeof send) => {
      if (rank === 0) {
        await send[call](group, value, 1);
        await this.receive(group, 1);
      } else {
        await send[call](group, await this.receive(group, 0), 0);
      }
    };
    const series = async (name: string, bytes: number, value: unknown, call: keyof typeof send) => {
      const microseconds = await timeRoundTrips(roundTrips(bytes), () => exchange(group, value, call));
      (this.results[name] ??= []).push({ bytes, microseconds });
    };
    for (const bytes of SIZES) await series(CCJS_ASYNC, bytes, new Float64Array(bytes / 8).fill(1.5), 'sendAsync');
    for (const bytes of SIZES) await series(CCJS_SYNC, bytes, new Float64Array(bytes / 8).fill(1.5), 'sendSync');
    await series(CCJS_OBJECT, 0, SMALL_OBJECT, 'sendAsync');
  }
}

async function ccjsRank(): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = new PingPong(master);
  master.addMember('pingpong', member);
  await member.start();
  if (master.rank === 0) process.stdout.write(`${JSON.stringify(member.results)}\n`);
}

// ---------- orchestration ----------

/** Flags this script was given, passed on to the processes it starts. */
const passedFlags = process.argv.slice(2).filter((flag) => flag === '--quick');

async function measureRaw(): Promise<Sample[]> {
  let serverDone: Promise<string> | undefined;
  const port = await new Promise<number>((resolve) => {
    serverDone = runScript(SCRIPT, ['raw-server', ...passedFlags], {}, (text) => resolve(Number(text.trim())));
  });
  const samples = JSON.parse(await runScript(SCRIPT, ['raw-client', String(port), ...passedFlags])) as Sample[];
  await serverDone;
  return samples;
}

async function measureCcjs(): Promise<Record<string, Sample[]>> {
  return JSON.parse(await runJob(SCRIPT, 2, ['ccjs', ...passedFlags])) as Record<string, Sample[]>;
}

function keepBest(into: Map<string, Sample[]>, name: string, samples: Sample[]): void {
  const earlier = into.get(name);
  into.set(name, earlier ? samples.map((sample, i) => (sample.microseconds < earlier[i].microseconds ? sample : earlier[i])) : samples);
}

/** MB/s (bytes per µs). */
const bandwidth = (sample: Sample) => (sample.bytes === 0 ? 0 : sample.bytes / sample.microseconds);

async function orchestrate(): Promise<void> {
  warnIfLoaded();
  const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 2;
  const series = new Map<string, Sample[]>();
  const progress = new Progress('ping-pong', rounds * 2);
  // Alternate raw and ccjs runs so that both see the same machine noise; keep each one's best.
  for (let round = 0; round < rounds; round += 1) {
    keepBest(series, 'raw net', await measureRaw());
    progress.tick(`round ${round + 1}: raw net`);
    for (const [name, samples] of Object.entries(await measureCcjs())) keepBest(series, name, samples);
    progress.tick(`round ${round + 1}: ccjs`);
  }
  progress.finish();
  process.stdout.write(`\nTCP ping-pong, 2 processes on 127.0.0.1 (half round trip, best of ${REPETITIONS} × ${rounds} runs)\n`);
  report(series);
}

/** Writes the table, the samples and the plots of a run's series. */
function report(series: ReadonlyMap<string, Sample[]>): void {
  const raw = series.get('raw net') as Sample[];
  const ours = [CCJS_ASYNC, CCJS_SYNC].map((name) => series.get(name) as Sample[]);
  const lines = [
    '| size | raw net µs | sendAsync µs | sendSync µs | sendAsync/raw | sendSync/raw | raw net GB/s | sendAsync GB/s | sendSync GB/s |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  raw.forEach((sample, i) => {
    const [asynchronous, synchronous] = ours.map((samples) => samples[i]);
    const cells = [
      formatBytes(sample.bytes),
      ...[sample, asynchronous, synchronous].map((s) => s.microseconds.toFixed(1)),
      ...[asynchronous, synchronous].map((s) => (s.microseconds / sample.microseconds).toFixed(2)),
      ...[sample, asynchronous, synchronous].map((s) => (bandwidth(s) / 1000).toFixed(2)),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  });
  const object = (series.get(CCJS_OBJECT) as Sample[])[0];
  lines.push('', `ccjs sendAsync of a small object ${JSON.stringify(SMALL_OBJECT)} (msgpack): ${object.microseconds.toFixed(1)} µs per hop`);
  const table = lines.join('\n');
  process.stdout.write(`\n${table}\n`);
  fs.mkdirSync(RESULTS, { recursive: true });
  fs.writeFileSync(path.join(RESULTS, 'pingpong.json'), `${JSON.stringify(Object.fromEntries(series), null, 2)}\n`);
  fs.writeFileSync(path.join(RESULTS, 'pingpong.md'), `${table}\n`);
  const plotted = [
    { name: 'raw net', points: raw },
    { name: 'ccjs sendAsync', points: ours[0] },
    { name: 'ccjs sendSync', points: ours[1] },
  ];
  const chartSeries = (value: (sample: Sample) => number) => plotted.map((s) => ({ name: s.name, points: s.points.map((p) => [p.bytes, value(p)] as const) }));
  fs.writeFileSync(
    path.join(RESULTS, 'pingpong-latency.svg'),
    lineChart({ title: 'TCP ping-pong: half round trip', x: 'bytes', xLabel: 'message size', y: 'time', yLabel: 'half round trip (best repetition)', series: chartSeries((p) => p.microseconds) }),
  );
  fs.writeFileSync(
    path.join(RESULTS, 'pingpong-bandwidth.svg'),
    lineChart({ title: 'TCP ping-pong: bandwidth', x: 'bytes', xLabel: 'message size', y: 'bandwidth', yLabel: 'bandwidth n/T', series: chartSeries(bandwidth) }),
  );
  process.stdout.write(`\nwrote ${path.relative(process.cwd(), RESULTS)}/pingpong.{json,md} and pingpong-{latency,bandwidth}.svg\n`);
}

const role = process.argv[2];
if (role === 'raw-server') await rawEchoServer();
else if (role === 'raw-client') process.stdout.write(`${JSON.stringify(await rawSamples(Number(process.argv[3])))}\n`);
else if (role === 'ccjs') await ccjsRank();
else if (role === 'report') report(new Map(Object.entries(JSON.parse(fs.readFileSync(path.join(RESULTS, 'pingpong.json'), 'utf8')) as Record<string, Sample[]>)));
else await orchestrate();
