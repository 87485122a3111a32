/**
 * bench/manycore (issue 31): ccjs on one many-core machine beside Open MPI in C over vader and
 * mpi4py, in one run, at 2, 4, 8, … members up to the machine's cores. Rounds alternate the
 * implementations (and which goes first), each in fresh processes:
 *   - ccjs between processes (one member per process, shared memory) and between threads (one
 *     process × p threads);
 *   - Open MPI in C (bench/reference/pingpong.c, collectives.c) and mpi4py
 *     (bench/reference/pingpong.py, collectives.py) under mpirun over vader ($MPIRUN when set),
 *     skipped, saying so, where missing;
 * with the same sizes and counts for each:
 *   - between 2 processes: the 8 B hop, a small object's hop, 1 MiB and 16 MiB ping-pong; the 8 B
 *     hop's floors (bench/hop-floor.ts: the same API shape with nothing but a ring, in JavaScript
 *     and with an addon call per message), steady and cold;
 *   - at every member count: barrier, broadcast 8 B, allReduce 8 B, allReduce of a number,
 *     broadcast of a small dict, broadcast 1 MiB, allReduce 1 MiB (rank 0's time per call over
 *     many calls after a barrier; broadcast roots go round the ranks);
 *   - cold start: the first 1,000 hops of a job and its first 100 allReduce 8 B calls (after its
 *     first round trip or call, timed alone), beside the steady state;
 *   - the ASP, QR and LEQ examples (ccjrun -n p) against their own 1-member time.
 * Writes DIR/manycore.{md,json} (best, median and spread of every figure, ratios to the best peer,
 * the issue's targets met or missed) and the plots DIR/manycore{,-collectives,-speedup}.svg, with
 * a PNG of each where rsvg-convert is installed. The report is rewritten after every measurement.
 *
 *   node dist/bench/manycore.js [--quick] [--members 2,4,8] [--rounds N] [--example-rounds N] [--out DIR]
 *   node dist/bench/manycore.js report [--out DIR]    (redraw the table and plots from DIR/manycore.json)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember, Reductions } from '../src/index.js';
import type { ColGroup } from '../src/index.js';
import { UsageError, parseMembers, readFlags, withUsage } from './ccjbench.js';
import { COLD_HOP, COLD_HOPS, FLOOR_VARIANTS, floorSamples } from './hop-floor.js';
import type { FloorVariant } from './hop-floor.js';
import { hop, hopRepeats } from './hopping.js';
import type { Repeats, Samples, Series } from './hopping.js';
import { runJob, runScript, runThreads } from './job.js';
import { findReferences, mpiOutput, mpiSamples, referenceFile } from './mpi-reference.js';
import { Progress, warnIfLoaded } from './progress.js';
import { stats } from './statistics.js';
import { barChart, lineChart } from './svg.js';
import type { Bar, ChartSeries } from './svg.js';
import { formatMicroseconds } from './units.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');
const CCJRUN = path.join(ROOT, 'bin', 'ccjrun.js');
const DEFAULT_OUT = path.join(ROOT, 'bench', 'results', 'manycore');
const MiB = 1024 * 1024;
/** The small object of bench/reference/pingpong.py and collectives.py. */
const SMALL_OBJECT = { id: 7, name: 'pivot', value: 3.25, flags: [true, false] };
/** The cold start the issue bounds: a job's first collectives (its first hops: COLD_HOPS). */
const COLD_CALLS = 100;
/** The member count the issue's targets are set for. */
const TARGET_MEMBERS = 16;

const USAGE = `usage: node dist/bench/manycore.js [--quick] [--members 2,4,8|2..8] [--rounds N] [--example-rounds N] [--out DIR]
       node dist/bench/manycore.js report [--out DIR]
  --members         member counts (default: 2, 4, 8, … up to the machine's cores)
  --rounds          rounds of hops and collectives, alternating the implementations (default 3; --quick 1)
  --example-rounds  of those rounds, how many also run ASP, QR and LEQ (default 1)
  --quick           fewer calls and repetitions, smaller examples
  --out             where manycore.{md,json,svg} go (default bench/results/manycore)`;

type Implementation = 'Open MPI' | 'mpi4py' | 'ccjs processes' | 'ccjs threads';
const IMPLEMENTATIONS: readonly Implementation[] = ['ccjs processes', 'ccjs threads', 'Open MPI', 'mpi4py'];
const PEERS: readonly Implementation[] = ['Open MPI', 'mpi4py'];
/** The hop's floors (bench/hop-floor.ts): the same API shape with nothing but a ring, in JavaScript or through the addon. */
const FLOORS = { javascript: 'JavaScript floor', 'addon call': 'JavaScript floor + an addon call per message' } as const satisfies Record<FloorVariant, string>;
/** Whose samples: an implementation, or one of the hop's floors. */
type Subject = Implementation | (typeof FLOORS)[FloorVariant];

interface Plan {
  readonly quick: boolean;
  readonly members: readonly number[];
  readonly rounds: number;
  readonly exampleRounds: number;
  /** Timed repetitions of each collective (after one warm-up repetition). */
  readonly repetitions: number;
  /** Calls per repetition of the small collectives, and of the 1 MiB ones. */
  readonly smallCalls: number;
  readonly largeCalls: number;
  readonly hops: { readonly small: Repeats; readonly oneMiB: Repeats; readonly sixteenMiB: Repeats };
  /** The examples' sizes n. */
  readonly examples: Readonly<Record<Example, number>>;
}

