/**
 * ccjbench: the micro-benchmark suite of Taboada, Touriño and Doallo, Performance Analysis of Message-Passing Libraries on High-Speed Clusters, section 3, for ccjs. Ping-pong (sendSync and
 * sendAsync, half round trip) and every collective with every registered algorithm, over message
 * sizes and member counts; each member count is a job of that many processes (TCP between them).
 * A repetition starts after a barrier and takes the slowest member's time; the result is the
 * minimum over repetitions. Payloads are Float64Arrays (raw bytes, no serialization) or arrays of
 * small objects of about the same size (serialized), to show what serialization costs. Writes
 * results JSON, markdown tables, the model tables (model.ts) and SVG plots; ccjtune reuses the
 * machinery to choose algorithms.
 *
 *   npx ccjbench [--list-algorithms] [--collectives a,b] [--algorithms x,y] [--sizes 0,4,16|--max-size BYTES]
 *                [--members 2..N|2,3,4] [--payload typed|object|both] [--repetitions R]
 *                [--transport tcp|auto] [--hosts a:2,b:2 [--launch-agent CMD]] [--out DIR] [--quick] [--counts]
 *
 * --hosts runs one job over those hosts (ccjrun's host list; members: all their slots), started
 * through the launch agent (ssh by default), so that the collectives see a layout over hosts and
 * their hierarchical variants do what they are for.
 * --counts also counts, once per point apart from the timed repetitions, the messages and bytes one
 * call sends over the job, per device and between hosts (ColGroupMaster.messageCounts), and prints them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import type { ColGroup, DeviceName, MessageCount, MessageCounts } from '../src/index.js';
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import { algorithmName } from '../src/collectives/selection.js';
import type { CollectiveName, Layout } from '../src/collectives/algorithm.js';
import { parseHostList } from '../src/cli/hosts.js';
import { estimatedBytes } from '../src/collectives/message-size.js';
import { Reductions } from '../reduction/index.js';
import type { Located, ReductionObject } from '../reduction/index.js';
import { DividableArray } from '../dividable/dividable-array.js';
import { lineReader, runHostsJob, runJob } from './job.js';
import { Progress, warnIfLoaded } from './progress.js';
import { lineChart } from './svg.js';
import type { YAxisKind } from './svg.js';
import { formatBytes } from './units.js';
import { aggregationFactor, fitSeries, formatNumber, hockneyTime, linearModelTime, modelTable, peakTable } from './model.js';
import type { ModelFit, Primitive, Series } from './model.js';

const SCRIPT = fileURLToPath(import.meta.url);
/** Relative to the working directory, like ccjtune's config file. */
const DEFAULT_RESULTS = path.join('bench', 'results');

const PINGPONG_VARIANTS = ['sendSync', 'sendAsync'] as const;
export const PAYLOADS = ['typed', 'object'] as const;
export type PayloadKind = (typeof PAYLOADS)[number];
export const BENCH_TRANSPORTS = ['tcp', 'auto'] as const;
export type BenchTransport = (typeof BENCH_TRANSPORTS)[number];

/** One point: the best repetition of one primitive, algorithm, payload, size and member count. */
export interface Measurement {
  readonly primitive: Primitive;
  readonly algorithm: string;
  readonly payload: PayloadKind;
  readonly members: number;
  /** Message length n as the performance-model paper counts it: the whole buffer a member passes (all blocks, for dividable data). */
  readonly bytes: number;
  /** The per-member size the algorithm selection keys on (a block, for scatter, gather, allGather, allToAll). */
  readonly selectionBytes: number;
  /** Slowest member's time of the best repetition, µs (half round trip for ping-pong). */
  readonly microseconds: number;
  readonly repetitions: number;
  /** With --counts: what one call sent, summed over the endpoints. */
  readonly counts?: CallCounts;
  /** With --hosts: how the members were spread over the hosts. */
  readonly layout?: Layout;
}

/** Messages (and bytes) one call sent, summed over the job's endpoints: per device, and between hosts. */
export interface CallCounts {
  readonly byDevice: Partial<Record<DeviceName, MessageCount>>;
  readonly otherHost: MessageCount;
}

const COUNTED_DEVICES: readonly DeviceName[] = ['local', 'shm', 'tcp', 'ucx'];

export interface PrimitivePlan {
  readonly primitive: Primitive;
  readonly algorithms: readonly string[];
}

/** What one run of the suite measures; passed to every rank as JSON. */
export interface SuitePlan {
  readonly primitives: readonly PrimitivePlan[];
  readonly sizes: readonly number[];
  readonly payloads: readonly PayloadKind[];
  /** Object payloads above this many bytes are skipped (serializing 16 MiB of objects takes seconds per call). */
  readonly objectSizeLimit: number;
  readonly members: readonly number[];
  /** Repetitions of the largest messages; smaller ones get up to SMALL_MESSAGE_BOOST times more. */
  readonly repetitions: number;
  /** A point stops repeating (after MIN_REPETITIONS) once its repetitions took this long in total. */
  readonly budgetMicroseconds: number;
  readonly transport: BenchTransport;
  /** --counts: count each point's messages once, apart from the timed repetitions. */
  readonly counts?: boolean;
  /** --hosts: one job over these hosts instead of jobs on this machine. */
  readonly hosts?: HostsPlan;
}

