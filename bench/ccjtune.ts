/**
 * ccjtune: autotuning after seed 000, section 4.3. Runs the ccjbench suite over every algorithm
 * of every collective (typed payloads, the sizes the selector keys on), finds which algorithm
 * wins each (size, member count) region, turns the winners into a short rule list per collective
 * (thresholds where the winner changes, neighbouring regions with the same winner merged, at
 * most MAX_RULES rules), checks the table and writes it under "collectives" into the config
 * file, keeping the file's other keys. Prints what it chose and how it compares with the
 * built-in table in each region.
 *
 *   npx ccjtune [--quick] [--out FILE] [--members 2..N] [--collectives a,b] [--algorithms x,y]
 *               [--sizes 0,1024,...|--max-size BYTES] [--repetitions R] [--transport tcp|auto]
 */
import fs from 'node:fs';
import path from 'node:path';
import { COLLECTIVES } from '../src/collectives/algorithms.js';
import type { CollectiveName } from '../src/collectives/algorithms.js';
import { Selector, checkTable } from '../src/collectives/selection.js';
import type { SelectionRule, SelectionTable } from '../src/collectives/selection.js';
import { SUITE_FLAGS, UsageError, formatBytes, isEntryPoint, planFrom, readFlags, runSuite, withUsage } from './ccjbench.js';
import type { Measurement } from './ccjbench.js';

/** At most this many rules per collective, like the seed's tables. */
const MAX_RULES = 4;
/** Extra rules must cut the mean slowdown per cell (a log ratio) by more than this: less is measurement noise. */
const TOLERANCE = 0.03;
/** The log slowdown charged for an algorithm that was not measured at a point. */
const MISSING_PENALTY = 10;

/** One (member count, size) cell: each algorithm's time. */
interface Cell {
  readonly members: number;
  readonly selectionBytes: number;
  readonly times: ReadonlyMap<string, number>;
}

function cellsOf(measurements: readonly Measurement[]): Cell[] {
  const cells = new Map<string, { members: number; selectionBytes: number; times: Map<string, number> }>();
  for (const m of measurements) {
    const key = `${m.members}/${m.bytes}`;
    const cell = cells.get(key) ?? { members: m.members, selectionBytes: m.selectionBytes, times: new Map<string, number>() };
    cell.times.set(m.algorithm, Math.min(m.microseconds, cell.times.get(m.algorithm) ?? Infinity));
    cells.set(key, cell);
  }
  return [...cells.values()];
}

/** How much slower than the cell's winner `algorithm` is, as a log ratio (0 for the winner). */
function slowdown(cell: Cell, algorithm: string): number {
  const time = cell.times.get(algorithm);
  if (time === undefined) return MISSING_PENALTY;
  return Math.log(Math.max(time, 1e-9) / Math.max(Math.min(...cell.times.values()), 1e-9));
}

/** Consecutive sizes (by selection bytes, ascending) that one algorithm covers. */
interface Segment {
  /** Index of the segment's last size. */
  readonly last: number;
  readonly algorithm: string;
}

interface Segmentation {
  readonly loss: number;
  readonly segments: readonly Segment[];
}