type Example = 'ASP' | 'QR' | 'LEQ';
const EXAMPLES: readonly Example[] = ['ASP', 'QR', 'LEQ'];
/** The issue's speedup targets on 16 members. */
const SPEEDUP_TARGETS: Readonly<Record<Example, number>> = { ASP: 14, QR: 10, LEQ: 8 };

// ---- the figures ----

/** A collective as the three programs name it: `<op>:<bytes>`. */
type Op = 'barrier' | 'bcast' | 'allreduce' | 'allreduce-object' | 'bcast-object';

interface CollectiveFigure {
  readonly name: string;
  readonly op: Op;
  readonly bytes: number;
  /** Objects: only mpi4py has them among the peers. */
  readonly object: boolean;
}

const COLLECTIVES: readonly CollectiveFigure[] = [
  { name: 'barrier', op: 'barrier', bytes: 0, object: false },
  { name: 'broadcast 8 B', op: 'bcast', bytes: 8, object: false },
  { name: 'allReduce 8 B', op: 'allreduce', bytes: 8, object: false },
  { name: 'allReduce of a number', op: 'allreduce-object', bytes: 0, object: true },
  { name: 'broadcast of a small dict', op: 'bcast-object', bytes: 0, object: true },
  { name: 'broadcast 1 MiB', op: 'bcast', bytes: MiB, object: false },
  { name: 'allReduce 1 MiB', op: 'allreduce', bytes: MiB, object: false },
];
/**
 * The cold start is timed after the job's first round trip (or first call), timed alone: that one
 * also waits for the peer that formed the group last, which is not what a hop costs.
 */
const FIRST_TRIP = 'first round trip (per hop)';
const FIRST_COLLECTIVE = 'first allReduce 8 B';
const COLD_COLLECTIVE = 'first 100 allReduce 8 B';

interface HopFigure {
  readonly name: string;
  /** For bandwidths (MB/s): bytes per hop; times otherwise. */
  readonly bytes?: number;
  readonly peers: readonly Implementation[];
  /** The peers' figure, when it has another name (a ccjs variant of the same ping-pong). */
  readonly peerFigure?: string;
}

const HOPS: readonly HopFigure[] = [
  { name: 'hop 8 B', peers: ['Open MPI'] },
  { name: 'small object hop', peers: ['mpi4py'] },
  { name: 'ping-pong 1 MiB', bytes: MiB, peers: ['Open MPI'] },
  { name: 'ping-pong 16 MiB', bytes: 16 * MiB, peers: ['Open MPI'] },
  { name: 'ping-pong 1 MiB, sendSync into a buffer', bytes: MiB, peers: ['Open MPI'], peerFigure: 'ping-pong 1 MiB' },
  { name: 'ping-pong 16 MiB, sendSync into a buffer', bytes: 16 * MiB, peers: ['Open MPI'], peerFigure: 'ping-pong 16 MiB' },
];

/** The samples of `subject`'s `figure` at `members`: µs per hop or call, seconds for the examples. */
const key = (subject: Subject, figure: string, members: number) => `${subject}|${figure}|${members}`;
const exampleFigure = (example: Example, plan: Plan) => `${example} n=${plan.examples[example]}`;

function hopSeries(plan: Plan): Series[] {
  const { small, oneMiB, sixteenMiB } = plan.hops;
  const doubles = (bytes: number) => new Float64Array(bytes / 8).fill(1.5);
  return [
    // First, in a job that has sent nothing yet: the cold start.
    { name: FIRST_TRIP, value: Float64Array.of(1.5), repeats: { trips: 1, repetitions: 1, warmUp: 0 } },
    { name: COLD_HOP, value: Float64Array.of(1.5), repeats: { trips: COLD_HOPS / 2, repetitions: 1, warmUp: 0 } },
    { name: 'hop 8 B', value: Float64Array.of(1.5), repeats: small },
    { name: 'small object hop', value: SMALL_OBJECT, repeats: small },
    { name: 'ping-pong 1 MiB', value: doubles(MiB), repeats: oneMiB },
    { name: 'ping-pong 16 MiB', value: doubles(16 * MiB), repeats: sixteenMiB },
    { name: 'ping-pong 1 MiB, sendSync into a buffer', value: doubles(MiB), repeats: oneMiB, sync: true, into: true },
    { name: 'ping-pong 16 MiB, sendSync into a buffer', value: doubles(16 * MiB), repeats: sixteenMiB, sync: true, into: true },
  ];
}

/** `<op>:<bytes>:<calls>` for every collective: what the three programs are given. */
function collectiveSpecs(plan: Plan, objects: boolean): string[] {
  return COLLECTIVES.filter((figure) => objects || !figure.object).map((figure) => `${figure.op}:${figure.bytes}:${figure.bytes >= MiB ? plan.largeCalls : plan.smallCalls}`);
}

/** A ccjs endpoint's line of sleeps per call (`sleeps:<op>:<bytes> <n>`), and the figure it becomes. */
const SLEEPS = 'sleeps:';
const SLEEPS_FIGURE = ', sleeps per call';
/** A ccjs endpoint's line of point-to-point messages sent per call (`messages:<op>:<bytes> <n>`): none through the collective segment. */
const MESSAGES = 'messages:';
const MESSAGES_FIGURE = ', messages per call';

// ---- the ccjs endpoints ----

/** Times the collectives of `specs` on rank 0 as collectives.c does; then the lines it prints. */
class CollectiveTimer extends ColMember {
  readonly lines: string[] = [];