export interface HostsPlan {
  /** ccjrun's --hosts list, e.g. "a:2,b:2". */
  readonly list: string;
  readonly launchAgent: string;
  readonly layout: Layout;
}

const KIB = 1024;
const MIB = 1024 * KIB;
const MIN_REPETITIONS = 2;
const SMALL_MESSAGE_BOOST = 5;
/** Bytes per element of an object payload: msgpack encodes { value: 1.5, index: 1 } in 23 to 27 bytes. */
const OBJECT_BYTES = 24;

/** The full suite and the quick one; flags override either. */
const PRESETS = {
  full: {
    sizes: [0, ...Array.from({ length: 13 }, (_, i) => 4 ** i)], // 0, 1, 4, ... 16 MiB: the paper's powers of four
    members: [2, 3, 4],
    repetitions: 10,
    budgetMicroseconds: 1_000_000,
    objectSizeLimit: MIB,
  },
  quick: {
    sizes: [0, KIB, 16 * KIB, 256 * KIB, 2 * MIB], // latency-bound, small, eager (up to 128 KiB), rendezvous, bandwidth-bound
    members: [2, 3],
    repetitions: 5,
    budgetMicroseconds: 200_000,
    objectSizeLimit: 64 * KIB,
  },
} as const;

// ---------- what runs ----------

/** Every registered algorithm (ALGORITHMS), and the two ping-pong variants. */
function allPrimitives(): PrimitivePlan[] {
  return [{ primitive: 'pingpong', algorithms: [...PINGPONG_VARIANTS] }, ...COLLECTIVES.map((collective) => ({ primitive: collective, algorithms: Object.keys(ALGORITHMS[collective]) }))];
}

/** Repetitions for a message size: small messages are cheap and noisy, so they repeat more. */
function repetitionsFor(plan: SuitePlan, bytes: number): number {
  const boost = Math.min(SMALL_MESSAGE_BOOST, Math.max(1, Math.sqrt(MIB / Math.max(bytes, 1))));
  return Math.round(plan.repetitions * boost);
}

interface Point {
  readonly primitive: Primitive;
  readonly algorithm: string;
  readonly payload: PayloadKind;
  readonly bytes: number;
}

/** What rank 0 prints after each point, so that the command that started the job can show its progress. */
const POINT_DONE = 'ccjbench point done';

/**
 * A guess of the µs a point takes, for the ETA only: a repetition (barrier, call, allReduce of
 * the time) of about 1 ms plus 2 ns per byte of typed payload or 50 ns per byte of objects,
 * for the warm-up and the repetitions the budget allows.
 */
function estimatedMicroseconds(plan: SuitePlan, point: Point): number {
  const repetition = 1000 + (point.payload === 'object' ? 0.05 : 0.002) * point.bytes;
  return repetition * (1 + Math.min(repetitionsFor(plan, point.bytes), Math.max(MIN_REPETITIONS, plan.budgetMicroseconds / repetition)));
}

/** µs a job takes to start its processes and form its group, for the ETA. */
const JOB_START_MICROSECONDS = 500_000;

/** The points a job of `members` processes measures, in order (every rank computes the same list). */
function pointsOf(plan: SuitePlan, members: number): Point[] {
  const points: Point[] = [];
  for (const { primitive, algorithms } of plan.primitives) {
    if (primitive === 'pingpong' && members !== 2) continue;
    for (const algorithm of algorithms) {
      for (const payload of primitive === 'barrier' ? (['typed'] as const) : plan.payloads) {
        const sizes = primitive === 'barrier' ? [0] : plan.sizes.filter((bytes) => payload === 'typed' || bytes <= plan.objectSizeLimit);
        for (const bytes of sizes) points.push({ primitive, algorithm, payload, bytes });
      }
    }
  }
  return points;
}

// ---------- the ranks ----------

type Payload = Float64Array | Uint8Array | Located<number>[];

/** `bytes` of doubles (bytes that are not whole doubles as a Uint8Array), or ~bytes/24 small objects. */
function payloadOf(kind: PayloadKind, bytes: number, rank: number): Payload {
  if (kind === 'object') return Array.from({ length: Math.floor(bytes / OBJECT_BYTES) }, (_, index) => ({ value: rank + index + 0.5, index }));
  return bytes % 8 === 0 ? new Float64Array(bytes / 8).fill(rank + 1.5) : new Uint8Array(bytes).fill(rank + 1);
}

/** An array of the same type, for results that setElementAt fills. */
function emptyLike(payload: Payload, length = payload.length): Payload {
  if (Array.isArray(payload)) return new Array<Located<number>>(length);
  return payload instanceof Float64Array ? new Float64Array(length) : new Uint8Array(length);
}

/** Double-precision addition as in the paper for typed arrays; MAXLOC, element-wise, for the objects. */
function reductionFor(kind: PayloadKind): ReductionObject<Payload> {
  return (kind === 'typed' ? Reductions.SUM : Reductions.MAXLOC) as unknown as ReductionObject<Payload>;
}

