/**
 * Hierarchical against flat collectives over hosts (issue 10). Three network namespaces
 * (bench/netns.ts) are the hosts; jobs of 2 hosts × 2 processes and 3 hosts × 2 processes start
 * through ccjrun --hosts (shared memory inside a host, TCP between hosts: CCJS_NO_UCX), and ccjbench's
 * machinery measures broadcast and allReduce of 8 B and 1 MiB with every algorithm, counting
 * each call's messages between hosts. Every layout runs `rounds` times (a round: best of the
 * repetitions, slowest member); the table gives, per point, the hierarchical variant against the
 * best flat algorithm (best and median over the rounds, spread), the messages between hosts of
 * both, and what the built-in table selects there; then the rules ccjtune derives from the same
 * measurements. Written to bench/results/hosts.{md,json,svg}. Needs root and iproute2.
 *
 *   node dist/bench/hosts.js [--rounds 3] [--repetitions 10]
 */
import fs from 'node:fs';
import path from 'node:path';
import { Selector } from '../src/collectives/selection.js';
import type { CollectiveName } from '../src/collectives/algorithms.js';
import { Hosts, INTERFACE } from './netns.js';
import { planFrom, runSuite } from './ccjbench.js';
import type { Measurement } from './ccjbench.js';
import { deriveRegions, rulesOf } from './ccjtune.js';
import { stats } from './hopping.js';
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
  readonly collective: CollectiveName;
  readonly bytes: number;
  /** Slowest member's best time of each round, per algorithm. */
  readonly times: Record<string, number[]>;
  /** Messages one call sends between hosts, per algorithm. */
  readonly betweenHosts: Record<string, number>;
  readonly builtIn: string;
}

const rounds = option('rounds', 3);
const repetitions = option('repetitions', 10);
const hosts = new Hosts(3);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    hosts.remove();
    process.exit(130);
  });
}
const points = new Map<string, Point>();
const tables: Record<string, unknown> = {};
process.env.CCJS_INTERFACE = INTERFACE;
// TCP between the hosts: UCX in namespaces of one kernel takes them for one machine and tries its
// shared-memory transports between them (see spec/netns.spec.ts).
process.env.CCJS_NO_UCX = '1';
try {
  for (const layout of LAYOUTS) {
    const name = `${layout.hosts}×${layout.perHost}`;
    const list = hosts.names.slice(0, layout.hosts).map((host) => `${host}:${layout.perHost}`).join(',');
    const flags = new Map([
      ['collectives', COLLECTIVES.join(',')],
      ['sizes', SIZES.join(',')],
      ['repetitions', String(repetitions)],
      ['transport', 'auto'],
      ['hosts', list],
      ['launch-agent', hosts.agent],
    ]);
    const plan = { ...planFrom(flags, ['typed']), counts: true };
    const all: Measurement[] = [];
    for (let round = 1; round <= rounds; round += 1) all.push(...(await runSuite(plan, `hosts ${name}, round ${round}/${rounds}`)));
    const selector = new Selector(undefined, {}, undefined);
    for (const m of all) {
      const key = `${name} ${m.primitive} ${m.bytes}`;
      const collective = m.primitive as CollectiveName;
      const builtIn = selector.select(collective, { bytes: m.selectionBytes, members: m.members, commutative: true, requested: undefined, layout }).name;
      const point = points.get(key) ?? { layout: name, collective, bytes: m.bytes, times: {}, betweenHosts: {}, builtIn };
      (point.times[m.algorithm] ??= []).push(m.microseconds);
      point.betweenHosts[m.algorithm] = m.counts?.otherHost.messages ?? NaN;
      points.set(key, point);
    }
    tables[name] = Object.fromEntries(COLLECTIVES.map((collective) => [collective, rulesOf(collective, deriveRegions(collective, all.filter((m) => m.primitive === collective)), 'hosts') ?? 'the built-in rules']));
  }
} finally {
  hosts.remove();
}

const rows = ['| layout | collective | size | hierarchical µs best (median) | best flat µs best (median) | flat ÷ hierarchical | spread hier / flat | messages between hosts hier / flat | built-in selects | target met |', '|---|---|---:|---:|---:|---:|---:|---:|---|---|'];
const bars: Bar[] = [];
for (const point of points.values()) {
  const hierarchical = stats(point.times[HIERARCHICAL] as number[]);
  const flat = Object.entries(point.times)
    .filter(([algorithm]) => algorithm !== HIERARCHICAL)
    .map(([algorithm, samples]) => ({ algorithm, ...stats(samples) }))
    .sort((a, b) => a.best - b.best)[0] as { algorithm: string; best: number; median: number; spread: number };
  const faster = hierarchical.best < flat.best;
  const met = faster || point.builtIn !== HIERARCHICAL;
  rows.push(
    `| ${point.layout} | ${point.collective} | ${formatBytes(point.bytes)} | ${hierarchical.best.toFixed(1)} (${hierarchical.median.toFixed(1)}) | ${flat.algorithm} ${flat.best.toFixed(1)} (${flat.median.toFixed(1)}) | ${(flat.best / hierarchical.best).toFixed(2)}× | ${hierarchical.spread.toFixed(2)} / ${flat.spread.toFixed(2)} | ${point.betweenHosts[HIERARCHICAL]} / ${point.betweenHosts[flat.algorithm]} | ${point.builtIn} | ${met ? 'yes' : 'NO'} |`,
  );
  bars.push({ label: `${point.layout} ${point.collective} ${formatBytes(point.bytes)}${point.builtIn === HIERARCHICAL ? ' (selected)' : ''}`, value: hierarchical.best / flat.best, ...(point.builtIn === HIERARCHICAL ? { target: 1 } : {}) });
}
const heading = `Hierarchical vs the best flat algorithm over hosts: network namespaces on one machine (veth + bridge between hosts, shared memory inside one), processes per host × hosts as given, ${rounds} rounds of ccjbench (best of up to ${repetitions} repetitions each, slowest member), Node ${process.version}, ${new Date().toISOString()}`;
const notes = [
  '',
  '"target met": hierarchical is faster (best of the rounds) or the built-in table does not select it there (issue 10).',
  '',
  '## Rules ccjtune derives from these measurements (scope: groups over several hosts)',
  '',
  '```json',
  JSON.stringify(tables, null, 2),
  '```',
];
const directory = path.resolve('bench', 'results');
fs.mkdirSync(directory, { recursive: true });
fs.writeFileSync(path.join(directory, 'hosts.md'), `${heading}\n\n${rows.join('\n')}\n${notes.join('\n')}\n`);
fs.writeFileSync(path.join(directory, 'hosts.json'), `${JSON.stringify({ points: [...points.values()], tables }, null, 2)}\n`);
fs.writeFileSync(path.join(directory, 'hosts.svg'), barChart('Hierarchical ÷ best flat time over hosts (best of the rounds)', '× the best flat time (log; < 1: hierarchical faster); mark: built-in selects it', bars));
process.stdout.write(`${rows.join('\n')}\n${notes.join('\n')}\nwrote bench/results/hosts.{md,json,svg}\n`);