  constructor(
    private readonly master: ColGroupMaster,
    private readonly repetitions: number,
    private readonly specs: readonly string[],
  ) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('manycore', this.master.size);
    const rank = group.getRank(this);
    // The cold start: the group's first collectives, before any warm-up.
    const eight = Float64Array.of(rank);
    const firstStart = process.hrtime.bigint();
    await this.allReduce(group, eight, Reductions.SUM);
    this.lines.push(`first:allreduce:8 ${Number(process.hrtime.bigint() - firstStart) / 1000}`);
    const coldStart = process.hrtime.bigint();
    for (let i = 0; i < COLD_CALLS; i += 1) await this.allReduce(group, eight, Reductions.SUM);
    this.lines.push(`cold:allreduce:8 ${Number(process.hrtime.bigint() - coldStart) / 1000 / COLD_CALLS}`);
    for (const spec of this.specs) {
      const [op, bytes, calls] = spec.split(':') as [Op, string, string];
      const call = this.operation(group, op, Number(bytes));
      for (let repetition = -1; repetition < this.repetitions; repetition += 1) {
        await this.barrier(group);
        const sleeps = this.master.waitCounts().sleeps;
        const messages = this.messagesSent();
        const start = process.hrtime.bigint();
        for (let i = 0; i < Number(calls); i += 1) await call(i);
        if (repetition < 0) continue;
        this.lines.push(`${op}:${bytes} ${Number(process.hrtime.bigint() - start) / 1000 / Number(calls)}`);
        // Waits of rank 0's thread that slept (the counters of master.waitCounts), per call.
        this.lines.push(`${SLEEPS}${op}:${bytes} ${(this.master.waitCounts().sleeps - sleeps) / Number(calls)}`);
        // Messages rank 0's endpoint sent (to any endpoint), per call.
        this.lines.push(`${MESSAGES}${op}:${bytes} ${(this.messagesSent() - messages) / Number(calls)}`);
      }
    }
  }

  private messagesSent(): number {
    const { sameHost, otherHost } = this.master.messageCounts();
    return sameHost.messages + otherHost.messages;
  }

  /** One call of `op` as a function of the call's index (broadcast roots go round the ranks). */
  private operation(group: ColGroup, op: Op, bytes: number): (i: number) => Promise<unknown> {
    const rank = group.getRank(this);
    const size = group.size();
    const data = new Float64Array(bytes / 8).fill(rank + 0.5);
    switch (op) {
      case 'barrier':
        return () => this.barrier(group);
      case 'bcast':
        return (i) => this.broadcast(group, i % size === rank ? data : null, i % size);
      case 'allreduce':
        return () => this.allReduce(group, data, Reductions.SUM);
      case 'allreduce-object':
        return () => this.allReduce(group, rank + 0.5, Reductions.SUM);
      case 'bcast-object':
        return (i) => this.broadcast(group, i % size === rank ? SMALL_OBJECT : null, i % size);
    }
  }
}

async function collectivesEndpoint(repetitions: number, specs: readonly string[]): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = new CollectiveTimer(master, repetitions, specs);
  master.addMember('manycore', member);
  await member.start();
  if (master.rank === 0) process.stdout.write(`${member.lines.join('\n')}\n`);
}

async function hopsEndpoint(plan: Plan): Promise<void> {
  const master = await ColGroupMaster.create();
  const samples = await hop(master, false, hopSeries(plan));
  if (master.rank === 0) process.stdout.write(`${JSON.stringify(samples)}\n`);
}

// ---- the run ----

/** What a run writes to manycore.json: enough to redraw everything. */
interface Run {
  readonly date: string;
  readonly machine: { readonly cores: number; readonly cpu: string; readonly node: string };
  readonly plan: Plan;
  readonly mpirun: string;
  readonly python: string | null;
  readonly notes: string[];
  readonly samples: Samples;
  roundsDone: number;
}

/** Lines `<op>:<bytes> <µs>` (or `cold:…`) of a collectives program, as samples of `implementation` at `members`. */
function collectiveSamples(implementation: Implementation, members: number, output: string): Samples {
  const names = new Map<string, string>(COLLECTIVES.flatMap((figure) => [[`${figure.op}:${figure.bytes}`, figure.name] as const, [`${SLEEPS}${figure.op}:${figure.bytes}`, `${figure.name}${SLEEPS_FIGURE}`] as const, [`${MESSAGES}${figure.op}:${figure.bytes}`, `${figure.name}${MESSAGES_FIGURE}`] as const]));
  names.set('first:allreduce:8', FIRST_COLLECTIVE);
  names.set('cold:allreduce:8', COLD_COLLECTIVE);
  const samples: Samples = {};
  for (const line of output.split('\n')) {
    const match = /^(\S+) ([\d.]+)$/.exec(line.trim());
    const figure = match === null ? undefined : names.get(match[1] as string);
    if (match !== null && figure !== undefined) (samples[key(implementation, figure, members)] ??= []).push(Number(match[2]));
  }
  return samples;
}

/** The implementations in the order round `round` runs them: each goes first in turn. */
function orderOf(round: number, available: readonly Implementation[]): Implementation[] {
  const shift = (round - 1) % available.length;
  return [...available.slice(shift), ...available.slice(0, shift)];
}

async function exampleSeconds(example: Example, n: number, members: number): Promise<number> {
  const output = await runScript(CCJRUN, ['-n', String(members), path.join(ROOT, 'dist', 'examples', `${example.toLowerCase()}.js`), String(n)], { CCJS_TRANSPORT: 'shm' });
  const seconds = /time=([\d.]+)s/.exec(output)?.[1];
  if (seconds === undefined) throw new Error(`${example} printed no time:\n${output}`);
  return Number(seconds);
}

