/**
 * Collectives against point-to-point, measured in one run: broadcast and allReduce (SUM) of a
 * 1 MiB Float64Array on 4 processes with every registered algorithm, beside a sendSync/receive
 * of the same array between 2 of them. Each repetition starts after a barrier; a repetition's
 * time is the slowest member's, and the result is the best repetition (Taboada, Touriño and Doallo, Performance Analysis of Message-Passing Libraries on High-Speed Clusters, section 3).
 *
 *   node dist/bench/collectives.js [--processes 4] [--repetitions 20] [--bytes 1048576]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import type { ColGroup } from '../src/index.js';
import { Reductions } from '../reduction/index.js';
import { runJob } from './job.js';
import { warnIfLoaded } from './progress.js';
import { algorithmNames } from '../src/collectives/algorithms.js';

const SCRIPT = fileURLToPath(import.meta.url);
const RESULTS = path.resolve(path.dirname(SCRIPT), '..', '..', 'bench', 'results');

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const processes = option('processes', 4);
const repetitions = option('repetitions', 20);
const bytes = option('bytes', 1 << 20);

interface Timing {
  readonly operation: string;
  readonly members: number;
  readonly microseconds: number;
}

class CollectiveBench extends ColMember {
  readonly timings: Timing[] = [];

  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const all = await this.master.getGroup('bench', processes);
    const rank = all.getRank(this);
    const data = new Float64Array(bytes / 8).fill(rank + 1);
    const pair = rank < 2 ? await this.master.copyGroup(all, 'bench-pair').include([0, 1]).activate(this) : undefined;
    if (pair) {
      await this.time(pair, 'sendSync/receive (2 processes, half round trip)', async () => {
        if (rank === 0) {
          await this.sendSync(pair, data, 1);
          await this.receive(pair, 1);
        } else {
          await this.sendSync(pair, await this.receive(pair, 0), 0);
        }
      }, 2);
    }
    for (const algorithm of algorithmNames('broadcast')) {
      await this.time(all, `broadcast ${algorithm} (${processes} processes)`, () => this.broadcast(all, data, 0, { algorithm }));
    }
    for (const algorithm of algorithmNames('allReduce')) {
      await this.time(all, `allReduce SUM ${algorithm} (${processes} processes)`, () => this.allReduce(all, data, Reductions.SUM, { algorithm }));
    }
    if (rank === 0) process.stdout.write(`${JSON.stringify(this.timings)}\n`);
  }

  /** Best over repetitions of the slowest member's time; `divisor` halves round trips. */
  private async time(group: ColGroup, operation: string, body: () => Promise<unknown>, divisor = 1): Promise<void> {
    let best = Infinity;
    for (let repetition = 0; repetition < repetitions + 2; repetition += 1) {
      await this.barrier(group);
      const start = process.hrtime.bigint();
      await body();
      const mine = Number(process.hrtime.bigint() - start) / 1000 / divisor;
      const slowest = await this.allReduce(group, mine, Reductions.MAX);
      if (repetition >= 2) best = Math.min(best, slowest);
    }
    this.timings.push({ operation, members: group.size(), microseconds: best });
  }
}

async function rank(): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = new CollectiveBench(master);
  master.addMember('bench', member);
  await member.start();
}

async function orchestrate(): Promise<void> {
  warnIfLoaded();
  process.stderr.write(`collectives: ${processes} processes, ${bytes} bytes, best of ${repetitions} repetitions...\n`);
  const timings = JSON.parse(await runJob(SCRIPT, processes, ['rank', ...process.argv.slice(2)])) as Timing[];
  const pointToPoint = timings[0].microseconds;
  const lines = [`| operation (${bytes} bytes Float64Array, TCP) | µs | × sendSync/receive |`, '|---|---:|---:|'];
  for (const timing of timings) lines.push(`| ${timing.operation} | ${timing.microseconds.toFixed(0)} | ${(timing.microseconds / pointToPoint).toFixed(2)} |`);
  const table = lines.join('\n');
  process.stdout.write(`${table}\n`);
  fs.mkdirSync(RESULTS, { recursive: true });
  fs.writeFileSync(path.join(RESULTS, 'collectives.md'), `${table}\n`);
  fs.writeFileSync(path.join(RESULTS, 'collectives.json'), `${JSON.stringify(timings, null, 2)}\n`);
}

if (process.argv[2] === 'rank') await rank();
else await orchestrate();
