/**
 * Large messages and the memory they land in (issue 31, item 4), beside Open MPI in one run:
 * ping-pong of 1 MiB and 16 MiB between two processes and between two threads over shared memory
 * (sendAsync, sendSync, and sendSync received into one buffer as MPI_Recv does), and a broadcast
 * of the same sizes on those two members (the root taking turns), beside Open MPI's ping-pong
 * over vader (bench/reference/pingpong.c). Besides the time, per hop (per broadcast): the minor
 * page faults of the job's processes (a fresh 4 KiB page faults once), and the large received
 * bodies that took fresh memory rather than memory that earlier ones gave back
 * (native/receive-memory.h), and the time V8's garbage collector paused the job's processes (a
 * received value is fresh memory to V8 until a collection finds it unused and gives it back to the
 * pool: the collections that large values call for). Rounds alternate the measurements in fresh
 * processes.
 *
 *   node dist/bench/large-messages.js [--quick] [--rounds N]
 */
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import { memoryAddon } from '../transport/body-memory.js';
import type { BodyMemory } from '../transport/body-memory.js';
import type { Device } from '../transport/device.js';
import { ShmDevice } from '../transport/shm/shm-device.js';
import { collectSamples, echoes, hopRepeats, prefixed, timeHops } from './hopping.js';
import type { Repeats, Samples } from './hopping.js';
import { Progress, warnIfLoaded } from './progress.js';
import { writeComparison } from './comparison.js';
import { findReferences, mpiSamples } from './mpi-reference.js';
import type { References } from './mpi-reference.js';
import { stats } from './statistics.js';
import type { Row } from './comparison.js';
import { runJob, runThreads } from './job.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');
const quick = process.argv.includes('--quick');
const MiB = 1024 * 1024;
const { oneMiB: ONE_MIB, sixteenMiB: SIXTEEN_MIB } = hopRepeats(quick);

/** Bytes received in the warm-up of each series, at least. */
const WARM_UP_BYTES = 256 * MiB;

type How = 'sendAsync' | 'sendSync' | 'sendSync into a buffer' | 'broadcast';
const HOWS: readonly How[] = ['sendAsync', 'sendSync', 'sendSync into a buffer', 'broadcast'];
const SIZES = [
  { name: '1 MiB', bytes: MiB, repeats: ONE_MIB },
  { name: '16 MiB', bytes: 16 * MiB, repeats: SIXTEEN_MIB },
] as const;

interface Counters {
  /** This process's minor page faults. */
  faults: number;
  /** Its receive memory's large bodies in fresh memory. */
  fresh: number;
  /** Bodies the shared-memory device read from the peer straight into a receive's buffer (one copy, not two). */
  direct: number;
  /** Milliseconds this process spent in garbage collection pauses. */
  gcMs: number;
}

/** This process's garbage collection pauses so far (ms), as V8 reports them. */
let collecting = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collecting += entry.duration;
}).observe({ entryTypes: ['gc'] });

function counters(device: Device | undefined): Counters {
  const native = memoryAddon();
  // An earlier build's addon (bench/builds.ts) may not count them.
  const memory = typeof native === 'string' ? undefined : (native as Partial<BodyMemory>).receiveMemoryStats?.();
  return {
    faults: process.resourceUsage().minorPageFault,
    fresh: memory?.fresh ?? Number.NaN,
    direct: device instanceof ShmDevice ? device.stats.readIntoBuffers : 0,
    gcMs: collecting,
  };
}

function counted(start: Counters, end: Counters): Counters {
  return { faults: end.faults - start.faults, fresh: end.fresh - start.fresh, direct: end.direct - start.direct, gcMs: end.gcMs - start.gcMs };
}

/**
 * Ranks 0 and 1 of group 'large' run every series; rank 0 keeps µs per hop (per broadcast), and
 * each rank adds its process's faults and fresh bodies per hop over the timed part (with rank 1's
 * sent to rank 0 at the end of each series).
 */
class LargeHopper extends ColMember {
  readonly samples: Samples = {};

