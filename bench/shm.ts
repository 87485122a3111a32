/**
 * The shared-memory device beside its references, in one run (rounds alternate the measurements
 * in fresh processes, so that all see the same machine noise):
 *   - 8-byte hop between two threads: ccjs (Float64Array(1)) beside a raw SharedArrayBuffer spin
 *     ping-pong between two worker threads (written below);
 *   - 8-byte hop and ping-pong bandwidth (1 MiB, 16 MiB) between two processes: ccjs beside Open
 *     MPI's shared memory (an OSU-style C ping-pong, bench/reference/pingpong.c, over vader);
 *   - the 8-byte hop between two processes when no call spins (every wait sleeps on the doorbell),
 *     beside ccjs's TCP hop, whose waits sleep in the event loop as well;
 *   - a small object's hop between two processes beside mpi4py's pickled dict
 *     (bench/reference/pingpong.py);
 *   - allReduce of 1 MiB of doubles on 4 processes beside MPI_Allreduce;
 *   - the ASP example on 2 processes × 1 thread and 1 process × 2 threads, beside its TCP time.
 * Every repetition is kept; the table gives best, median and spread (max/min), and ratios.
 *
 *   node dist/bench/shm.js [--quick] [--rounds N]
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ColGroupMaster, ColMember, Reductions } from '../src/index.js';
import { collectSamples, hopEndpoint, hopRepeats } from './hopping.js';
import type { Samples, Series } from './hopping.js';
import { Progress, warnIfLoaded } from './progress.js';
import { writeComparison } from './comparison.js';
import type { Row } from './comparison.js';
import { runJob, runScript, runThreads } from './job.js';
import { findReferences, mpiSamples, referenceFile } from './mpi-reference.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const quick = process.argv.includes('--quick');
const MiB = 1024 * 1024;
const SMALL_OBJECT = { id: 7, name: 'pivot', value: 3.25, flags: [true, false] };

const { small: SMALL, oneMiB: ONE_MIB, sixteenMiB: SIXTEEN_MIB } = hopRepeats(quick);
/** Hops that sleep cost tens of µs: fewer of them. */
const SLEEPING = { trips: SMALL.trips / 10, repetitions: SMALL.repetitions, warmUp: SMALL.warmUp / 10 };
const ALL_REDUCE_CALLS = quick ? 20 : 100;
const ASP_SIZE = quick ? 400 : 1000;

const SERIES: Series[] = [
  { name: '8 B', value: Float64Array.of(1.5), repeats: SMALL },
  { name: 'small object', value: SMALL_OBJECT, repeats: SMALL },
  { name: '1 MiB', value: new Float64Array(MiB / 8).fill(1.5), repeats: ONE_MIB },
  { name: '16 MiB', value: new Float64Array((16 * MiB) / 8).fill(1.5), repeats: SIXTEEN_MIB },
  { name: '1 MiB sendSync', value: new Float64Array(MiB / 8).fill(1.5), repeats: ONE_MIB, sync: true },
  { name: '16 MiB sendSync', value: new Float64Array((16 * MiB) / 8).fill(1.5), repeats: SIXTEEN_MIB, sync: true },
  { name: '1 MiB sendSync into a buffer', value: new Float64Array(MiB / 8).fill(1.5), repeats: ONE_MIB, sync: true, into: true },
  { name: '16 MiB sendSync into a buffer', value: new Float64Array((16 * MiB) / 8).fill(1.5), repeats: SIXTEEN_MIB, sync: true, into: true },
];

// ---- ccjs ----

/** One endpoint of the allReduce job: µs per call of each repetition, printed by endpoint 0. */
class AllReducer extends ColMember {
  readonly samples: number[] = [];

  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('allReduce', this.master.size);
    const data = new Float64Array(MiB / 8).fill(group.getRank(this));
    for (let repetition = -1; repetition < SMALL.repetitions; repetition += 1) {
      await this.barrier(group);
      const start = process.hrtime.bigint();
      for (let i = 0; i < ALL_REDUCE_CALLS; i += 1) await this.allReduce(group, data, Reductions.SUM);
      if (repetition >= 0) this.samples.push(Number(process.hrtime.bigint() - start) / 1000 / ALL_REDUCE_CALLS);
    }
  }
}

async function allReduceEndpoint(): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = new AllReducer(master);
  master.addMember('allReduce', member);
  await member.start();
  if (master.rank === 0) process.stdout.write(`${JSON.stringify(member.samples)}\n`);
}

