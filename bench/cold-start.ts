/**
 * Cold start (issue 31, item 6): what the first calls of a job cost beside the same calls later,
 * between two processes (shared memory by default). Each round starts two fresh jobs:
 *   - hops: rank 0 times its first 1,000 hops of a Float64Array(1) (500 round trips, after one
 *     message that says rank 1 is there) and hops 10,000 to 11,000;
 *   - allReduce: both ranks time their first 100 allReduce calls of 8 B from the moment the group
 *     formed, and calls 2,000 to 2,100; the later of the two to form the group waits least for the
 *     other, so its time is taken.
 * The figures are µs per hop or call, each step timed (mean and median of a block); the ratio is
 * first ÷ steady (the target: at most 2). The table gives the median over the rounds.
 *
 *   node dist/bench/cold-start.js [--rounds N] [--transport shm|tcp|auto]
 *
 * bench/manycore calls coldStart() for its table.
 */
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember, Reductions } from '../src/index.js';
import { runJob } from './job.js';
import { stats } from './statistics.js';
import { warnIfLoaded } from './progress.js';

const SCRIPT = fileURLToPath(import.meta.url);
const FIRST_HOPS = 1_000;
const STEADY_HOPS_FROM = 10_000;
const FIRST_CALLS = 100;
const STEADY_CALLS_FROM = 2_000;

/** µs per hop or call: the first ones of a job, and as many later ones; means, and medians (which a process scheduled out now and then moves less). */
export interface ColdFigure {
  readonly first: number;
  readonly steady: number;
  /** first ÷ steady. */
  readonly ratio: number;
  readonly firstMedian: number;
  readonly steadyMedian: number;
  readonly medianRatio: number;
}

export interface ColdStart {
  readonly transport: string;
  readonly rounds: number;
  /** The round of median ratio; every round's figures in `samples`. */
  readonly hops: ColdFigure;
  readonly allReduce: ColdFigure;
  readonly samples: { readonly hops: ColdFigure[]; readonly allReduce: ColdFigure[] };
}

/** The figure of the µs of each first and each steady round trip or call, `per` hops or calls each. */
function figure(first: readonly number[], steady: readonly number[], per: number): ColdFigure {
  const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length / per;
  const median = (values: readonly number[]) => stats(values).median / per;
  return { first: mean(first), steady: mean(steady), ratio: mean(first) / mean(steady), firstMedian: median(first), steadyMedian: median(steady), medianRatio: median(first) / median(steady) };
}

/** Runs `step` `from + count` times; the µs of each of the first `count` and of the `count` from `from`. */
async function timeSteps(step: () => Promise<unknown>, count: number, from: number): Promise<{ first: number[]; steady: number[] }> {
  const first: number[] = [];
  const steady: number[] = [];
  for (let index = 0; index < from + count; index += 1) {
    const start = process.hrtime.bigint();
    await step();
    const microseconds = Number(process.hrtime.bigint() - start) / 1000;
    if (index < count) first.push(microseconds);
    else if (index >= from) steady.push(microseconds);
  }
  return { first, steady };
}

class ColdHops extends ColMember {
  result: ColdFigure | undefined;

  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('cold', 2);
    const value = Float64Array.of(1.5);
    if (group.getRank(this) === 1) {
      await this.sendAsync(group, value, 0);
      for (let trip = 0; trip < (STEADY_HOPS_FROM + FIRST_HOPS) / 2; trip += 1) await this.sendAsync(group, await this.receive(group, 0), 0);
      return;
    }
    await this.receive(group, 1);
    const { first, steady } = await timeSteps(
      async () => {
        await this.sendAsync(group, value, 1);
        await this.receive(group, 1);
      },
      FIRST_HOPS / 2,
      STEADY_HOPS_FROM / 2,
    );
    this.result = figure(first, steady, 2);
  }
}