  constructor(
    private readonly master: ColGroupMaster,
    /** Whether the two ranks share this process (threads): its counters are counted once. */
    private readonly shared: boolean,
  ) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('large', 2);
    const rank = group.getRank(this);
    const device = this.master.engine.deviceOf(group.endpointOf(1 - rank));
    for (const { name, bytes, repeats: given } of SIZES) {
      // Warmed up past a few of V8's collections, which give the first bodies' memory back.
      const repeats = { ...given, warmUp: Math.max(given.warmUp, WARM_UP_BYTES / bytes / 2) };
      const value = new Float64Array(bytes / 8).fill(1.5);
      for (const how of HOWS) {
        const into = how === 'sendSync into a buffer' ? { into: new Float64Array(bytes / 8) } : undefined;
        const send = (message: unknown, to: number) => (how === 'sendAsync' ? this.sendAsync(group, message, to) : this.sendSync(group, message, to));
        let round = 0;
        // A broadcast is one hop; a round trip two: both count per hop.
        const roundTrip =
          how === 'broadcast'
            ? async () => {
                await this.broadcast(group, rank === round % 2 ? value : null, round % 2);
                await this.broadcast(group, rank === (round + 1) % 2 ? value : null, (round + 1) % 2);
                round += 2;
              }
            : rank === 0
              ? async () => {
                  await send(value, 1);
                  await this.receive(group, 1, into);
                }
              : async () => {
                  await send(await this.receive(group, 0, into), 0);
                };
        const series = `${name} ${how}`;
        if (rank === 0) {
          for (let i = 0; i < repeats.warmUp; i += 1) await roundTrip();
          const start = counters(device);
          const samples = await timeHops(roundTrip, { ...repeats, warmUp: 0 });
          const hops = 2 * repeats.trips * repeats.repetitions;
          const ours = counted(start, counters(device));
          const theirs = await this.receive<Counters>(group, 1);
          this.samples[series] = samples;
          // Both threads' faults and fresh bodies are this process's: counted once.
          this.samples[`${series} faults`] = [(ours.faults + (this.shared ? 0 : theirs.faults)) / hops];
          const fresh = (ours.fresh + (this.shared ? 0 : theirs.fresh)) / hops;
          if (Number.isFinite(fresh)) this.samples[`${series} fresh`] = [fresh];
          this.samples[`${series} direct`] = [(ours.direct + theirs.direct) / hops];
          // Both threads share one heap's collector only in part (each isolate collects its own): summed either way.
          this.samples[`${series} gc`] = [(1000 * (ours.gcMs + theirs.gcMs)) / hops];
        } else {
          const { trips, repetitions, warmUp } = repeats;
          for (let i = 0; i < warmUp; i += 1) await roundTrip();
          const start = counters(device);
          for (let i = echoes({ trips, repetitions, warmUp: 0 }); i > 0; i -= 1) await roundTrip();
          await this.sendAsync(group, counted(start, counters(device)), 0);
        }
      }
    }
  }
}

async function endpoint(prefix: string, shared: boolean): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = new LargeHopper(master, shared);
  master.addMember('large', member);
  await member.start();
  if (master.rank === 0) process.stdout.write(`${JSON.stringify(prefixed(prefix, member.samples))}\n`);
}

// ---- Open MPI ----

function openMpiHops(references: References, bytes: number, { trips, repetitions }: Repeats): number[] {
  return mpiSamples(references, 2, [references.programs.get('pingpong') as string, 'pingpong', String(bytes), String(trips), String(repetitions)]);
}

// ---- the run ----

async function orchestrate(): Promise<void> {
  warnIfLoaded();
  const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 3;
  const references = findReferences(['pingpong']);
  const { all, keep } = collectSamples();
  const progress = new Progress('large-messages', rounds * 3);
  const flags = quick ? ['--quick'] : [];
  for (let round = 1; round <= rounds; round += 1) {
    keep(JSON.parse(await runJob(SCRIPT, 2, ['endpoint', 'processes', ...flags], 'shm')) as Samples);
    progress.tick(`round ${round}: ccjs between processes`);
    keep(JSON.parse(await runThreads(SCRIPT, 2, ['endpoint', 'threads', '--shared', ...flags], 'shm')) as Samples);
    progress.tick(`round ${round}: ccjs between threads`);
    if (references.programs.has('pingpong')) for (const { name, bytes, repeats } of SIZES) keep({ [`Open MPI ${name}`]: openMpiHops(references, bytes, repeats) });
    progress.tick(`round ${round}: Open MPI`);
  }
  progress.finish();
  const rows: Row[] = [];
  const memory = ['| measurement | page faults per hop (pages moved per hop) | bodies in fresh memory per hop | bodies read straight into the receive\'s buffer per hop | garbage collection per hop (µs, both members) |', '|---|---:|---:|---:|---:|'];
  for (const { name, bytes } of SIZES) {
    rows.push({ name: `Open MPI vader, ${name} ping-pong`, samples: `Open MPI ${name}`, unit: 'MB/s', bytes });
    for (const placement of ['processes', 'threads']) {
      for (const how of HOWS) {
        const what = `ccjs shm, ${how === 'broadcast' ? `${name} broadcast on 2 ${placement}` : `${name} ping-pong between ${placement}, ${how}`}`;
        const series = `${placement} ${name} ${how}`;
        rows.push({ name: what, samples: series, unit: 'MB/s', bytes, reference: `Open MPI ${name}`, target: '≥ 0.8×' });
        const median = (key: string) => (all[key] === undefined ? 'n/a' : stats(all[key] as number[]).median.toFixed(2));
        memory.push(`| ${what} | ${median(`${series} faults`)} (${bytes / 4096}) | ${median(`${series} fresh`)} | ${median(`${series} direct`)} | ${median(`${series} gc`)} |`);
      }
    }
  }
  const notes = [...(references.missing.length > 0 ? [`Not measured (missing): ${references.missing.join('; ')}`] : []), '', 'Memory, medians of the rounds (page faults of both processes, or of the one process of both threads):', '', ...memory];
  const text = writeComparison(path.join(ROOT, 'bench', 'results'), { name: 'large-messages', title: 'ccjs large messages over shared memory, and their memory', rows, notes }, all, `${rounds} rounds${quick ? ' (--quick)' : ''}`);
  process.stdout.write(`\n${text}`);
}

if (process.argv[2] === 'endpoint') await endpoint(process.argv[3] as string, process.argv.includes('--shared'));
else await orchestrate();