async function orchestrate(plan: Plan, out: string): Promise<void> {
  warnIfLoaded();
  const references = findReferences(['pingpong', 'collectives']);
  const pingpong = references.programs.get('pingpong');
  const collectives = references.programs.get('collectives');
  const available = IMPLEMENTATIONS.filter((implementation) => implementation !== 'Open MPI' || (pingpong !== undefined && collectives !== undefined)).filter((implementation) => implementation !== 'mpi4py' || references.python !== undefined);
  const run: Run = {
    date: new Date().toISOString(),
    machine: { cores: os.availableParallelism(), cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
    plan,
    mpirun: references.mpirun.join(' '),
    python: references.python ?? null,
    notes: references.missing.map((missing) => `Not measured (missing): ${missing}.`),
    samples: {},
    roundsDone: 0,
  };
  process.stderr.write(`manycore: ${run.machine.cores} cores, members ${plan.members.join(', ')}, ${plan.rounds} round(s) (examples in ${plan.exampleRounds}); ${available.join(', ')}${references.missing.length > 0 ? `; missing: ${references.missing.join('; ')}` : ''}\n`);
  const keep = (samples: Samples) => {
    for (const [name, values] of Object.entries(samples)) (run.samples[name] ??= []).push(...values);
  };
  // Rough seconds of each step, for the ETA only.
  const collectiveWeight = (implementation: Implementation, members: number) => (implementation.startsWith('ccjs') ? 2 + members / 2 : 1);
  const exampleWeight = (example: Example, members: number) => 1 + (2e-9 * plan.examples[example] ** 3) / members;
  const roundWeight = 6 + plan.members.reduce((sum, members) => sum + available.reduce((inner, implementation) => inner + collectiveWeight(implementation, members), 0), 0);
  const examplesWeight = EXAMPLES.reduce((sum, example) => sum + [1, ...plan.members].reduce((inner, members) => inner + exampleWeight(example, members), 0), 0);
  const progress = new Progress('manycore', plan.rounds * roundWeight + Math.min(plan.rounds, plan.exampleRounds) * examplesWeight);
  /** Runs one measurement; a failure is noted and the run goes on (a one-shot run on a lent machine keeps what it has). */
  const step = async (what: string, weight: number, measure: () => Promise<Samples> | Samples) => {
    try {
      keep(await measure());
    } catch (error) {
      const message = `${what} failed: ${(error as Error).message.split('\n')[0]}`;
      run.notes.push(message);
      process.stderr.write(`manycore: ${message}\n`);
    }
    // After every step: a run cut short (or hung) still leaves what it measured.
    writeReport(run, out, false);
    progress.tick(what, weight);
  };
  const collectivesProgram = (implementation: Implementation): string[] =>
    implementation === 'Open MPI' ? [collectives as string, String(plan.repetitions), ...collectiveSpecs(plan, false)] : [references.python as string, referenceFile('collectives.py'), String(plan.repetitions), ...collectiveSpecs(plan, true)];
  for (let round = 1; round <= plan.rounds; round += 1) {
    const order = orderOf(round, available);
    for (const implementation of order) {
      const where = `round ${round}: ${implementation}, 2 processes`;
      if (implementation === 'ccjs processes') {
        await step(`${where}, hops`, 3, async () => {
          const samples = JSON.parse(await runJob(SCRIPT, 2, ['hops', JSON.stringify(plan)], 'shm')) as Samples;
          return Object.fromEntries(Object.entries(samples).map(([figure, values]) => [key(implementation, figure, 2), values]));
        });
      } else if (implementation === 'Open MPI') {
        const { small, oneMiB, sixteenMiB } = plan.hops;
        for (const [figure, bytes, repeats] of [['hop 8 B', 8, small], ['ping-pong 1 MiB', MiB, oneMiB], ['ping-pong 16 MiB', 16 * MiB, sixteenMiB]] as const) {
          await step(`${where}, ${figure}`, 1, () => ({ [key(implementation, figure, 2)]: mpiSamples(references, 2, [pingpong as string, 'pingpong', String(bytes), String(repeats.trips), String(repeats.repetitions)]) }));
        }
      } else if (implementation === 'mpi4py') {
        const { trips, repetitions } = plan.hops.small;
        await step(`${where}, small object hop`, 1, () => ({ [key(implementation, 'small object hop', 2)]: mpiSamples(references, 2, [references.python as string, referenceFile('pingpong.py'), String(trips), String(repetitions)]) }));
      }
    }
    for (const variant of FLOOR_VARIANTS) {
      await step(`round ${round}: the hop's ${FLOORS[variant]}, 2 processes`, 1, async () => {
        const samples = await floorSamples(variant, plan.hops.small);
        return Object.fromEntries(Object.entries(samples).map(([figure, values]) => [key(FLOORS[variant], figure, 2), values]));
      });
    }
    for (const members of plan.members) {
      for (const implementation of orderOf(round, available)) {
        const what = `round ${round}: ${implementation}, collectives, ${members} members`;
        const args = ['collectives', String(plan.repetitions), ...collectiveSpecs(plan, true)];
        await step(what, collectiveWeight(implementation, members), async () => {
          if (implementation === 'ccjs processes') return collectiveSamples(implementation, members, await runJob(SCRIPT, members, args, 'shm'));
          if (implementation === 'ccjs threads') return collectiveSamples(implementation, members, await runThreads(SCRIPT, members, args, 'shm'));
          return collectiveSamples(implementation, members, mpiOutput(references, members, collectivesProgram(implementation)));
        });
      }
    }
    if (round <= plan.exampleRounds) {
      for (const example of EXAMPLES) {
        for (const members of [1, ...plan.members]) {
          await step(`round ${round}: ${exampleFigure(example, plan)}, ${members} member${members === 1 ? '' : 's'}`, exampleWeight(example, members), async () => ({
            [key('ccjs processes', exampleFigure(example, plan), members)]: [await exampleSeconds(example, plan.examples[example], members)],
          }));
        }
      }
    }
    run.roundsDone = round;
    writeReport(run, out, true);
  }
  progress.finish();
  process.stdout.write(`\n${fs.readFileSync(path.join(out, 'manycore.md'), 'utf8')}\nwrote ${out}\n`);
}

// ---- the report ----

interface Summary {
  readonly best: number;
  readonly median: number;
  readonly spread: number;
}

function summaryOf(run: Run, sampleKey: string): Summary | undefined {
  const values = run.samples[sampleKey];
  return values === undefined || values.length === 0 ? undefined : stats(values);
}

/** A target: `subject` against `reference` (both samples keys, times); at most `bound` times as long, or at least `bound` times as fast. */
interface Target {
  readonly name: string;
  readonly members: number;
  readonly subject: string;
  readonly reference: string;
  readonly kind: 'at most' | 'at least';
  readonly bound: number;
  /** Speedups: the bound is on reference ÷ subject, drawn in the chart as times slower than ideal. */
  readonly speedup?: boolean;
  /** Compare medians, not bests: a cold start is one sample per job, beside the steady state's typical cost. */
  readonly typical?: boolean;
}

interface TargetResult {
  readonly name: string;
  readonly members: number;
  /** As the target states it: subject ÷ reference for times, reference ÷ subject for speeds. */
  readonly value: number | null;
  readonly kind: 'at most' | 'at least';
  readonly bound: number;
  readonly met: boolean | null;
  /** subject ÷ reference, times. */
  readonly slower: number | null;
}

function targetsOf(plan: Plan): Target[] {
  const most = Math.max(...plan.members);
  const at = most === TARGET_MEMBERS ? '' : ` (set for ${TARGET_MEMBERS})`;
  const targets: Target[] = [
    { name: '8 B hop ≤ 3× Open MPI', members: 2, subject: key('ccjs processes', 'hop 8 B', 2), reference: key('Open MPI', 'hop 8 B', 2), kind: 'at most', bound: 3 },
    { name: 'small object hop ≤ 1× mpi4py', members: 2, subject: key('ccjs processes', 'small object hop', 2), reference: key('mpi4py', 'small object hop', 2), kind: 'at most', bound: 1 },
    { name: '1 MiB ping-pong ≥ 0.8× Open MPI', members: 2, subject: key('ccjs processes', 'ping-pong 1 MiB', 2), reference: key('Open MPI', 'ping-pong 1 MiB', 2), kind: 'at least', bound: 0.8 },
    { name: '16 MiB ping-pong ≥ 0.8× Open MPI', members: 2, subject: key('ccjs processes', 'ping-pong 16 MiB', 2), reference: key('Open MPI', 'ping-pong 16 MiB', 2), kind: 'at least', bound: 0.8 },
  ];
  for (const figure of ['barrier', 'broadcast 8 B', 'allReduce 8 B']) {
    targets.push({ name: `${figure} ≤ 2× Open MPI${at}`, members: most, subject: key('ccjs processes', figure, most), reference: key('Open MPI', figure, most), kind: 'at most', bound: 2 });
  }
  for (const figure of ['allReduce of a number', 'broadcast of a small dict']) {
    targets.push({ name: `${figure} ≤ 1× mpi4py${at}`, members: most, subject: key('ccjs processes', figure, most), reference: key('mpi4py', figure, most), kind: 'at most', bound: 1 });
  }
  for (const figure of ['barrier', 'broadcast 8 B', 'allReduce 8 B', 'allReduce of a number', 'broadcast of a small dict']) {
    targets.push({ name: `threads: ${figure} ≤ 1.2× processes${at}`, members: most, subject: key('ccjs threads', figure, most), reference: key('ccjs processes', figure, most), kind: 'at most', bound: 1.2 });
  }
  targets.push(
    { name: `broadcast 1 MiB ≥ 0.8× Open MPI${at}`, members: most, subject: key('ccjs processes', 'broadcast 1 MiB', most), reference: key('Open MPI', 'broadcast 1 MiB', most), kind: 'at least', bound: 0.8 },
    { name: `allReduce 1 MiB ≤ 1.5× Open MPI${at}`, members: most, subject: key('ccjs processes', 'allReduce 1 MiB', most), reference: key('Open MPI', 'allReduce 1 MiB', most), kind: 'at most', bound: 1.5 },
  );
  for (const example of EXAMPLES) {
    // On fewer members than 16, the same efficiency.
    const bound = (SPEEDUP_TARGETS[example] * most) / TARGET_MEMBERS;
    const figure = exampleFigure(example, plan);
    const name = `${figure} speedup ≥ ${Number(bound.toPrecision(3))}${most === TARGET_MEMBERS ? '' : ` (${SPEEDUP_TARGETS[example]} on ${TARGET_MEMBERS}, the same efficiency)`}`;
    targets.push({ name, members: most, subject: key('ccjs processes', figure, most), reference: key('ccjs processes', figure, 1), kind: 'at least', bound, speedup: true });
  }
  targets.push({ name: `${COLD_HOP} ≤ 2× the steady state`, members: 2, subject: key('ccjs processes', COLD_HOP, 2), reference: key('ccjs processes', 'hop 8 B', 2), kind: 'at most', bound: 2, typical: true });
  for (const implementation of ['ccjs processes', 'ccjs threads'] as const) {
    targets.push({ name: `${implementation}: ${COLD_COLLECTIVE} ≤ 2× the steady state`, members: most, subject: key(implementation, COLD_COLLECTIVE, most), reference: key(implementation, 'allReduce 8 B', most), kind: 'at most', bound: 2, typical: true });
  }
  return targets;
}

function evaluate(run: Run, target: Target): TargetResult {
  const subject = summaryOf(run, target.subject);
  const reference = summaryOf(run, target.reference);
  const common = { name: target.name, members: target.members, kind: target.kind, bound: target.bound };
  if (subject === undefined || reference === undefined) return { ...common, value: null, met: null, slower: null };
  const slower = target.typical === true ? subject.median / reference.median : subject.best / reference.best;
  const value = target.kind === 'at most' ? slower : 1 / slower;
  return { ...common, value, met: target.kind === 'at most' ? value <= target.bound : value >= target.bound, slower };
}

const formatValue = (value: number, unit: 'µs' | 'MB/s' | 's') => (unit === 'MB/s' ? `${(value / 1000).toFixed(2)} GB/s` : unit === 's' ? `${value.toFixed(2)} s` : formatMicroseconds(Number(value.toPrecision(3))));

/** "2.41 µs (2.90; 1.31×)": best, median and spread; bandwidths from µs per hop. */
function cell(summary: Summary | undefined, unit: 'µs' | 'MB/s' | 's', bytes = 0): string {
  if (summary === undefined) return '–';
  if (unit === 'MB/s') return `${formatValue(bytes / summary.best, unit)} (${((bytes / summary.median) / 1000).toFixed(2)}; ${summary.spread.toFixed(2)}×)`;
  return `${formatValue(summary.best, unit)} (${Number(summary.median.toPrecision(3))}; ${summary.spread.toFixed(2)}×)`;
}

/** best ÷ best of two time summaries, as text; bandwidths (higher is better) as speed ratios. */
function ratio(subject: Summary | undefined, reference: Summary | undefined, bandwidth = false): string {
  if (subject === undefined || reference === undefined) return '–';
  return `${(bandwidth ? reference.best / subject.best : subject.best / reference.best).toFixed(2)}×`;
}

/** The best peer's summary of `figure` at `members` (the least best time). */
function bestPeer(run: Run, figure: string, members: number, peers: readonly Implementation[]): Summary | undefined {
  const summaries = peers.map((peer) => summaryOf(run, key(peer, figure, members))).filter((summary): summary is Summary => summary !== undefined);
  return summaries.length === 0 ? undefined : summaries.reduce((a, b) => (a.best <= b.best ? a : b));
}

function markdown(run: Run, results: readonly TargetResult[]): string {
  const { plan } = run;
  const lines = [
    `# ccjs on ${run.machine.cores} cores beside Open MPI and mpi4py (bench/manycore)`,
    '',
    `${run.date}; ${run.machine.cpu}, ${run.machine.cores} cores; Node ${run.machine.node}; ${run.roundsDone} of ${plan.rounds} round(s) done, examples in ${Math.min(plan.exampleRounds, run.roundsDone)}${plan.quick ? ' (--quick)' : ''}; members ${plan.members.join(', ')}.`,
    `Open MPI: \`${run.mpirun}\`; mpi4py: ${run.python ?? 'not found'}. Collectives: ${plan.repetitions} repetitions of ${plan.smallCalls} calls (${plan.largeCalls} for 1 MiB) after a warm-up repetition, rank 0's time per call; broadcast roots go round the ranks.`,
    'Each cell: best (median; spread = max ÷ min) over every repetition of every round. Ratios: best ÷ best (cold start: median ÷ median); for bandwidths, how many times as fast.',
    '',
    '## Targets (issue 31)',
    '',
    '| target | members | measured | bound | |',
    '|---|---:|---:|---:|---|',
  ];
  for (const result of results) {
    const value = result.value === null ? 'n/a' : `${result.value.toFixed(2)}${result.name.includes('speedup') ? '' : '×'}`;
    const verdict = result.met === null ? 'not measured' : result.met ? 'met' : '**missed**';
    lines.push(`| ${result.name} | ${result.members} | ${value} | ${result.kind === 'at most' ? '≤' : '≥'} ${Number(result.bound.toPrecision(3))} | ${verdict} |`);
  }
  lines.push('', '## Between 2 processes', '', '| figure | Open MPI | mpi4py | ccjs processes | ccjs ÷ best peer |', '|---|---:|---:|---:|---:|');
  for (const figure of HOPS) {
    const unit = figure.bytes === undefined ? 'µs' : 'MB/s';
    const peerFigure = figure.peerFigure ?? figure.name;
    const peers = PEERS.map((peer) => (figure.peers.includes(peer) ? cell(summaryOf(run, key(peer, peerFigure, 2)), unit, figure.bytes) : '–'));
    const mine = summaryOf(run, key('ccjs processes', figure.name, 2));
    lines.push(`| ${figure.name} | ${peers.join(' | ')} | ${cell(mine, unit, figure.bytes)} | ${ratio(mine, bestPeer(run, peerFigure, 2, figure.peers), figure.bytes !== undefined)} |`);
  }
  lines.push(
    '',
    "## The 8 B hop and its floors (bench/hop-floor.ts: the same API shape with nothing but a ring; issue 31, item 5)",
    '',
    '| hop between 2 processes | steady state | ÷ Open MPI | first 1,000 hops, per hop | first ÷ steady (medians) |',
    '|---|---:|---:|---:|---:|',
  );
  const openMpiHop = summaryOf(run, key('Open MPI', 'hop 8 B', 2));
  for (const subject of ['Open MPI', FLOORS.javascript, FLOORS['addon call'], 'ccjs processes'] as const) {
    const steady = summaryOf(run, key(subject, 'hop 8 B', 2));
    const first = summaryOf(run, key(subject, COLD_HOP, 2));
    const typical = first === undefined || steady === undefined ? '–' : `${(first.median / steady.median).toFixed(2)}×`;
    lines.push(`| ${subject} | ${cell(steady, 'µs')} | ${ratio(steady, openMpiHop)} | ${cell(first, 'µs')} | ${typical} |`);
  }
  lines.push(
    '',
    '## Collectives (time per call)',
    '',
    'Sleeps: rank 0\'s waits per call that stopped spinning and slept (master.waitCounts); messages: what rank 0\'s endpoint sent per call (master.messageCounts; none through the collective segment); each the median (most) over the repetitions.',
    '',
    '| figure | members | Open MPI | mpi4py | ccjs processes | ccjs threads | processes ÷ best peer | threads ÷ best peer | threads ÷ processes | sleeps per call, processes | sleeps per call, threads | messages per call, processes | messages per call, threads |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const perCall = (implementation: Implementation, figure: string, members: number) => {
    const values = run.samples[key(implementation, figure, members)];
    return values === undefined || values.length === 0 ? '–' : `${Number(stats(values).median.toPrecision(2))} (${Number(Math.max(...values).toPrecision(2))})`;
  };
  for (const figure of COLLECTIVES) {
    for (const members of plan.members) {
      const summaries = IMPLEMENTATIONS.map((implementation) => summaryOf(run, key(implementation, figure.name, members)));
      const [processes, threads, openMpi, mpi4py] = summaries;
      const peer = bestPeer(run, figure.name, members, PEERS);
      lines.push(
        `| ${figure.name} | ${members} | ${cell(openMpi, 'µs')} | ${cell(mpi4py, 'µs')} | ${cell(processes, 'µs')} | ${cell(threads, 'µs')} | ${ratio(processes, peer)} | ${ratio(threads, peer)} | ${ratio(threads, processes)} | ${perCall('ccjs processes', `${figure.name}${SLEEPS_FIGURE}`, members)} | ${perCall('ccjs threads', `${figure.name}${SLEEPS_FIGURE}`, members)} | ${perCall('ccjs processes', `${figure.name}${MESSAGES_FIGURE}`, members)} | ${perCall('ccjs threads', `${figure.name}${MESSAGES_FIGURE}`, members)} |`,
      );
    }
  }
  lines.push('', '## Cold start (the first calls of a job beside its steady state; ratio of medians)', '', '| figure | members | ccjs | first, per call | steady state, per call | first ÷ steady |', '|---|---:|---|---:|---:|---:|');
  const coldRow = (figure: string, steady: string, members: number, implementation: Implementation) => {
    const first = summaryOf(run, key(implementation, figure, members));
    const warm = summaryOf(run, key(implementation, steady, members));
    const typical = first === undefined || warm === undefined ? '–' : `${(first.median / warm.median).toFixed(2)}×`;
    lines.push(`| ${figure} | ${members} | ${implementation.replace('ccjs ', '')} | ${cell(first, 'µs')} | ${cell(warm, 'µs')} | ${typical} |`);
  };
  for (const figure of [FIRST_TRIP, COLD_HOP]) coldRow(figure, 'hop 8 B', 2, 'ccjs processes');
  for (const figure of [FIRST_COLLECTIVE, COLD_COLLECTIVE]) {
    for (const members of plan.members) for (const implementation of ['ccjs processes', 'ccjs threads'] as const) coldRow(figure, 'allReduce 8 B', members, implementation);
  }
  lines.push('', '## Examples (ccjrun -n p, shared memory): speedup against their own 1-member time', '', '| example | members | time | speedup | efficiency |', '|---|---:|---:|---:|---:|');
  for (const example of EXAMPLES) {
    const figure = exampleFigure(example, plan);
    const one = summaryOf(run, key('ccjs processes', figure, 1));
    for (const members of [1, ...plan.members]) {
      const own = summaryOf(run, key('ccjs processes', figure, members));
      const speedup = one === undefined || own === undefined ? undefined : one.best / own.best;
      lines.push(`| ${figure} | ${members} | ${cell(own, 's')} | ${speedup === undefined ? '–' : speedup.toFixed(2)} | ${speedup === undefined ? '–' : (speedup / members).toFixed(2)} |`);
    }
  }
  if (run.notes.length > 0) lines.push('', ...run.notes.map((note) => `- ${note}`));
  return `${lines.join('\n')}\n`;
}

function charts(run: Run, results: readonly TargetResult[], targets: readonly Target[]): Map<string, string> {
  const bars: Bar[] = [];
  results.forEach((result, index) => {
    const target = targets[index] as Target;
    if (result.slower === null) return;
    // Every bar: times slower than the bound's reference (lower is better); speedups: than ideal.
    // "8 B hop ≤ 3× Open MPI (set for 16)" → "8 B hop vs Open MPI, 2 members".
    const label = `${result.name.replace(/ \(.*\)$/, '').replace(/ [≤≥] [\d.]+×? /, ' vs ')}, ${result.members} members`;
    if (target.speedup === true) bars.push({ label: `${result.name.replace(/ ≥.*/, '')}, ${result.members} members: ideal ÷ speedup`, value: result.slower * result.members, target: result.members / target.bound });
    else bars.push({ label, value: result.slower, target: target.kind === 'at most' ? target.bound : 1 / target.bound });
  });
  const files = new Map<string, string>();
  files.set('manycore.svg', barChart(`ccjs on ${run.machine.cores} cores: times slower than the target's reference (best of the run)`, 'times slower (log scale); black mark: the target; green: met', bars));
  const series: ChartSeries[] = [];
  for (const [figure, implementations] of [
    ['barrier', ['ccjs processes', 'ccjs threads', 'Open MPI']],
    ['allReduce 8 B', ['ccjs processes', 'ccjs threads', 'Open MPI']],
    ['allReduce 1 MiB', ['ccjs processes', 'Open MPI']],
  ] as const) {
    for (const implementation of implementations) {
      const points = run.plan.members.flatMap((members) => {
        const summary = summaryOf(run, key(implementation, figure, members));
        return summary === undefined ? [] : [[members, summary.best] as const];
      });
      if (points.length > 0) series.push({ name: `${figure}, ${implementation}`, points });
    }
  }
  files.set('manycore-collectives.svg', lineChart({ title: 'Collectives by member count (best of the run)', x: 'members', xLabel: 'members p', y: 'time', yLabel: 'time per call (rank 0)', series }));
  const members = [1, ...run.plan.members];
  const speedups: ChartSeries[] = EXAMPLES.map((example) => {
    const figure = exampleFigure(example, run.plan);
    const one = summaryOf(run, key('ccjs processes', figure, 1));
    return {
      name: figure,
      points: members.flatMap((count) => {
        const own = summaryOf(run, key('ccjs processes', figure, count));
        return one === undefined || own === undefined ? [] : [[count, one.best / own.best] as const];
      }),
    };
  });
  speedups.push({ name: 'ideal', points: members.map((count) => [count, count] as const), style: 'dashed' });
  files.set('manycore-speedup.svg', lineChart({ title: 'Examples: speedup against their own 1-member time', x: 'members', xLabel: 'members p (processes)', y: 'factor', yLabel: 'speedup', series: speedups }));
  return files;
}

/** Writes the table, the JSON and the plots; with `png`, a PNG of each plot too where rsvg-convert is installed. */
function writeReport(run: Run, out: string, png: boolean): void {
  const targets = targetsOf(run.plan);
  const results = targets.map((target) => evaluate(run, target));
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'manycore.json'), `${JSON.stringify({ ...run, targets: results }, null, 1)}\n`);
  fs.writeFileSync(path.join(out, 'manycore.md'), markdown(run, results));
  for (const [name, svg] of charts(run, results, targets)) {
    const file = path.join(out, name);
    fs.writeFileSync(file, svg);
    // A PNG to look at (the device machine has no converter: `report` here afterwards).
    if (png) spawnSync('rsvg-convert', ['-o', file.replace(/\.svg$/, '.png'), file]);
  }
}