/** Seconds the ASP example reports, run by ccjrun with `launch` flags. */
function aspSeconds(launch: readonly string[], transport: string): number {
  const output = execFileSync(process.execPath, [path.join(ROOT, 'bin', 'ccjrun.js'), ...launch, path.join(ROOT, 'dist', 'examples', 'asp.js'), String(ASP_SIZE)], {
    env: { ...process.env, CCJS_TRANSPORT: transport },
    encoding: 'utf8',
  });
  const seconds = /time=([\d.]+)s/.exec(output)?.[1];
  if (seconds === undefined) throw new Error(`the ASP example printed no time:\n${output}`);
  return Number(seconds);
}

// ---- the raw SharedArrayBuffer spin ping-pong between two threads ----

/** Int32 words: the ping's sequence number and the pong's, cache lines apart; the 8 bytes travel at byte 128. */
const PING = 0;
const PONG = 16;

/**
 * Spins until `words[index]` holds `sequence`, then reads the value. With `promised`, both ends
 * of the raw ping-pong hand each value over through a promise, as a receive() does: what any
 * receive that returns a promise must cost at least (the floor of ccjs's hop between threads).
 */
function spinReceive(words: Int32Array, index: number, sequence: number, values: Float64Array): number {
  while (Atomics.load(words, index) !== sequence);
  return values[0] as number;
}

async function rawSpinPeer(buffer: SharedArrayBuffer, count: number, promised: boolean): Promise<void> {
  const words = new Int32Array(buffer);
  const values = new Float64Array(buffer, 128, 1);
  for (let sequence = 1; sequence <= count; sequence += 1) {
    const value = promised ? await Promise.resolve(spinReceive(words, PING, sequence, values)) : spinReceive(words, PING, sequence, values);
    values[0] = value + 1;
    Atomics.store(words, PONG, sequence);
  }
}

async function rawSpin(promised: boolean): Promise<number[]> {
  const buffer = new SharedArrayBuffer(256);
  const words = new Int32Array(buffer);
  const values = new Float64Array(buffer, 128, 1);
  const count = SMALL.warmUp + SMALL.repetitions * SMALL.trips;
  const worker = new Worker(SCRIPT, { workerData: { buffer, count, promised } });
  const samples: number[] = [];
  let sequence = 0;
  const trips = async (count: number) => {
    for (let i = 0; i < count; i += 1) {
      sequence += 1;
      values[0] = sequence;
      Atomics.store(words, PING, sequence);
      if (promised) await Promise.resolve(spinReceive(words, PONG, sequence, values));
      else spinReceive(words, PONG, sequence, values);
    }
  };
  await trips(SMALL.warmUp);
  for (let repetition = 0; repetition < SMALL.repetitions; repetition += 1) {
    const start = process.hrtime.bigint();
    await trips(SMALL.trips);
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / SMALL.trips / 2);
  }
  await new Promise((resolve) => worker.once('exit', resolve));
  return samples;
}

// ---- the run ----