/** For k = 1..maxSegments, the split of the sizes into k runs, one algorithm each, with the least loss (dynamic programming). */
function segmentations(costs: readonly (readonly number[])[], algorithms: readonly string[], maxSegments: number): Segmentation[] {
  const sizes = costs.length;
  // prefix[a][j]: loss of algorithm a over sizes [0, j).
  const prefix = algorithms.map((_, a) => costs.reduce((sums, row) => [...sums, sums[sums.length - 1] + row[a]], [0]));
  const run = (from: number, to: number) =>
    algorithms.reduce((best, algorithm, a) => {
      const loss = prefix[a][to] - prefix[a][from];
      return loss < best.loss ? { loss, algorithm } : best;
    }, { loss: Infinity, algorithm: algorithms[0] });
  // best[k][j]: least loss over sizes [0, j) in k runs, with the runs that achieve it.
  let previous: (Segmentation | undefined)[] = Array.from({ length: sizes + 1 }, (_, j) => (j === 0 ? { loss: 0, segments: [] } : undefined));
  const results: Segmentation[] = [];
  for (let k = 1; k <= Math.min(maxSegments, sizes); k += 1) {
    const current: (Segmentation | undefined)[] = Array.from({ length: sizes + 1 }, () => undefined);
    for (let to = 1; to <= sizes; to += 1) {
      for (let from = 0; from < to; from += 1) {
        const before = previous[from];
        if (before === undefined) continue;
        const last = run(from, to);
        const loss = before.loss + last.loss;
        if (loss < (current[to]?.loss ?? Infinity)) current[to] = { loss, segments: [...before.segments, { last: to - 1, algorithm: last.algorithm }] };
      }
    }
    results.push(current[sizes] as Segmentation);
    previous = current;
  }
  return results;
}

/** A range of member counts that shares one split by size. */
interface MemberRange {
  readonly members: readonly number[];
  /** Distinct selection bytes of its cells, ascending. */
  readonly sizes: readonly number[];
  readonly segmentations: readonly Segmentation[];
}

function memberRange(cells: readonly Cell[], members: readonly number[], algorithms: readonly string[]): MemberRange {
  const here = cells.filter((cell) => members.includes(cell.members));
  const sizes = [...new Set(here.map((cell) => cell.selectionBytes))].sort((a, b) => a - b);
  const costs = sizes.map((bytes) => algorithms.map((algorithm) => here.filter((cell) => cell.selectionBytes === bytes).reduce((sum, cell) => sum + slowdown(cell, algorithm), 0)));
  return { members, sizes, segmentations: segmentations(costs, algorithms, MAX_RULES) };
}

/** The splits of the sorted member counts into consecutive ranges, fewest ranges first. */
function memberPartitions(members: readonly number[]): number[][][] {
  const partitions: number[][][] = [];
  for (let cuts = 0; cuts < 1 << Math.max(0, members.length - 1); cuts += 1) {
    const ranges: number[][] = [[members[0]]];
    for (let i = 1; i < members.length; i += 1) {
      if (cuts & (1 << (i - 1))) ranges.push([members[i]]);
      else ranges[ranges.length - 1].push(members[i]);
    }
    if (ranges.length <= MAX_RULES) partitions.push(ranges);
  }
  return partitions.sort((a, b) => a.length - b.length);
}

/** A rule with the region it covers beyond the earlier rules, for the report. */
export interface Region {
  readonly rule: SelectionRule;
  readonly bytesAbove: number | undefined;
  readonly membersAbove: number | undefined;
}

interface Candidate {
  readonly loss: number;
  readonly ranges: readonly { readonly range: MemberRange; readonly segmentation: Segmentation }[];
}

/**
 * Between two measured sizes the threshold sits near their geometric mean (halfway on the log
 * scale the sizes are spaced on), rounded down to a power of two when that stays above `below`.
 */
function threshold(below: number, above: number): number {
  const middle = Math.floor(Math.sqrt(below * above));
  const power = middle > 0 ? 2 ** Math.floor(Math.log2(middle)) : 0;
  return power >= below ? power : middle;
}

function regionsOf(candidate: Candidate): Region[] {
  const regions: Region[] = [];
  candidate.ranges.forEach(({ range, segmentation }, index) => {
    const last = index === candidate.ranges.length - 1;
    const maxMembers = last ? undefined : Math.max(...range.members);
    const membersAbove = index === 0 ? undefined : Math.max(...candidate.ranges[index - 1].range.members);
    // Merge neighbouring runs with the same winner.
    const merged = segmentation.segments.filter((segment, i, all) => i === all.length - 1 || all[i + 1].algorithm !== segment.algorithm);
    let bytesAbove: number | undefined;
    merged.forEach((segment, i) => {
      const maxBytes = i === merged.length - 1 ? undefined : threshold(range.sizes[segment.last], range.sizes[segment.last + 1]);
      const rule: SelectionRule = { ...(maxBytes === undefined ? {} : { maxBytes }), ...(maxMembers === undefined ? {} : { maxMembers }), algorithm: segment.algorithm };
      regions.push({ rule, bytesAbove, membersAbove });
      bytesAbove = maxBytes;
    });
  });
  return regions;
}

