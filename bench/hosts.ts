/**
 * Hierarchical against flat collectives over hosts (issue 10). Three network namespaces
 * (bench/netns.ts) are the hosts; jobs of 2 hosts × 2 processes and 3 hosts × 2 processes start
 * through ccjrun --hosts (shared memory inside a host, TCP between hosts: CCJS_NO_UCX), and ccjbench's
 * machinery measures broadcast and allReduce of 8 B and 1 MiB with every algorithm, counting
 * each call's messages between hosts. Every layout runs `rounds` times (a round: one job measuring
 * every algorithm, best of the repetitions, slowest member). Odd rounds tune: they pick each
 * point's best flat algorithm and give the rules ccjtune derives; even rounds judge the
 * hierarchical variant against that flat algorithm, paired by round (a sign test says whether it
 * is slower, faster or neither), so no choice is scored on the measurements it was made from. The
 * table gives, per point, both times, the verdict, the messages between hosts of both, and what the
 * built-in table and ccjtune's rules select there. Written to bench/results/hosts.{md,json,svg}.
 * Needs root and iproute2.
 *
 *   node dist/bench/hosts.js [--rounds 10] [--repetitions 10]
 */
import fs from 'node:fs';
import path from 'node:path';
import { Selector } from '../src/collectives/selection.js';
import type { SelectionRule, SelectionTable } from '../src/collectives/selection.js';
import type { CollectiveName, Layout } from '../src/collectives/algorithm.js';
import { Hosts, INTERFACE } from './netns.js';
import { planFrom, runSuite } from './ccjbench.js';
import type { Measurement } from './ccjbench.js';
import { deriveRegions, rulesOf } from './ccjtune.js';
import { significant, stats } from './statistics.js';
import { barChart } from './svg.js';
import type { Bar } from './svg.js';
import { formatBytes } from './units.js';