async function orchestrate(): Promise<void> {
  warnIfLoaded();
  const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 3;
  const references = findReferences(['pingpong']);
  const pingpong = references.programs.get('pingpong');
  const { all, keep } = collectSamples();
  const steps = 8 + (pingpong ? 4 : 0) + (references.python ? 1 : 0);
  const progress = new Progress('shm', rounds * steps);
  for (let round = 1; round <= rounds; round += 1) {
    keep({ 'raw SAB spin 8 B': JSON.parse(await runScript(SCRIPT, ['raw-spin', ...flags()])) as number[] });
    keep({ 'raw SAB spin with promises 8 B': JSON.parse(await runScript(SCRIPT, ['raw-spin', '--promised', ...flags()])) as number[] });
    progress.tick(`round ${round}: raw SharedArrayBuffer spin, without and with a promise per receive`);
    keep(JSON.parse(await runThreads(SCRIPT, 2, ['hops', 'threads', ...flags()], 'shm')) as Samples);
    progress.tick(`round ${round}: ccjs between threads`);
    keep(JSON.parse(await runJob(SCRIPT, 2, ['hops', 'processes', ...flags()], 'shm')) as Samples);
    progress.tick(`round ${round}: ccjs between processes`);
    keep(JSON.parse(await runJob(SCRIPT, 2, ['sleeping-hops', 'sleeping shm', ...flags()], 'shm')) as Samples);
    keep(JSON.parse(await runJob(SCRIPT, 2, ['sleeping-hops', 'tcp', ...flags()], 'tcp')) as Samples);
    progress.tick(`round ${round}: ccjs without spinning, shm and tcp`);
    if (pingpong) {
      for (const [name, bytes, repeats] of [
        ['8 B', 8, SMALL],
        ['1 MiB', MiB, ONE_MIB],
        ['16 MiB', 16 * MiB, SIXTEEN_MIB],
      ] as const) {
        keep({ [`Open MPI ${name}`]: mpiSamples(references, 2, [pingpong, 'pingpong', String(bytes), String(repeats.trips), String(repeats.repetitions)]) });
        progress.tick(`round ${round}: Open MPI ${name}`);
      }
      keep({ 'Open MPI allReduce': mpiSamples(references, 4, [pingpong, 'allreduce', String(MiB / 8), String(ALL_REDUCE_CALLS), String(SMALL.repetitions)]) });
      progress.tick(`round ${round}: Open MPI allReduce`);
    }
    if (references.python) {
      keep({ 'mpi4py small object': mpiSamples(references, 2, [references.python, referenceFile('pingpong.py'), String(SMALL.trips), String(SMALL.repetitions)]) });
      progress.tick(`round ${round}: mpi4py`);
    }
    keep({ 'ccjs allReduce shm': JSON.parse(await runJob(SCRIPT, 4, ['allreduce', ...flags()], 'shm')) as number[] });
    progress.tick(`round ${round}: ccjs allReduce over shm`);
    keep({ 'ccjs allReduce tcp': JSON.parse(await runJob(SCRIPT, 4, ['allreduce', ...flags()], 'tcp')) as number[] });
    progress.tick(`round ${round}: ccjs allReduce over tcp`);
    keep({
      'ASP 2 × 1 shm': [aspSeconds(['-n', '2'], 'shm')],
      'ASP 1 × 2 shm': [aspSeconds(['-n', '1', '--threads', '2'], 'shm')],
      'ASP 2 × 1 tcp': [aspSeconds(['-n', '2'], 'tcp')],
    });
    progress.tick(`round ${round}: ASP`);
  }
  progress.finish();
  report(all, rounds, references.missing);
}

const ROWS: Row[] = [
  { name: 'raw SAB spin, 8 B hop between threads', samples: 'raw SAB spin 8 B', unit: 'µs' },
  { name: 'raw SAB spin, a promise per receive (the floor of a receive that returns a promise)', samples: 'raw SAB spin with promises 8 B', unit: 'µs', reference: 'raw SAB spin 8 B' },
  { name: 'ccjs shm, 8 B hop between threads', samples: 'threads 8 B', unit: 'µs', reference: 'raw SAB spin 8 B', target: '≤ 2×' },
  { name: 'ccjs shm, 8 B hop between threads, against that floor', samples: 'threads 8 B', unit: 'µs', reference: 'raw SAB spin with promises 8 B' },
  { name: 'Open MPI vader, 8 B hop', samples: 'Open MPI 8 B', unit: 'µs' },
  { name: 'ccjs shm, 8 B hop between processes', samples: 'processes 8 B', unit: 'µs', reference: 'Open MPI 8 B', target: '≤ 3×' },
  { name: 'ccjs tcp, 8 B hop between processes', samples: 'tcp 8 B', unit: 'µs' },
  { name: 'ccjs shm, 8 B hop between processes, sleeping (spinMicroseconds 0)', samples: 'sleeping shm 8 B', unit: 'µs', reference: 'tcp 8 B' },
  { name: 'Open MPI vader, 1 MiB ping-pong', samples: 'Open MPI 1 MiB', unit: 'MB/s', bytes: MiB },
  { name: 'ccjs shm, 1 MiB ping-pong between processes', samples: 'processes 1 MiB', unit: 'MB/s', bytes: MiB, reference: 'Open MPI 1 MiB', target: '≥ 0.6×' },
  { name: 'ccjs shm, 1 MiB ping-pong between processes, sendSync', samples: 'processes 1 MiB sendSync', unit: 'MB/s', bytes: MiB, reference: 'Open MPI 1 MiB', target: '≥ 0.6×' },
  { name: 'ccjs shm, 1 MiB ping-pong between processes, sendSync, receive into a buffer', samples: 'processes 1 MiB sendSync into a buffer', unit: 'MB/s', bytes: MiB, reference: 'Open MPI 1 MiB', target: '≥ 0.6×' },
  { name: 'ccjs shm, 1 MiB ping-pong between threads', samples: 'threads 1 MiB', unit: 'MB/s', bytes: MiB, reference: 'Open MPI 1 MiB' },
  { name: 'Open MPI vader, 16 MiB ping-pong', samples: 'Open MPI 16 MiB', unit: 'MB/s', bytes: 16 * MiB },
  { name: 'ccjs shm, 16 MiB ping-pong between processes', samples: 'processes 16 MiB', unit: 'MB/s', bytes: 16 * MiB, reference: 'Open MPI 16 MiB', target: '≥ 0.6×' },
  { name: 'ccjs shm, 16 MiB ping-pong between processes, sendSync', samples: 'processes 16 MiB sendSync', unit: 'MB/s', bytes: 16 * MiB, reference: 'Open MPI 16 MiB', target: '≥ 0.6×' },
  { name: 'ccjs shm, 16 MiB ping-pong between processes, sendSync, receive into a buffer', samples: 'processes 16 MiB sendSync into a buffer', unit: 'MB/s', bytes: 16 * MiB, reference: 'Open MPI 16 MiB', target: '≥ 0.6×' },
  { name: 'ccjs shm, 16 MiB ping-pong between threads', samples: 'threads 16 MiB', unit: 'MB/s', bytes: 16 * MiB, reference: 'Open MPI 16 MiB' },
  { name: 'mpi4py, pickled dict hop', samples: 'mpi4py small object', unit: 'µs' },
  { name: 'ccjs shm, small object hop between processes', samples: 'processes small object', unit: 'µs', reference: 'mpi4py small object', target: '< 1×' },
  { name: 'ccjs shm, small object hop between threads', samples: 'threads small object', unit: 'µs', reference: 'mpi4py small object' },
  { name: 'Open MPI, allReduce 1 MiB of doubles, 4 processes', samples: 'Open MPI allReduce', unit: 'µs' },
  { name: 'ccjs shm, allReduce 1 MiB of doubles, 4 processes', samples: 'ccjs allReduce shm', unit: 'µs', reference: 'Open MPI allReduce', target: '≤ 2×' },
  { name: 'ccjs tcp, allReduce 1 MiB of doubles, 4 processes', samples: 'ccjs allReduce tcp', unit: 'µs', reference: 'Open MPI allReduce' },
  { name: 'ccjs tcp, ASP 2 processes × 1 thread', samples: 'ASP 2 × 1 tcp', unit: 's' },
  { name: 'ccjs shm, ASP 2 processes × 1 thread', samples: 'ASP 2 × 1 shm', unit: 's', reference: 'ASP 2 × 1 tcp' },
  { name: 'ccjs shm, ASP 1 process × 2 threads', samples: 'ASP 1 × 2 shm', unit: 's', reference: 'ASP 2 × 1 tcp' },
];