/**
 * The rule list for one collective: over every split of the member counts into ranges and of
 * each range's sizes into runs (at most MAX_RULES rules in all), the fewest rules whose total
 * slowdown against the per-cell winners is within TOLERANCE per cell of the best achievable.
 */
export function deriveRegions(measurements: readonly Measurement[]): Region[] {
  const cells = cellsOf(measurements);
  const algorithms = [...new Set(measurements.map((m) => m.algorithm))];
  const members = [...new Set(cells.map((cell) => cell.members))].sort((a, b) => a - b);
  if (cells.length === 0) throw new RangeError('cannot tune a collective without measurements');
  const ranges = new Map<string, MemberRange>();
  const rangeOf = (counts: readonly number[]) => {
    const key = counts.join(',');
    if (!ranges.has(key)) ranges.set(key, memberRange(cells, counts, algorithms));
    return ranges.get(key) as MemberRange;
  };
  // byRules[r]: the best candidate with exactly r rules.
  const byRules: (Candidate | undefined)[] = [];
  for (const partition of memberPartitions(members)) {
    // Distribute the rules among the ranges: knapsack over the ranges.
    let combined: (Candidate | undefined)[] = [{ loss: 0, ranges: [] }];
    for (const counts of partition) {
      const range = rangeOf(counts);
      const next: (Candidate | undefined)[] = [];
      combined.forEach((before, used) => {
        if (before === undefined) return;
        range.segmentations.forEach((segmentation, k) => {
          const rules = used + k + 1;
          const loss = before.loss + segmentation.loss;
          if (rules <= MAX_RULES && loss < (next[rules]?.loss ?? Infinity)) next[rules] = { loss, ranges: [...before.ranges, { range, segmentation }] };
        });
      });
      combined = next;
    }
    combined.forEach((candidate, rules) => {
      if (candidate !== undefined && candidate.loss < (byRules[rules]?.loss ?? Infinity)) byRules[rules] = candidate;
    });
  }
  const found = byRules.filter((candidate): candidate is Candidate => candidate !== undefined);
  const least = Math.min(...found.map((candidate) => candidate.loss));
  const chosen = found.find((candidate) => candidate.loss <= least + TOLERANCE * cells.length) as Candidate;
  return regionsOf(chosen);
}

/** The tuned selection table: a rule list for every collective measured. */
function deriveTable(measurements: readonly Measurement[]): Partial<Record<CollectiveName, Region[]>> {
  const table: Partial<Record<CollectiveName, Region[]>> = {};
  for (const collective of COLLECTIVES) {
    const mine = measurements.filter((m) => m.primitive === collective && m.payload === 'typed');
    if (mine.length > 0) table[collective] = deriveRegions(mine);
  }
  return table;
}

const rulesOf = (table: Partial<Record<CollectiveName, Region[]>>): SelectionTable =>
  Object.fromEntries(Object.entries(table).map(([collective, regions]) => [collective, regions.map((region) => region.rule)]));

/** "2 < p ≤ 4", "p ≤ 3", "any p": what a rule covers beyond the earlier ones. */
function bounds(name: string, above: number | undefined, atMost: number | undefined, format: (value: number) => string): string {
  if (above === undefined && atMost === undefined) return `any ${name}`;
  if (above === undefined) return `${name} ≤ ${format(atMost as number)}`;
  if (atMost === undefined) return `${name} > ${format(above)}`;
  return `${format(above)} < ${name} ≤ ${format(atMost)}`;
}