const COLLECTIVES: readonly CollectiveName[] = ['broadcast', 'allReduce'];
const SIZES = [8, 1024 * 1024];
const LAYOUTS = [
  { hosts: 2, perHost: 2 },
  { hosts: 3, perHost: 2 },
] as const;
const HIERARCHICAL = 'hierarchical';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number >= 1`);
  return value;
}

interface Point {
  readonly layout: string;
  readonly shape: Layout;
  readonly collective: CollectiveName;
  readonly bytes: number;
  readonly members: number;
  readonly selectionBytes: number;
  /** Slowest member's best time, per algorithm, per round (index: round − 1). */
  readonly times: Record<string, number[]>;
  /** Messages one call sends between hosts, per algorithm. */
  readonly betweenHosts: Record<string, number>;
}

/** What one point of the held-out rounds says. */
interface Verdict {
  readonly point: Point;
  /** The flat algorithm with the least time over the tuning rounds. */
  readonly flat: string;
  /** The judging rounds' times of the hierarchical variant and of that flat algorithm. */
  readonly hierarchicalTimes: number[];
  readonly flatTimes: number[];
  /** Hierarchical ÷ flat time, one per judging round (both measured in that round's job). */
  readonly ratios: number[];
  /** Evaluation rounds in which the hierarchical variant was slower. */
  readonly losses: number;
  readonly slower: boolean;
  readonly faster: boolean;
  readonly builtIn: string;
  readonly tuned: string;
}

const rounds = option('rounds', 10);
if (rounds < 2) throw new Error('--rounds must be at least 2: half of them tune, the other half judge');
const repetitions = option('repetitions', 10);
/** Odd rounds tune (pick the best flat algorithm, derive ccjtune's rules), even rounds judge. */
const tuning = (round: number) => round % 2 === 1;
const hosts = new Hosts(3);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    hosts.remove();
    process.exit(130);
  });
}
const points = new Map<string, Point>();
const tables: Record<string, SelectionTable> = {};
process.env.CCJS_INTERFACE = INTERFACE;
// TCP between the hosts: UCX in namespaces of one kernel takes them for one machine and tries its
// shared-memory transports between them (see spec/netns.spec.ts).
process.env.CCJS_NO_UCX = '1';
try {
  for (const shape of LAYOUTS) {
    const name = `${shape.hosts}×${shape.perHost}`;
    const list = hosts.names.slice(0, shape.hosts).map((host) => `${host}:${shape.perHost}`).join(',');
    const flags = new Map([
      ['collectives', COLLECTIVES.join(',')],
      ['sizes', SIZES.join(',')],
      ['repetitions', String(repetitions)],
      ['transport', 'auto'],
      ['hosts', list],
      ['launch-agent', hosts.agent],
    ]);
    const plan = { ...planFrom(flags, ['typed']), counts: true };
    const tuningMeasurements: Measurement[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      const measured = await runSuite(plan, `hosts ${name}, round ${round}/${rounds} (${tuning(round) ? 'tuning' : 'judging'})`);
      if (tuning(round)) tuningMeasurements.push(...measured);
      for (const m of measured) {
        const key = `${name} ${m.primitive} ${m.bytes}`;
        const point = points.get(key) ?? { layout: name, shape, collective: m.primitive as CollectiveName, bytes: m.bytes, members: m.members, selectionBytes: m.selectionBytes, times: {}, betweenHosts: {} };
        (point.times[m.algorithm] ??= [])[round - 1] = m.microseconds;
        point.betweenHosts[m.algorithm] = m.counts?.otherHost.messages ?? NaN;
        points.set(key, point);
      }
    }
    const table: { -readonly [C in CollectiveName]?: readonly SelectionRule[] } = {};
    for (const collective of COLLECTIVES) {
      const rules = rulesOf(collective, deriveRegions(collective, tuningMeasurements.filter((m) => m.primitive === collective)), 'hosts');
      if (rules !== undefined) table[collective] = rules;
    }
    tables[name] = table;
  }
} finally {
  hosts.remove();
}

const roundsWhere = (keep: (round: number) => boolean) => (samples: readonly number[]) => samples.filter((_, index) => keep(index + 1));
const tuningOf = roundsWhere(tuning);
const judgingOf = roundsWhere((round) => !tuning(round));

function judge(point: Point): Verdict {
  const flat = Object.entries(point.times)
    .filter(([algorithm]) => algorithm !== HIERARCHICAL)
    .map(([algorithm, samples]) => ({ algorithm, best: Math.min(...tuningOf(samples)) }))
    .sort((a, b) => a.best - b.best)[0]?.algorithm as string;
  const hierarchicalTimes = judgingOf(point.times[HIERARCHICAL] as number[]);
  const flatTimes = judgingOf(point.times[flat] as number[]);
  const ratios = hierarchicalTimes.map((time, index) => time / (flatTimes[index] as number));
  const losses = ratios.filter((ratio) => ratio > 1).length;
  const call = { bytes: point.selectionBytes, members: point.members, commutative: true, requested: undefined, layout: point.shape };
  return {
    point,
    flat,
    hierarchicalTimes,
    flatTimes,
    ratios,
    losses,
    slower: significant(losses, ratios.length),
    faster: significant(ratios.length - losses, ratios.length),
    builtIn: new Selector(undefined, {}, undefined).select(point.collective, call).name,
    tuned: new Selector(tables[point.layout], {}, undefined).select(point.collective, call).name,
  };
}

const verdicts = [...points.values()].map(judge);
const rows = [
  '| layout | collective | size | hierarchical µs best (median) | flat (from tuning) µs best (median) | flat ÷ hierarchical, median | hierarchical slower in | verdict | messages between hosts hier / flat | built-in selects | ccjtune selects | target met (built-in / ccjtune) |',
  '|---|---|---:|---:|---:|---:|---:|---|---:|---|---|---|',
];
const bars: Bar[] = [];
for (const verdict of verdicts) {
  const { point, flat } = verdict;
  const hierarchical = stats(verdict.hierarchicalTimes);
  const flatStats = stats(verdict.flatTimes);
  const ratio = stats(verdict.ratios).median;
  const outcome = verdict.faster ? 'faster' : verdict.slower ? 'SLOWER' : 'tie';
  const met = (selected: string) => (selected !== HIERARCHICAL || verdict.faster ? 'yes' : 'NO');
  rows.push(
    `| ${point.layout} | ${point.collective} | ${formatBytes(point.bytes)} | ${hierarchical.best.toFixed(1)} (${hierarchical.median.toFixed(1)}) | ${flat} ${flatStats.best.toFixed(1)} (${flatStats.median.toFixed(1)}) | ${(1 / ratio).toFixed(2)}× | ${verdict.losses} of ${verdict.ratios.length} | ${outcome} | ${point.betweenHosts[HIERARCHICAL]} / ${point.betweenHosts[flat]} | ${verdict.builtIn} | ${verdict.tuned} | ${met(verdict.builtIn)} / ${met(verdict.tuned)} |`,
  );
  const selected = verdict.tuned === HIERARCHICAL;
  bars.push({ label: `${point.layout} ${point.collective} ${formatBytes(point.bytes)}: faster in ${verdict.ratios.length - verdict.losses}/${verdict.ratios.length}${selected ? ', selected' : ''}`, value: ratio, ...(selected ? { target: 1 } : {}) });
}
const heading = `Hierarchical vs flat collectives over hosts: network namespaces on one machine (veth + bridge between hosts, shared memory inside one), processes per host × hosts as given, ${rounds} rounds of ccjbench (each: every algorithm in one job, best of up to ${repetitions} repetitions, slowest member), Node ${process.version}, ${new Date().toISOString()}`;
const notes = [
  '',
  `Rounds 1, 3, 5, … tune: they pick each point's flat algorithm (least time over them) and give ccjtune's rules. Rounds 2, 4, 6, … (${Math.floor(rounds / 2)}) judge, so that neither choice is scored on the runs it was made from (the least of seven noisy flat times is biased low). "hierarchical slower in": the judging rounds in which it took longer than that flat algorithm measured in the same job. Verdict: "SLOWER" or "faster" when a one-sided sign test over those rounds gives p < 5%, else "tie". Times are over the judging rounds.`,
  '',
  '"target met" (issue 10: hierarchical faster on every size, or not selected there): yes where the table does not select the hierarchical variant, or where its verdict is "faster"; given for the built-in table and for the rules ccjtune derives from the tuning rounds.',
  '',
  '## Rules ccjtune derives from the tuning rounds (scope: groups over several hosts; collectives not listed keep the built-in rules)',
  '',
  '```json',
  JSON.stringify(tables, null, 2),
  '```',
];
const directory = path.resolve('bench', 'results');
fs.mkdirSync(directory, { recursive: true });
fs.writeFileSync(path.join(directory, 'hosts.md'), `${heading}\n\n${rows.join('\n')}\n${notes.join('\n')}\n`);
fs.writeFileSync(path.join(directory, 'hosts.json'), `${JSON.stringify({ rounds, points: [...points.values()], verdicts: verdicts.map(({ point, ...rest }) => ({ layout: point.layout, collective: point.collective, bytes: point.bytes, ...rest })), tables }, null, 2)}\n`);
fs.writeFileSync(path.join(directory, 'hosts.svg'), barChart('Hierarchical ÷ flat time over hosts (median over the judging rounds, paired by round)', '× the flat time (log; < 1: hierarchical faster); mark: ccjtune\'s rules select it', bars));
process.stdout.write(`${rows.join('\n')}\n${notes.join('\n')}\nwrote bench/results/hosts.{md,json,svg}\n`);