// ---- the command line ----

function planFrom(flags: Map<string, string>): Plan {
  const quick = flags.has('quick');
  const integer = (name: string, fallback: number, least: number) => {
    const value = flags.has(name) ? Number(flags.get(name)) : fallback;
    if (!Number.isInteger(value) || value < least) throw new UsageError(`--${name} must be an integer >= ${least}, got '${flags.get(name)}'`);
    return value;
  };
  const cores = os.availableParallelism();
  const powers: number[] = [];
  for (let count = 2; count <= Math.max(2, cores); count *= 2) powers.push(count);
  if (cores > 2 && !powers.includes(cores)) powers.push(cores);
  const members = flags.has('members') ? parseMembers(flags.get('members') as string) : powers;
  if (members.some((count) => count < 2)) throw new UsageError(`--members: counts of 2 or more, got '${flags.get('members')}'`);
  return {
    quick,
    members,
    rounds: integer('rounds', quick ? 1 : 3, 1),
    exampleRounds: integer('example-rounds', 1, 0),
    repetitions: quick ? 3 : 5,
    smallCalls: quick ? 100 : 1000,
    largeCalls: quick ? 5 : 50,
    hops: hopRepeats(quick),
    examples: quick ? { ASP: 400, QR: 300, LEQ: 300 } : { ASP: 2000, QR: 2000, LEQ: 1000 },
  };
}

async function main(args: readonly string[]): Promise<void> {
  await withUsage(args, USAGE, async () => {
    const report = args[0] === 'report';
    const flags = readFlags(report ? args.slice(1) : args, report ? { values: ['out'], switches: [] } : { values: ['members', 'rounds', 'example-rounds', 'out'], switches: ['quick'] });
    const out = path.resolve(flags.get('out') ?? DEFAULT_OUT);
    if (!report) return orchestrate(planFrom(flags), out);
    const file = path.join(out, 'manycore.json');
    if (!fs.existsSync(file)) throw new UsageError(`report redraws from ${file}, which does not exist`);
    const { targets: _, ...run } = JSON.parse(fs.readFileSync(file, 'utf8')) as Run & { targets: unknown };
    writeReport(run, out, true);
    process.stdout.write(fs.readFileSync(path.join(out, 'manycore.md'), 'utf8'));
  });
}

const role = process.argv[2];
if (role === 'hops') await hopsEndpoint(JSON.parse(process.argv[3] as string) as Plan);
else if (role === 'collectives') await collectivesEndpoint(Number(process.argv[3]), process.argv.slice(4));
else await main(process.argv.slice(2));