/** One line per region: the chosen algorithm, and how the built-in table's choice compares there. */
function report(collective: CollectiveName, regions: readonly Region[], measurements: readonly Measurement[]): string[] {
  const builtIn = new Selector(undefined, {}, undefined);
  const cells = cellsOf(measurements.filter((m) => m.primitive === collective && m.payload === 'typed'));
  const lines: string[] = [collective];
  regions.forEach((region, index) => {
    const fits = (rule: SelectionRule, cell: Cell) => (rule.maxBytes === undefined || cell.selectionBytes <= rule.maxBytes) && (rule.maxMembers === undefined || cell.members <= rule.maxMembers);
    const here = cells.filter((cell) => fits(region.rule, cell) && !regions.slice(0, index).some((earlier) => fits(earlier.rule, cell)));
    const defaultOf = (cell: Cell) => builtIn.select(collective, { bytes: cell.selectionBytes, members: cell.members, commutative: true, requested: undefined }).name;
    const defaults = new Set(here.map(defaultOf));
    const ratios = here.map((cell) => Math.log((cell.times.get(defaultOf(cell)) ?? NaN) / (cell.times.get(region.rule.algorithm) as number)));
    const geometricMean = Math.exp(ratios.reduce((sum, ratio) => sum + ratio, 0) / ratios.length);
    const where = `${bounds('p', region.membersAbove, region.rule.maxMembers, String)}, ${bounds('bytes', region.bytesAbove, region.rule.maxBytes, formatBytes)}`;
    const comparison = here.length === 0 ? 'no measured cell' : Number.isFinite(geometricMean) ? `built-in ${[...defaults].join('/')} takes ${geometricMean.toFixed(2)}× as long (${here.length} cell${here.length === 1 ? '' : 's'})` : `built-in ${[...defaults].join('/')} not measured`;
    lines.push(`  ${where.padEnd(40)} ${region.rule.algorithm.padEnd(24)} ${comparison}`);
  });
  return lines;
}

/** Writes `table` under "collectives" into the config file, keeping its other keys and its other collectives' rules. */
function writeConfig(file: string, table: SelectionTable): SelectionTable {
  const existing: Record<string, unknown> = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  if (typeof existing !== 'object' || existing === null || Array.isArray(existing)) throw new UsageError(`${file} does not hold a JSON object`);
  const previous = typeof existing.collectives === 'object' && existing.collectives !== null ? (existing.collectives as SelectionTable) : {};
  const collectives = checkTable({ ...previous, ...table }, `'collectives' for ${file}`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ ...existing, collectives }, null, 2)}\n`);
  return collectives;
}

const USAGE = `usage: ccjtune [--quick] [--out FILE] [--members 2..N|2,3] [--collectives a,b] [--algorithms x,y]
               [--sizes 0,1024,...|--max-size BYTES] [--repetitions R] [--transport tcp|auto]`;

export async function main(args: readonly string[]): Promise<void> {
  await withUsage(args, USAGE, async () => {
    const flags = readFlags(args, { values: [...SUITE_FLAGS.values, 'out'], switches: SUITE_FLAGS.switches });
    const suite = planFrom(flags, ['typed']);
    const plan = { ...suite, primitives: suite.primitives.filter((primitive) => primitive.primitive !== 'pingpong') };
    if (plan.primitives.length === 0) throw new UsageError('ccjtune chooses collective algorithms: give it at least one collective');
    const file = path.resolve(flags.get('out') ?? 'ccjs.config.json');
    const measurements = await runSuite(plan);
    const table = deriveTable(measurements);
    for (const [collective, regions] of Object.entries(table)) process.stdout.write(`${report(collective as CollectiveName, regions, measurements).join('\n')}\n`);
    writeConfig(file, rulesOf(table));
    process.stdout.write(`wrote the selection table for ${Object.keys(table).join(', ')} to ${file} ("collectives")\n`);
  });
}

if (isEntryPoint(import.meta.url)) await main(process.argv.slice(2));