class ColdAllReduce extends ColMember {
  result: ColdFigure | undefined;
  /** Rank 1's figure, at rank 0. */
  peer: ColdFigure | undefined;

  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('cold', 2);
    const value = Float64Array.of(1.5);
    const { first, steady } = await timeSteps(() => this.allReduce(group, value, Reductions.SUM), FIRST_CALLS, STEADY_CALLS_FROM);
    this.result = figure(first, steady, 1);
    if (group.getRank(this) === 0) this.peer = await this.receive<ColdFigure>(group, 1);
    else await this.sendSync(group, this.result, 0);
  }
}

/** One process of a job: runs `what`; rank 0 prints its figure, and rank 1's for allReduce. */
async function endpoint(what: string): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = what === 'hops' ? new ColdHops(master) : new ColdAllReduce(master);
  master.addMember('cold', member);
  await member.start();
  if (master.rank !== 0) return;
  process.stdout.write(`RESULT ${JSON.stringify(member.result)}\n`);
  if (member instanceof ColdAllReduce) process.stdout.write(`PEER ${JSON.stringify(member.peer)}\n`);
}

function parsed(output: string, prefix: string): ColdFigure | undefined {
  const line = output.split('\n').find((text) => text.startsWith(`${prefix} `));
  return line === undefined ? undefined : (JSON.parse(line.slice(prefix.length + 1)) as ColdFigure);
}

/** `rounds` rounds of both jobs between two processes over `transport`. */
export async function coldStart({ rounds = 3, transport = 'shm' }: { rounds?: number; transport?: string } = {}): Promise<ColdStart> {
  const samples = { hops: [] as ColdFigure[], allReduce: [] as ColdFigure[] };
  for (let round = 0; round < rounds; round += 1) {
    const hops = parsed(await runJob(SCRIPT, 2, ['endpoint', 'hops'], transport), 'RESULT');
    if (hops !== undefined) samples.hops.push(hops);
    const output = await runJob(SCRIPT, 2, ['endpoint', 'allReduce'], transport);
    const [mine, peer] = [parsed(output, 'RESULT'), parsed(output, 'PEER')];
    if (mine !== undefined && peer !== undefined) samples.allReduce.push(mine.first <= peer.first ? mine : peer);
  }
  const median = (figures: ColdFigure[]) => [...figures].sort((a, b) => a.ratio - b.ratio)[Math.floor(figures.length / 2)] as ColdFigure;
  return { transport, rounds, hops: median(samples.hops), allReduce: median(samples.allReduce), samples };
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
}

async function main(): Promise<void> {
  warnIfLoaded();
  const result = await coldStart({ rounds: Number(option('--rounds') ?? 3), transport: option('--transport') ?? 'shm' });
  // Medians over the rounds of each round's mean and median.
  const row = (name: string, what: string, figures: ColdFigure[]) => {
    const of = (key: keyof ColdFigure) => stats(figures.map((f) => f[key])).median.toFixed(2);
    return `| ${name} | ${what} | ${of('first')} / ${of('firstMedian')} | ${of('steady')} / ${of('steadyMedian')} | ${of('ratio')} / ${of('medianRatio')} |`;
  };
  process.stdout.write(
    [
      `Cold start between 2 processes over ${result.transport}, ${result.rounds} rounds (fresh jobs each; Node ${process.version})`,
      '',
      '| figure | first vs steady | first µs (mean / median) | steady µs (mean / median) | first ÷ steady (mean / median) |',
      '|---|---|---:|---:|---:|',
      row('8 B hop', `hops 1-${FIRST_HOPS} vs ${STEADY_HOPS_FROM}-${STEADY_HOPS_FROM + FIRST_HOPS}`, result.samples.hops),
      row('allReduce 8 B', `calls 1-${FIRST_CALLS} vs ${STEADY_CALLS_FROM}-${STEADY_CALLS_FROM + FIRST_CALLS}`, result.samples.allReduce),
      '',
    ].join('\n'),
  );
}

if (process.argv[2] === 'endpoint') await endpoint(process.argv[3] as string);
else if (process.argv[1] === SCRIPT) await main();