interface CallSetup {
  readonly member: ColMember;
  readonly group: ColGroup;
  readonly rank: number;
  readonly data: Payload;
  readonly op: ReductionObject<Payload>;
  readonly algorithm: string;
}

interface PreparedCall {
  /** What the selector sees for this call (mirrors src/collectives/operations.ts). */
  readonly selectionBytes: number;
  /** Divides the measured time: 2 turns a ping-pong round trip into the one-way time. */
  readonly divisor: number;
  readonly run: () => Promise<unknown>;
}

/** Everything a call needs is built here, outside the timed region; `run` only makes the call. */
const CALLS: { readonly [P in Primitive]: (setup: CallSetup) => PreparedCall } = {
  pingpong: ({ member, group, rank, data, algorithm }) => {
    const send = algorithm === 'sendSync' ? member.sendSync.bind(member) : member.sendAsync.bind(member);
    const run =
      rank === 0
        ? async () => {
            await send(group, data, 1);
            await member.receive(group, 1);
          }
        : async () => send(group, await member.receive(group, 0), 0);
    return { selectionBytes: estimatedBytes(data), divisor: 2, run };
  },
  barrier: ({ member, group, algorithm }) => {
    const options = { algorithm: algorithmName('barrier', algorithm, '--algorithms') };
    return { selectionBytes: 0, divisor: 1, run: () => member.barrier(group, options) };
  },
  broadcast: ({ member, group, data, algorithm }) => {
    const options = { algorithm: algorithmName('broadcast', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(data), divisor: 1, run: () => member.broadcast(group, data, 0, options) };
  },
  reduce: ({ member, group, data, op, algorithm }) => {
    const options = { algorithm: algorithmName('reduce', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(data), divisor: 1, run: () => member.reduce(group, data, op, 0, options) };
  },
  allReduce: ({ member, group, data, op, algorithm }) => {
    const options = { algorithm: algorithmName('allReduce', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(data), divisor: 1, run: () => member.allReduce(group, data, op, options) };
  },
  scan: ({ member, group, data, op, algorithm }) => {
    const options = { algorithm: algorithmName('scan', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(data), divisor: 1, run: () => member.scan(group, data, op, options) };
  },
  scatter: ({ member, group, rank, data, algorithm }) => {
    const whole = new DividableArray(data);
    const options = { algorithm: algorithmName('scatter', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(whole.elementAt(rank, group.size())), divisor: 1, run: () => member.scatter(group, whole, 0, options) };
  },
  gather: ({ member, group, rank, data, algorithm }) => {
    const block = new DividableArray(data).elementAt(rank, group.size());
    const result = rank === 0 ? new DividableArray(emptyLike(data)) : null;
    const options = { algorithm: algorithmName('gather', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(block), divisor: 1, run: () => member.gather(group, result, block, 0, options) };
  },
  allGather: ({ member, group, rank, data, algorithm }) => {
    const block = new DividableArray(data).elementAt(rank, group.size());
    const result = new DividableArray(emptyLike(data));
    const options = { algorithm: algorithmName('allGather', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(block), divisor: 1, run: () => member.allGather(group, result, block, options) };
  },
  allToAll: ({ member, group, rank, data, algorithm }) => {
    const send = new DividableArray(data);
    const mine = send.elementAt(rank, group.size());
    // Every sender's block `rank` is as long as this member's own block; the result holds one per sender.
    const result = new DividableArray(emptyLike(data, mine.length * group.size()));
    const options = { algorithm: algorithmName('allToAll', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(mine), divisor: 1, run: () => member.allToAll(group, send, result, options) };
  },
  reduceScatter: ({ member, group, data, op, algorithm }) => {
    const whole = new DividableArray(data);
    const blocks = Array.from({ length: group.size() }, (_, index) => whole.elementAt(index, group.size()));
    const options = { algorithm: algorithmName('reduceScatter', algorithm, '--algorithms') };
    return { selectionBytes: estimatedBytes(blocks), divisor: 1, run: () => member.reduceScatter(group, whole, op, options) };
  },
};

class BenchMember extends ColMember {
  readonly measurements: Measurement[] = [];

  constructor(
    private readonly master: ColGroupMaster,
    private readonly plan: SuitePlan,
  ) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('ccjbench', this.master.getNumberOfCpus());
    const rank = group.getRank(this);
    const members = group.size();
    for (const point of pointsOf(this.plan, members)) {
      const data = payloadOf(point.payload, point.bytes, rank);
      const call = CALLS[point.primitive]({ member: this, group, rank, data, op: reductionFor(point.payload), algorithm: point.algorithm });
      const { microseconds, repetitions } = await this.best(group, call, repetitionsFor(this.plan, point.bytes));
      const counts = this.plan.counts === true ? { counts: await this.count(group, call) } : {};
      const layout = this.plan.hosts === undefined ? {} : { layout: this.plan.hosts.layout };
      this.measurements.push({ ...point, members, selectionBytes: call.selectionBytes, microseconds, repetitions, ...counts, ...layout });
      if (rank === 0) process.stdout.write(`${POINT_DONE}\n`);
    }
  }

  /** What one more call sends, summed over the endpoints (one member each). */
  private async count(group: ColGroup, call: PreparedCall): Promise<CallCounts> {
    const flatten = (counts: MessageCounts) => [...COUNTED_DEVICES.map((device) => counts.byDevice[device] ?? { messages: 0, bytes: 0 }), counts.otherHost].flatMap((count) => [count.messages, count.bytes]);
    await this.barrier(group);
    const before = flatten(this.master.messageCounts());
    await call.run();
    const after = flatten(this.master.messageCounts());
    const sums = await this.allReduce(group, Float64Array.from(after, (value, index) => value - (before[index] as number)), Reductions.SUM);
    const countAt = (index: number): MessageCount => ({ messages: sums[2 * index] as number, bytes: sums[2 * index + 1] as number });
    const byDevice = Object.fromEntries(COUNTED_DEVICES.map((device, index) => [device, countAt(index)]).filter(([, count]) => (count as MessageCount).messages > 0));
    return { byDevice, otherHost: countAt(COUNTED_DEVICES.length) };
  }

  /** Minimum over repetitions of the slowest member's time; every rank sees the same slowest times, so all stop together. */
  private async best(group: ColGroup, call: PreparedCall, repetitions: number): Promise<{ microseconds: number; repetitions: number }> {
    await this.barrier(group);
    await call.run(); // warm-up: compiles the path and opens the connections
    let best = Infinity;
    let spent = 0;
    let done = 0;
    while (done < repetitions && (done < MIN_REPETITIONS || spent < this.plan.budgetMicroseconds)) {
      await this.barrier(group); // no overlap with the previous repetition (the paper's pipelining caveat)
      const start = process.hrtime.bigint();
      await call.run();
      const mine = Number(process.hrtime.bigint() - start) / 1000 / call.divisor;
      const slowest = await this.allReduce(group, mine, Reductions.MAX);
      best = Math.min(best, slowest);
      spent += slowest;
      done += 1;
    }
    return { microseconds: best, repetitions: done };
  }
}

/** One process of a job: its member measures every point; rank 0 prints the measurements as JSON. */
async function runRank(plan: SuitePlan): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = new BenchMember(master, plan);
  master.addMember('ccjbench', member);
  await member.start();
  if (master.rank === 0) process.stdout.write(`${JSON.stringify(member.measurements)}\n`);
}

/** Calls `onLine` with each whole line of a text that arrives in chunks. */
/**
 * Runs the plan: one job per member count, each a set of real processes, under one progress
 * bar titled `command`; warns first when the machine is too busy to measure.
 */
export async function runSuite(plan: SuitePlan, command: string): Promise<Measurement[]> {
  warnIfLoaded();
  const jobs = plan.members.map((members) => ({ members, points: pointsOf(plan, members) })).filter((job) => job.points.length > 0);
  const total = jobs.reduce((sum, job) => sum + JOB_START_MICROSECONDS + job.points.reduce((points, point) => points + estimatedMicroseconds(plan, point), 0), 0);
  const progress = new Progress(command, total);
  const measurements: Measurement[] = [];
  for (const { members, points } of jobs) {
    let next = 0;
    const onLine = (line: string) => {
      if (line !== POINT_DONE) return;
      const point = points[next];
      progress.tick(`p=${members} ${point.primitive} ${point.algorithm} ${point.payload} ${formatBytes(point.bytes)}`, (next === 0 ? JOB_START_MICROSECONDS : 0) + estimatedMicroseconds(plan, point));
      next += 1;
    };
    const args = ['rank', JSON.stringify(plan)];
    const output = plan.hosts === undefined ? await runJob(SCRIPT, members, args, plan.transport, lineReader(onLine)) : await runHostsJob(SCRIPT, plan.hosts.list, plan.hosts.launchAgent, args, plan.transport, lineReader(onLine));
    measurements.push(...(JSON.parse(output.trim().split('\n').pop() as string) as Measurement[]));
  }
  progress.finish();
  return measurements;
}

// ---------- command line ----------

export class UsageError extends Error {}

/** Flags a command accepts: those that take a value, and switches. */
export interface FlagSpec {
  readonly values: readonly string[];
  readonly switches: readonly string[];
}

/** The flags that shape the suite, shared by ccjbench and ccjtune. */
export const SUITE_FLAGS: FlagSpec = {
  values: ['collectives', 'algorithms', 'sizes', 'max-size', 'members', 'repetitions', 'transport', 'hosts', 'launch-agent'],
  switches: ['quick'],
};

export function readFlags(args: readonly string[], spec: FlagSpec): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i += 1) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : undefined;
    if (name !== undefined && spec.switches.includes(name)) flags.set(name, 'true');
    else if (name !== undefined && spec.values.includes(name)) {
      if (i + 1 >= args.length) throw new UsageError(`--${name} needs a value`);
      flags.set(name, args[(i += 1)]);
    } else throw new UsageError(`unknown argument '${args[i]}'`);
  }
  return flags;
}

/** "1024", "64K", "16M" (binary units). */
function parseBytes(text: string): number {
  const match = /^(\d+)([KMG]?)i?B?$/i.exec(text.trim());
  if (match === null) throw new UsageError(`'${text}' is not a byte count like 1024, 64K or 16M`);
  return Number(match[1]) * { '': 1, K: KIB, M: MIB, G: 1024 * MIB }[match[2].toUpperCase() as '' | 'K' | 'M' | 'G'];
}

/** "2..4" or "2,3,4". */
export function parseMembers(text: string): number[] {
  const range = /^(\d+)\.\.(\d+)$/.exec(text.trim());
  const members = range ? Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i) : text.split(',').map(Number);
  if (members.length === 0 || members.some((count) => !Number.isInteger(count) || count < 1)) throw new UsageError(`--members '${text}' is not a range like 2..4 or a list like 2,3,4 of counts >= 1`);
  return [...new Set(members)].sort((a, b) => a - b);
}

function powersOfFourUpTo(maximum: number): number[] {
  const sizes = [0];
  for (let bytes = 1; bytes <= maximum; bytes *= 4) sizes.push(bytes);
  return sizes;
}

function listFlag(flags: Map<string, string>, name: string): string[] | undefined {
  return flags.get(name)?.split(',').map((item) => item.trim()).filter((item) => item !== '');
}

/** Whether `algorithm` of `primitive` runs through a collective segment (shared memory of one host). */
export function runsThroughSegment(primitive: string, algorithm: string): boolean {
  return (COLLECTIVES as string[]).includes(primitive) && ALGORITHMS[primitive as CollectiveName][algorithm]?.sharedMemory === true;
}

/** The plan that flags describe: the quick or full preset, narrowed and overridden by the flags. */
export function planFrom(flags: Map<string, string>, payloads: readonly PayloadKind[]): SuitePlan {
  const preset = flags.has('quick') ? PRESETS.quick : PRESETS.full;
  let primitives = allPrimitives();
  const collectives = listFlag(flags, 'collectives');
  if (collectives !== undefined) {
    const known = primitives.map((plan) => plan.primitive as string);
    const unknown = collectives.find((name) => !known.includes(name));
    if (unknown !== undefined) throw new UsageError(`--collectives: unknown '${unknown}'; valid: ${known.join(', ')}`);
    primitives = primitives.filter((plan) => collectives.includes(plan.primitive));
  }
  const algorithms = listFlag(flags, 'algorithms');
  if (algorithms !== undefined) {
    const known = new Set(allPrimitives().flatMap((plan) => plan.algorithms));
    const unknown = algorithms.find((name) => !known.has(name));
    if (unknown !== undefined) throw new UsageError(`--algorithms: no primitive has an algorithm '${unknown}'; see --list-algorithms`);
    primitives = primitives.map((plan) => ({ ...plan, algorithms: plan.algorithms.filter((name) => algorithms.includes(name)) })).filter((plan) => plan.algorithms.length > 0);
  }
  if (primitives.length === 0) throw new UsageError('nothing to measure: --collectives and --algorithms leave no algorithm');
  const sizesFlag = listFlag(flags, 'sizes');
  const maxSize = flags.get('max-size');
  if (sizesFlag !== undefined && maxSize !== undefined) throw new UsageError('give --sizes or --max-size, not both');
  const sizes = sizesFlag?.map(parseBytes) ?? (maxSize !== undefined ? powersOfFourUpTo(parseBytes(maxSize)) : [...preset.sizes]);
  const repetitions = Number(flags.get('repetitions') ?? preset.repetitions);
  if (!Number.isInteger(repetitions) || repetitions < 1) throw new UsageError(`--repetitions must be an integer >= 1, got '${flags.get('repetitions')}'`);
  const transport = flags.get('transport') ?? 'tcp';
  if (!(BENCH_TRANSPORTS as readonly string[]).includes(transport)) throw new UsageError(`--transport must be one of ${BENCH_TRANSPORTS.join(', ')}, got '${transport}'`);
  const hosts = hostsPlanFrom(flags);
  // A collective segment serves the members of one host: not measured over several.
  if (hosts !== undefined) primitives = primitives.map((plan) => ({ ...plan, algorithms: plan.algorithms.filter((name) => !runsThroughSegment(plan.primitive, name)) })).filter((plan) => plan.algorithms.length > 0);
  if (hosts !== undefined && flags.has('members') && flags.get('members') !== String(hosts.members)) throw new UsageError(`--members: a job on --hosts ${hosts.plan.list} has all their ${hosts.members} slots`);
  return {
    ...(hosts === undefined ? {} : { hosts: hosts.plan }),
    primitives,
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    payloads,
    // Sizes asked for explicitly are measured with objects too, however long that takes.
    objectSizeLimit: sizesFlag !== undefined || maxSize !== undefined ? Number.MAX_SAFE_INTEGER : preset.objectSizeLimit, // JSON has no Infinity
    members: hosts !== undefined ? [hosts.members] : flags.has('members') ? parseMembers(flags.get('members') as string) : [...preset.members],
    repetitions,
    budgetMicroseconds: preset.budgetMicroseconds,
    transport: transport as BenchTransport,
  };
}

/** --hosts and --launch-agent: the hosts, their layout and the member count, or undefined without --hosts. */
function hostsPlanFrom(flags: Map<string, string>): { plan: HostsPlan; members: number } | undefined {
  const list = flags.get('hosts');
  if (list === undefined) {
    if (flags.has('launch-agent')) throw new UsageError('--launch-agent goes with --hosts');
    return undefined;
  }
  let slots: number[];
  try {
    slots = parseHostList(list).map((host) => host.slots);
  } catch (error) {
    throw new UsageError(`--hosts: ${(error as Error).message}`);
  }
  const plan = { list, launchAgent: flags.get('launch-agent') ?? 'ssh', layout: { hosts: slots.length, perHost: Math.max(...slots) } };
  return { plan, members: slots.reduce((sum, count) => sum + count, 0) };
}

// ---------- reports ----------

const variantOf = (measurement: Measurement) => `${measurement.algorithm} (${measurement.payload})`;

/** Measurements grouped into series of one primitive, variant and member count, sizes ascending. */
function seriesOf(measurements: readonly Measurement[]): Series[] {
  const groups = new Map<string, Measurement[]>();
  for (const measurement of measurements) {
    const key = JSON.stringify([measurement.primitive, variantOf(measurement), measurement.members]);
    groups.set(key, [...(groups.get(key) ?? []), measurement]);
  }
  return [...groups.values()].map((group) => ({
    primitive: group[0].primitive,
    variant: variantOf(group[0]),
    members: group[0].members,
    samples: group.map(({ bytes, microseconds }) => ({ bytes, microseconds })).sort((a, b) => a.bytes - b.bytes),
  }));
}

const unique = <T>(values: readonly T[]) => [...new Set(values)];

/** Per primitive and member count: sizes down, variants across, µs; the fastest typed variant in bold. */
function latencyTables(measurements: readonly Measurement[]): string {
  const sections: string[] = [];
  for (const primitive of unique(measurements.map((m) => m.primitive))) {
    for (const members of unique(measurements.filter((m) => m.primitive === primitive).map((m) => m.members))) {
      const here = measurements.filter((m) => m.primitive === primitive && m.members === members);
      const variants = unique(here.map(variantOf));
      const lines = [`### ${primitive}, ${members} members (µs)`, '', `| size | ${variants.join(' | ')} |`, `|---:|${variants.map(() => '---:').join('|')}|`];
      for (const bytes of unique(here.map((m) => m.bytes)).sort((a, b) => a - b)) {
        const row = here.filter((m) => m.bytes === bytes);
        const fastestTyped = Math.min(...row.filter((m) => m.payload === 'typed').map((m) => m.microseconds));
        const cells = variants.map((variant) => {
          const measurement = row.find((m) => variantOf(m) === variant);
          if (measurement === undefined) return '';
          const text = measurement.microseconds.toFixed(1);
          return measurement.payload === 'typed' && measurement.microseconds === fastestTyped && variants.length > 1 ? `**${text}**` : text;
        });
        lines.push(`| ${formatBytes(bytes)} | ${cells.join(' | ')} |`);
      }
      sections.push(lines.join('\n'));
    }
  }
  return sections.join('\n\n');
}

/** MB/s moved by the whole operation: f(p)·n / T (the performance-model paper's aggregated bandwidth). */
const aggregatedBandwidth = (primitive: Primitive, members: number, bytes: number, microseconds: number) => (aggregationFactor(primitive, members) * bytes) / microseconds;

/** The primitives whose measured, modelled and Hockney bandwidths are plotted against each other (first algorithm, typed, most members). */
const MODEL_PLOTS: readonly Primitive[] = ['pingpong', 'broadcast', 'allReduce'];

const SIZE_LABEL = 'message size n';

/** The model plot's legend: each model's parameters and error, so that coinciding curves (ti = 0) explain themselves. */
function modelNames(fit: ModelFit): { linear: string; hockney: string } {
  const nanoseconds = (tb: number) => `${formatNumber(tb * 1000)} ns/B`;
  const error = (value: number) => `average error ${(100 * value).toFixed(1)}%`;
  return {
    linear: `linear model: t0 ${formatNumber(fit.linear.t0)} µs, ti ${formatNumber(fit.linear.ti)} µs, tb ${nanoseconds(fit.linear.tb)} (${error(fit.linearError)})`,
    hockney: `Hockney: t0 ${formatNumber(fit.hockney.t0)} µs, tb ${nanoseconds(fit.hockney.tb)} (${error(fit.hockneyError)})`,
  };
}

/** Per primitive and payload at the most members: time and aggregated bandwidth, one line per algorithm; the barrier by member count; then the model plots. */
function charts(measurements: readonly Measurement[], fits: readonly ModelFit[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const primitive of unique(measurements.map((m) => m.primitive))) {
    if (primitive === 'barrier') continue;
    const members = Math.max(...measurements.filter((m) => m.primitive === primitive).map((m) => m.members));
    const where = `${primitive}, ${members} ${primitive === 'pingpong' ? 'processes' : 'members'}`;
    for (const payload of unique(measurements.filter((m) => m.primitive === primitive).map((m) => m.payload))) {
      const rows = measurements.filter((m) => m.primitive === primitive && m.members === members && m.payload === payload);
      if (unique(rows.map((m) => m.bytes)).length < 2) continue; // one size makes no line
      const chart = (y: YAxisKind, yLabel: string, value: (m: Measurement) => number, what: string) =>
        lineChart({
          title: `${where}, ${payload} payload: ${what}`,
          x: 'bytes',
          xLabel: SIZE_LABEL,
          y,
          yLabel,
          series: unique(rows.map((m) => m.algorithm)).map((algorithm) => ({
            name: algorithm,
            points: rows.filter((m) => m.algorithm === algorithm).sort((a, b) => a.bytes - b.bytes).map((m) => [m.bytes, value(m)] as const),
          })),
        });
      files.set(`${primitive}-${payload}-latency.svg`, chart('time', 'time T (slowest member, best repetition)', (m) => m.microseconds, 'time'));
      files.set(`${primitive}-${payload}-bandwidth.svg`, chart('bandwidth', 'aggregated bandwidth f(p)·n/T', (m) => aggregatedBandwidth(primitive, m.members, m.bytes, m.microseconds), 'bandwidth'));
    }
  }
  const barriers = measurements.filter((m) => m.primitive === 'barrier');
  if (unique(barriers.map((m) => m.members)).length > 1) {
    const series = unique(barriers.map((m) => m.algorithm)).map((algorithm) => ({
      name: algorithm,
      points: barriers.filter((m) => m.algorithm === algorithm).sort((a, b) => a.members - b.members).map((m) => [m.members, m.microseconds] as const),
    }));
    files.set('barrier-latency.svg', lineChart({ title: 'barrier: time by member count', x: 'members', xLabel: 'members p', y: 'time', yLabel: 'time T (slowest member, best repetition)', series }));
  }
  for (const primitive of MODEL_PLOTS) {
    const rows = measurements.filter((m) => m.primitive === primitive && m.payload === 'typed');
    if (rows.length === 0) continue;
    const members = Math.max(...rows.map((m) => m.members));
    const variant = variantOf(rows[0]);
    const fit = fits.find((f) => f.primitive === primitive && f.members === members && f.variant === variant) as ModelFit;
    const measured = rows.filter((m) => m.members === members && variantOf(m) === variant).sort((a, b) => a.bytes - b.bytes);
    const sized = measured.filter((m) => m.bytes > 0);
    if (sized.length < 2) continue;
    // Models drawn at every half power of two across the measured sizes, so the curves are smooth.
    const steps = Math.floor(2 * Math.log2(sized[sized.length - 1].bytes / sized[0].bytes));
    const sizes = Array.from({ length: steps + 1 }, (_, i) => sized[0].bytes * 2 ** (i / 2));
    const curve = (time: (bytes: number) => number) => sizes.map((bytes) => [bytes, bytes / time(bytes)] as const);
    const names = modelNames(fit);
    files.set(
      `model-${primitive}-${rows[0].algorithm}-p${members}.svg`,
      lineChart({
        title: `${primitive} ${variant}, p = ${members}: bandwidth n/T, measured and modelled`,
        x: 'bytes',
        xLabel: SIZE_LABEL,
        y: 'bandwidth',
        yLabel: 'bandwidth n/T',
        series: [
          { name: 'measured', points: measured.map((m) => [m.bytes, m.bytes / m.microseconds] as const) },
          { name: names.linear, points: curve((bytes) => linearModelTime(fit.linear, bytes)), style: 'dashed' },
          { name: names.hockney, points: curve((bytes) => hockneyTime(fit.hockney, bytes)), style: 'wide' },
        ],
      }),
    );
  }
  return files;
}

/** What results.json holds: when and what was measured, and the measurements; the fits are derived from them. */
interface SuiteRun {
  readonly date: string;
  readonly plan: SuitePlan;
  readonly measurements: readonly Measurement[];
}

const RESULTS_FILE = 'results.json';

/** Writes results.json, results.md, model.md and the plots into `directory`; returns the model fits and the files' names. */
function writeReports(directory: string, run: SuiteRun): { fits: ModelFit[]; written: string[] } {
  const { plan, measurements } = run;
  const fits = seriesOf(measurements).map(fitSeries);
  const where = plan.hosts === undefined ? `${plan.members.join(', ')} processes on one machine` : `${plan.members.join(', ')} processes on hosts ${plan.hosts.list}`;
  const context = `ccjs ${plan.transport} over ${where} (node ${process.version}); best of up to ${plan.repetitions}–${plan.repetitions * SMALL_MESSAGE_BOOST} repetitions, each after a barrier, slowest member`;
  const files = new Map<string, string>([
    [RESULTS_FILE, `${JSON.stringify({ ...run, fits }, null, 2)}\n`],
    ['results.md', `# ccjbench results\n\n${context}.\n\n${latencyTables(measurements)}\n`],
    [
      'model.md',
      [
        '# Performance model (Taboada, Touriño and Doallo, Performance Analysis of Message-Passing Libraries on High-Speed Clusters, section 3)',
        '',
        `${context}. T(n) = t0 + ti·tb·n/(t0 + tb·n) + tb·n against Hockney's T(n) = t0 + tb·n; error = average absolute relative error over the measured sizes. Bw_as = 1/tb, π0 = 1/t0 (the paper quotes it in KB/s), ^ag = times f(p), ^pag = maximum over p. The formulas in p keep their constant a ≥ 0 (a startup time, an intercept or a time per byte cannot be negative).`,
        '',
        '## Analytical models and peak aggregated metrics',
        '',
        peakTable(fits),
        '',
        '## Per primitive and member count',
        '',
        modelTable(fits),
        '',
      ].join('\n'),
    ],
    ...charts(measurements, fits),
  ]);
  fs.mkdirSync(directory, { recursive: true });
  for (const [name, text] of files) fs.writeFileSync(path.join(directory, name), text);
  return { fits, written: [...files.keys()] };
}

/** --counts: one line per point, what one call sent over the job (messages, bytes) per device and between hosts. */
export function countsTable(measurements: readonly Measurement[]): string {
  const lines = ['messages per call, summed over the endpoints (messages/bytes):'];
  for (const m of measurements) {
    if (m.counts === undefined) continue;
    const devices = Object.entries(m.counts.byDevice).map(([device, count]) => `${device} ${count.messages}/${count.bytes}`);
    lines.push(`  ${m.primitive} ${m.algorithm} (${m.payload}) ${formatBytes(m.bytes)} p=${m.members}: ${devices.join(', ') || 'none'}; other host ${m.counts.otherHost.messages}/${m.counts.otherHost.bytes}`);
  }
  return lines.join('\n');
}

/** The run a results.json describes, for --report. */
function readRun(directory: string): SuiteRun {
  const file = path.join(directory, RESULTS_FILE);
  if (!fs.existsSync(file)) throw new UsageError(`--report redraws from ${file}, which does not exist: run ccjbench with --out ${directory} first`);
  const { date, plan, measurements } = JSON.parse(fs.readFileSync(file, 'utf8')) as SuiteRun;
  return { date, plan, measurements };
}

const USAGE = `usage: ccjbench [--list-algorithms] [--collectives a,b] [--algorithms x,y] [--sizes 0,4,16,...|--max-size BYTES]
                [--members 2..N|2,3,4] [--payload typed|object|both] [--repetitions R] [--transport tcp|auto]
                [--hosts a:2,b:2 [--launch-agent CMD]] [--out DIR] [--quick] [--counts]
       ccjbench --report [--out DIR]     (redraw the tables and plots from DIR/results.json, without measuring)`;

/** Runs a command's body unless --help asked for the usage text; usage errors print it and exit with code 2. */
export async function withUsage(args: readonly string[], usage: string, body: () => Promise<void>): Promise<void> {
  if (args.includes('--help')) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  try {
    await body();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${usage}\n`);
    process.exitCode = 2;
  }
}

export async function main(args: readonly string[]): Promise<void> {
  if (args[0] === 'rank') return runRank(JSON.parse(args[1]) as SuitePlan);
  await withUsage(args, USAGE, async () => {
    const flags = readFlags(args, { values: [...SUITE_FLAGS.values, 'payload', 'out'], switches: [...SUITE_FLAGS.switches, 'list-algorithms', 'report', 'counts'] });
    if (flags.has('list-algorithms')) {
      for (const { primitive, algorithms } of allPrimitives()) for (const algorithm of algorithms) process.stdout.write(`${primitive} ${algorithm}\n`);
      return;
    }
    const directory = path.resolve(flags.get('out') ?? DEFAULT_RESULTS);
    let run: SuiteRun;
    if (flags.has('report')) {
      const unused = [...flags.keys()].find((name) => name !== 'report' && name !== 'out');
      if (unused !== undefined) throw new UsageError(`--report redraws what results.json holds: --${unused} does not apply`);
      run = readRun(directory);
    } else {
      const payload = flags.get('payload') ?? 'both';
      if (payload !== 'both' && !(PAYLOADS as readonly string[]).includes(payload)) throw new UsageError(`--payload must be typed, object or both, got '${payload}'`);
      const plan = { ...planFrom(flags, payload === 'both' ? PAYLOADS : [payload as PayloadKind]), counts: flags.has('counts') };
      run = { date: new Date().toISOString(), plan, measurements: await runSuite(plan, 'ccjbench') };
    }
    const { fits, written } = writeReports(directory, run);
    if (run.plan.counts === true) process.stdout.write(`${countsTable(run.measurements)}\n\n`);
    process.stdout.write(`${peakTable(fits)}\n\nwrote ${written.length} files to ${directory}: ${written.join(', ')}\n`);
  });
}

/** True when this module is the script node was started with (not imported by ccjtune or a bin shim). */
export function isEntryPoint(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(moduleUrl);
}

if (isEntryPoint(import.meta.url)) await main(process.argv.slice(2));