function report(all: Samples, rounds: number, missing: readonly string[]): void {
  const byName = new Map(ROWS.map((row) => [row.samples, row]));
  // Chart labels: what was measured, and against what.
  const rows = ROWS.map((row) => ({ ...row, label: `${row.name.replace('ccjs shm, ', '').replace(' ping-pong between processes', ' ping-pong')} vs ${byName.get(row.reference ?? '')?.name.split(',')[0] ?? ''}` }));
  const notes = missing.length > 0 ? [`Not measured (missing): ${missing.join('; ')}`] : [];
  const text = writeComparison(RESULTS, { name: 'shm', title: 'ccjs over shared memory', rows, notes }, all, `${rounds} rounds${quick ? ' (--quick)' : ''}`);
  process.stdout.write(`\n${text}`);
}

function flags(): string[] {
  return quick ? ['--quick'] : [];
}

if (!isMainThread && workerData !== null && typeof workerData === 'object' && 'count' in workerData) {
  const { buffer, count, promised } = workerData as { buffer: SharedArrayBuffer; count: number; promised: boolean };
  await rawSpinPeer(buffer, count, promised);
  parentPort?.close();
} else {
  const role = process.argv[2];
  if (role === 'raw-spin') process.stdout.write(`${JSON.stringify(await rawSpin(process.argv.includes('--promised')))}\n`);
  else if (role === 'hops') await hopEndpoint(process.argv[3] as string, SERIES);
  // Every wait sleeps: the doorbell's cost per hop (a FIFO between processes), beside TCP's sockets.
  else if (role === 'sleeping-hops') await hopEndpoint(process.argv[3] as string, [{ name: '8 B', value: Float64Array.of(1.5), repeats: SLEEPING }], { spinMicroseconds: 0 });
  else if (role === 'allreduce') await allReduceEndpoint();
  else if (role === 'report') report(JSON.parse(fs.readFileSync(path.join(RESULTS, 'shm.json'), 'utf8')) as Samples, Number(process.argv[3]) || 3, []);
  else await orchestrate();
}
