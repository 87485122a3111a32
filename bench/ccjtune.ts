/**
 * ccjtune: autotuning after Taboada et al. 2010, section 4.3. Runs the ccjbench suite over every algorithm
 * of every collective (typed payloads, the sizes the selector keys on), finds which algorithm
 * wins each (size, member count) region, turns the winners into a short rule list per collective
 * (thresholds where the winner changes, neighbouring regions with the same winner merged, at
 * most MAX_RULES rules), checks the table and writes it under "collectives" into the config
 * file, keeping the file's other keys. The built-in table's choice is a candidate of every
 * region and stays wherever no algorithm beats it by MARGIN: tuning never keeps a rule that the
 * built-in choice beats in the rule's own measurements. A hierarchical variant is the exception:
 * its two levels must pay for themselves, so it wins only where it beats every flat algorithm by
 * MARGIN, even where the built-in table picks it (issue 10: faster, or not selected there).
 * Prints what it chose and how it compares with the built-in table in each region.
 *
 * Jobs on this machine tune the rules for groups on one host. With --hosts (and --launch-agent)
 * the job runs over those hosts, hierarchical variants included, and tunes the rules for groups
 * over several hosts (written with minHosts: 2). Either way the rules of the other kind are kept:
 * the config file's, or else the built-in table's.
 *
 *   npx ccjtune [--quick] [--out FILE] [--log FILE] [--members 2..N] [--collectives a,b] [--algorithms x,y]
 *               [--sizes 0,1024,...|--max-size BYTES] [--repetitions R] [--transport tcp|auto]
 *               [--hosts a:2,b:2 [--launch-agent CMD]]
 */
import fs from 'node:fs';
import path from 'node:path';
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import type { CollectiveName } from '../src/collectives/algorithm.js';
import { DEFAULT_TABLE } from '../src/collectives/default-table.js';
import { Selector, checkTable, keysOnTopology } from '../src/collectives/selection.js';
import type { SelectionRule, SelectionTable } from '../src/collectives/selection.js';
import { SUITE_FLAGS, UsageError, isEntryPoint, planFrom, readFlags, runSuite, runsThroughSegment, withUsage } from './ccjbench.js';
import type { Measurement, PrimitivePlan, SuitePlan } from './ccjbench.js';
import { formatBytes } from './units.js';
import { significant, stats } from './statistics.js';

/** At most this many rules per collective (the built-in choice counting as one), like the tables of Taboada et al. 2010. */
const MAX_RULES = 4;
/** Extra rules must cut the mean slowdown per cell (a log ratio) by more than this: less is measurement noise. */
const TOLERANCE = 0.03;
/** The log slowdown charged for an algorithm that was not measured at a point (or is out of the running there). */
const MISSING_PENALTY = 10;
/**
 * A tuned rule is kept only if, in its cells, the built-in choice is nowhere faster and takes at
 * least 1 + MARGIN times as long on average (geometric mean of best-of-repetitions times):
 * a smaller gain is within the noise of a measurement.
 */
export const MARGIN = 0.05;
/** The candidate "whatever the built-in table picks here"; no algorithm has this name. */
export const BUILT_IN = '(built-in)';

/** One (member count, size) cell: each algorithm's time, and the built-in table's choice. */
interface Cell {
  readonly collective: CollectiveName;
  readonly members: number;
  readonly selectionBytes: number;
  readonly times: ReadonlyMap<string, number>;
  /** Each algorithm's time in every run that measured the cell, in run order (times: their medians). */
  readonly runs: ReadonlyMap<string, readonly number[]>;
  readonly builtIn: string;
  /** Members on the most populated host (all of them, on one host). */
  readonly perHost: number;
}

/**
 * The measurements' cells. An algorithm measured in several runs of a cell (bench/hosts.ts's
 * tuning rounds) takes the median of their best-of-repetitions times: the least of several noisy
 * minima is biased low, most for the noisiest algorithm.
 */
function cellsOf(collective: CollectiveName, measurements: readonly Measurement[]): Cell[] {
  const builtIn = new Selector(undefined, {}, undefined);
  const cells = new Map<string, Omit<Cell, 'times' | 'runs'> & { runs: Map<string, number[]> }>();
  for (const m of measurements) {
    const key = `${m.members}/${m.bytes}`;
    const layout = m.layout === undefined ? {} : { layout: m.layout };
    const choice = () => builtIn.select(collective, { bytes: m.selectionBytes, members: m.members, commutative: true, requested: undefined, ...layout }).name;
    const cell = cells.get(key) ?? { collective, members: m.members, selectionBytes: m.selectionBytes, runs: new Map<string, number[]>(), builtIn: choice(), perHost: m.layout?.perHost ?? m.members };
    const runs = cell.runs.get(m.algorithm);
    if (runs === undefined) cell.runs.set(m.algorithm, [m.microseconds]);
    else runs.push(m.microseconds);
    cells.set(key, cell);
  }
  return [...cells.values()].map((cell) => ({ ...cell, times: new Map([...cell.runs].map(([algorithm, times]) => [algorithm, stats(times).median])) }));
}

const isHierarchical = (primitive: string, algorithm: string) => (COLLECTIVES as string[]).includes(primitive) && ALGORITHMS[primitive as CollectiveName][algorithm]?.hierarchical === true;

/** From this many runs of a cell on, a hierarchical variant must also win a significant majority of them (paired by run) against each flat algorithm. */
const PAIRED_RUNS = 5;

/**
 * Whether `hierarchical` beats `flat` in `cell` clearly: by MARGIN over the median, and, measured
 * in several runs, in significantly more of them than not (a sign test, as bench/hosts.ts judges).
 * Not where either was left unmeasured.
 */
function beatsClearly(cell: Cell, hierarchical: string, flat: string): boolean {
  const [mine, theirs] = [cell.runs.get(hierarchical), cell.runs.get(flat)];
  if (mine === undefined || theirs === undefined) return false;
  if ((cell.times.get(flat) as number) < (cell.times.get(hierarchical) as number) * (1 + MARGIN)) return false;
  if (theirs.length !== mine.length || mine.length < PAIRED_RUNS) return true;
  return significant(mine.filter((run, index) => run < (theirs[index] as number)).length, mine.length);
}

/** Whether the hierarchical variant `algorithm` beats every flat algorithm measured in `cell` clearly. */
const beatsFlatClearly = (cell: Cell, algorithm: string) => [...cell.runs.keys()].every((other) => isHierarchical(cell.collective, other) || beatsClearly(cell, algorithm, other));

/**
 * How much slower than the cell's winner `algorithm` is, as a log ratio (0 for the winner). The
 * built-in choice is credited with the margin, so that another algorithm must beat it clearly. A
 * hierarchical variant's two levels must pay for themselves: where it does not beat every flat
 * algorithm clearly, it is out of the running, as an algorithm that was not measured is.
 */
function slowdown(cell: Cell, algorithm: string): number {
  const name = algorithm === BUILT_IN ? cell.builtIn : algorithm;
  const time = cell.times.get(name);
  if (time === undefined || (isHierarchical(cell.collective, name) && !beatsFlatClearly(cell, name))) return MISSING_PENALTY;
  const credit = algorithm === BUILT_IN ? Math.log(1 + MARGIN) : 0;
  return Math.log(Math.max(time, 1e-9) / Math.max(Math.min(...cell.times.values()), 1e-9)) - credit;
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

/**
 * A rule with the region it covers beyond the earlier rules: bounds, and the measured cells in
 * it. An algorithm of BUILT_IN stands for the built-in table's rules within the bounds.
 */
export interface Region {
  readonly rule: SelectionRule;
  readonly bytesAbove: number | undefined;
  readonly membersAbove: number | undefined;
  readonly cells: readonly Cell[];
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

const fits = (rule: SelectionRule, cell: Cell) => (rule.maxBytes === undefined || cell.selectionBytes <= rule.maxBytes) && (rule.maxMembers === undefined || cell.members <= rule.maxMembers);

function regionsOf(candidate: Candidate, cells: readonly Cell[]): Region[] {
  const bounds: Omit<Region, 'cells'>[] = [];
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
      bounds.push({ rule, bytesAbove, membersAbove });
      bytesAbove = maxBytes;
    });
  });
  return bounds.map((region, index) => ({ ...region, cells: cells.filter((cell) => fits(region.rule, cell) && !bounds.slice(0, index).some((earlier) => fits(earlier.rule, cell))) }));
}

const geometricMean = (values: readonly number[]) => Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);

/** How many times as long as `algorithm` the built-in choice takes in each cell where both were measured. */
const builtInRatios = (algorithm: string, cells: readonly Cell[]) =>
  cells.flatMap((cell) => {
    const [mine, builtIn] = [cell.times.get(algorithm), cell.times.get(cell.builtIn)];
    return mine === undefined || builtIn === undefined ? [] : [builtIn / mine];
  });

/** Whether `ratios` (one time over another, per cell) say the second is clearly faster: nowhere slower, and 1 + MARGIN times as fast over them. */
const clearlyFaster = (ratios: readonly number[]) => ratios.every((ratio) => ratio >= 1) && geometricMean(ratios) >= 1 + MARGIN;

/**
 * Whether a tuned rule earns its place: in its cells where the built-in choice is flat, that
 * choice nowhere faster and at least 1 + MARGIN times as long over them; in those where it is
 * hierarchical, that variant not clearly faster than the rule's algorithm in every one (it must
 * pay for itself, see slowdown). Where the built-in choice was not measured (an --algorithms list
 * without it) there is nothing to compare with, and the measured winner stays.
 */
function beatsBuiltIn(region: Region): boolean {
  const { algorithm } = region.rule;
  if (algorithm === BUILT_IN || region.cells.every((cell) => cell.builtIn === algorithm)) return false;
  const builtInHierarchical = (cell: Cell) => isHierarchical(cell.collective, cell.builtIn);
  const overHierarchical = region.cells.filter(builtInHierarchical);
  const flatRatios = builtInRatios(algorithm, region.cells.filter((cell) => !builtInHierarchical(cell)));
  const hierarchicalWins = overHierarchical.length > 0 && overHierarchical.every((cell) => beatsClearly(cell, cell.builtIn, algorithm));
  return (flatRatios.length === 0 || clearlyFaster(flatRatios)) && !hierarchicalWins;
}

/** Whether an upper bound (undefined: none) is no higher than another. */
const boundWithin = (bound: number | undefined, other: number | undefined) => other === undefined || (bound !== undefined && bound <= other);
/** The lower of two lower bounds (undefined: none). */
const lowest = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : Math.min(a, b));

/**
 * Rules that do not beat the built-in choice give way to it; then a built-in region whose
 * bounds the next built-in region's contain merges into it (the later rule takes the same calls).
 */
function keepBuiltInUnlessBeaten(regions: readonly Region[]): Region[] {
  const checked = regions.map((region) => (beatsBuiltIn(region) ? region : { ...region, rule: { ...region.rule, algorithm: BUILT_IN } }));
  return checked.reduceRight<Region[]>((later, region) => {
    const next = later[0];
    const contained = next !== undefined && region.rule.algorithm === BUILT_IN && next.rule.algorithm === BUILT_IN && boundWithin(region.rule.maxBytes, next.rule.maxBytes) && boundWithin(region.rule.maxMembers, next.rule.maxMembers);
    if (!contained) return [region, ...later];
    const mergedRegion = { ...next, bytesAbove: lowest(region.bytesAbove, next.bytesAbove), membersAbove: lowest(region.membersAbove, next.membersAbove), cells: [...region.cells, ...next.cells] };
    return [mergedRegion, ...later.slice(1)];
  }, []);
}

/**
 * The rule list for one collective: over every split of the member counts into ranges and of
 * each range's sizes into runs (at most MAX_RULES rules in all), the fewest rules whose total
 * slowdown against the per-cell winners is within TOLERANCE per cell of the best achievable;
 * the built-in choice wherever no algorithm beats it by MARGIN.
 */
export function deriveRegions(collective: CollectiveName, measurements: readonly Measurement[]): Region[] {
  const cells = cellsOf(collective, measurements);
  const algorithms = [BUILT_IN, ...new Set(measurements.map((m) => m.algorithm))];
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
  return keepBuiltInUnlessBeaten(regionsOf(chosen, cells));
}

/** Which rules a run tunes: those for groups on one host (jobs on this machine) or over several hosts (--hosts). */
export type Scope = 'one host' | 'hosts';

const inScope = (scope: Scope, rule: SelectionRule) => keysOnTopology(rule) === (scope === 'hosts');

/**
 * Whether `rule` runs `collective` through a collective segment: such rules are not tuned (they
 * apply wherever the members share memory, and the tuned rules for one host where they do not).
 */
const throughSegment = (collective: CollectiveName, rule: SelectionRule) => runsThroughSegment(collective, rule.algorithm);

/** The built-in table's rules of one scope (but those through a collective segment). */
const builtInRules = (collective: CollectiveName, scope: Scope) => (DEFAULT_TABLE[collective] ?? []).filter((rule) => !throughSegment(collective, rule) && inScope(scope, rule));

/** The built-in table's rules through a collective segment: before the rules for one host in every tuned table. */
const segmentRules = (collective: CollectiveName) => (DEFAULT_TABLE[collective] ?? []).filter((rule) => throughSegment(collective, rule));

/** Whether the region's jobs had several members on a host: what it says is not about groups of one member per host. */
const severalPerHost = (region: Region) => region.cells.every((cell) => cell.perHost >= 2);

/**
 * Rules tuned over hosts apply to every group that spans several; if measured only with several
 * members per host, not to groups of one member per host (a hierarchical call's leaders among them).
 */
const acrossHosts = (region: Region) => (severalPerHost(region) ? { minHosts: 2, minPerHost: 2 } : { minHosts: 2 });

/** Built-in rules for groups of one member per host. */
const onePerHost = (rule: SelectionRule) => rule.maxPerHost !== undefined && rule.maxPerHost < 2;

/**
 * The rules a region stands for: its own, or the built-in table's (of the scope) within its bounds
 * (built-in rules the earlier regions leave unreachable left out, and none after one that takes all).
 * Built-in rules for one member per host that the region's jobs did not measure stay whole (rulesOf).
 */
function rulesOfRegion(collective: CollectiveName, region: Region, scope: Scope): SelectionRule[] {
  if (region.rule.algorithm !== BUILT_IN) return [scope === 'hosts' ? { ...acrossHosts(region), ...region.rule } : region.rule];
  const { maxBytes, maxMembers } = region.rule;
  const rules: SelectionRule[] = [];
  for (const builtIn of builtInRules(collective, scope)) {
    if (onePerHost(builtIn) && severalPerHost(region)) continue;
    const bytes = builtIn.maxBytes === undefined ? maxBytes : Math.min(builtIn.maxBytes, maxBytes ?? Infinity);
    const members = builtIn.maxMembers === undefined ? maxMembers : Math.min(builtIn.maxMembers, maxMembers ?? Infinity);
    const unreachable = (members !== undefined && region.membersAbove !== undefined && members <= region.membersAbove) || (bytes !== undefined && region.bytesAbove !== undefined && bytes <= region.bytesAbove);
    if (unreachable) continue;
    rules.push({ ...builtIn, ...(bytes === undefined ? {} : { maxBytes: bytes }), ...(members === undefined ? {} : { maxMembers: members }) });
    if (bytes === maxBytes && members === maxMembers && !keysOnTopology(builtIn)) break;
  }
  return rules;
}

/**
 * The rules to write for a collective, or undefined where the built-in table stays throughout.
 * `kept` are the rules of the other scope (default: the built-in table's): rules over hosts come
 * first, as a group over several hosts must meet them before the rules for one host.
 */
export function rulesOf(collective: CollectiveName, regions: readonly Region[], scope: Scope = 'one host', kept: readonly SelectionRule[] = builtInRules(collective, scope === 'hosts' ? 'one host' : 'hosts')): SelectionRule[] | undefined {
  if (regions.every((region) => region.rule.algorithm === BUILT_IN)) return undefined;
  const tuned = regions.flatMap((region) => rulesOfRegion(collective, region, scope));
  const unmeasured = scope === 'hosts' && regions.some(severalPerHost) ? builtInRules(collective, scope).filter(onePerHost) : [];
  const others = kept.filter((rule) => !throughSegment(collective, rule));
  return scope === 'hosts' ? [...tuned, ...unmeasured, ...segmentRules(collective), ...others] : [...others, ...segmentRules(collective), ...tuned];
}

/** Every collective measured, with its regions. */
function deriveTable(measurements: readonly Measurement[]): Map<CollectiveName, Region[]> {
  const table = new Map<CollectiveName, Region[]>();
  for (const collective of COLLECTIVES) {
    const mine = measurements.filter((m) => m.primitive === collective && m.payload === 'typed');
    if (mine.length > 0) table.set(collective, deriveRegions(collective, mine));
  }
  return table;
}

/** "2 < p ≤ 4", "p ≤ 3", "any p": what a rule covers beyond the earlier ones. */
function bounds(name: string, above: number | undefined, atMost: number | undefined, format: (value: number) => string): string {
  if (above === undefined && atMost === undefined) return `any ${name}`;
  if (above === undefined) return `${name} ≤ ${format(atMost as number)}`;
  if (atMost === undefined) return `${name} > ${format(above)}`;
  return `${format(above)} < ${name} ≤ ${format(atMost)}`;
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** One line per region: the chosen algorithm, and how the built-in table's choice compares there. */
function report(collective: CollectiveName, regions: readonly Region[]): string[] {
  const lines: string[] = [collective];
  for (const region of regions) {
    const builtIns = [...new Set(region.cells.map((cell) => cell.builtIn))].join('/');
    const where = `${bounds('p', region.membersAbove, region.rule.maxMembers, String)}, ${bounds('bytes', region.bytesAbove, region.rule.maxBytes, formatBytes)}`;
    const ratios = builtInRatios(region.rule.algorithm, region.cells);
    let comparison: string;
    if (region.rule.algorithm === BUILT_IN) comparison = `kept: no algorithm beats it by ${100 * MARGIN}% (${plural(region.cells.length, 'cell')})`;
    else if (ratios.length === 0) comparison = `built-in ${builtIns} not measured`;
    else comparison = `built-in ${builtIns} takes ${geometricMean(ratios).toFixed(2)}× as long (${plural(ratios.length, 'cell')})`;
    const chosen = region.rule.algorithm === BUILT_IN ? `built-in ${builtIns}` : region.rule.algorithm;
    lines.push(`  ${where.padEnd(40)} ${chosen.padEnd(26)} ${comparison}`);
  }
  return lines;
}

/**
 * Writes the tuned rules under "collectives" into the config file, keeping its other keys and
 * the rules of collectives not measured now; a measured collective without tuned rules keeps
 * only its rules of the scope not measured (none: the built-in table applies to it again).
 */
function writeConfig(file: string, tuned: SelectionTable, measured: readonly CollectiveName[]): void {
  const existing = readConfigObject(file);
  const { collectives: previous, ...others } = existing;
  const kept = typeof previous === 'object' && previous !== null ? Object.entries(previous).filter(([collective]) => !(measured as string[]).includes(collective)) : [];
  const collectives = checkTable({ ...Object.fromEntries(kept), ...tuned }, `'collectives' for ${file}`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(Object.keys(collectives).length > 0 ? { ...others, collectives } : others, null, 2)}\n`);
}

function readConfigObject(file: string): Record<string, unknown> {
  const existing: unknown = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  if (typeof existing !== 'object' || existing === null || Array.isArray(existing)) throw new UsageError(`${file} does not hold a JSON object`);
  return existing as Record<string, unknown>;
}

/** The selection table the config file holds now (checked), or an empty one. */
function readTable(file: string): SelectionTable {
  const { collectives } = readConfigObject(file);
  return collectives === undefined ? {} : checkTable(collectives, `'collectives' in ${file}`);
}

/** What --log writes: the measurements and the rules derived from them, so that a run can be checked afterwards. */
export interface TuneLog {
  readonly date: string;
  readonly plan: SuitePlan;
  readonly margin: number;
  readonly measurements: readonly Measurement[];
  readonly tuned: SelectionTable;
  /** Collectives measured for which the built-in table stays. */
  readonly builtIn: readonly CollectiveName[];
}

const USAGE = `usage: ccjtune [--quick] [--out FILE] [--log FILE] [--members 2..N|2,3] [--collectives a,b] [--algorithms x,y]
               [--sizes 0,1024,...|--max-size BYTES] [--repetitions R] [--transport tcp|auto] [--hosts a:2,b:2 [--launch-agent CMD]]`;

export async function main(args: readonly string[]): Promise<void> {
  await withUsage(args, USAGE, async () => {
    const flags = readFlags(args, { values: [...SUITE_FLAGS.values, 'out', 'log'], switches: SUITE_FLAGS.switches });
    const suite = planFrom(flags, ['typed']);
    const scope: Scope = suite.hosts === undefined ? 'one host' : 'hosts';
    // Jobs on one host: a hierarchical algorithm would be only its intra-host level there. Nor is a
    // collective segment measured: its rule is never tuned, and a region it won would lose its rule.
    const tunable = (primitive: string, algorithm: string) => !runsThroughSegment(primitive, algorithm) && (scope === 'hosts' || !isHierarchical(primitive, algorithm));
    const measurable = (primitive: PrimitivePlan) => ({ ...primitive, algorithms: primitive.algorithms.filter((algorithm) => tunable(primitive.primitive, algorithm)) });
    const plan = { ...suite, primitives: suite.primitives.filter((primitive) => primitive.primitive !== 'pingpong').map(measurable) };
    if (plan.primitives.length === 0) throw new UsageError('ccjtune chooses collective algorithms: give it at least one collective');
    const file = path.resolve(flags.get('out') ?? 'ccjs.config.json');
    const existing = readTable(file);
    const measurements = await runSuite(plan, 'ccjtune');
    const table = deriveTable(measurements);
    const tuned: Partial<Record<CollectiveName, SelectionRule[]>> = {};
    // The file's rules of the scope not measured now, for collectives whose measured scope keeps the built-in rules.
    const untouched: Partial<Record<CollectiveName, SelectionRule[]>> = {};
    for (const [collective, regions] of table) {
      process.stdout.write(`${report(collective, regions).join('\n')}\n`);
      const other: Scope = scope === 'hosts' ? 'one host' : 'hosts';
      const own = existing[collective]?.filter((rule) => inScope(other, rule));
      const rules = rulesOf(collective, regions, scope, own ?? builtInRules(collective, other));
      if (rules !== undefined) tuned[collective] = rules;
      else if (own !== undefined && own.length > 0) untouched[collective] = own;
    }
    const measured = [...table.keys()];
    writeConfig(file, { ...untouched, ...tuned }, measured);
    const builtIn = measured.filter((collective) => tuned[collective] === undefined);
    const log = flags.get('log');
    if (log !== undefined) {
      const contents: TuneLog = { date: new Date().toISOString(), plan, margin: MARGIN, measurements, tuned, builtIn };
      fs.writeFileSync(path.resolve(log), `${JSON.stringify(contents, null, 2)}\n`);
    }
    const kept = builtIn.length > 0 ? `; the built-in table stays for ${builtIn.join(', ')}` : '';
    process.stdout.write(`wrote the selection table for ${Object.keys(tuned).join(', ') || 'no collective'} to ${file} ("collectives")${kept}\n`);
  });
}

if (isEntryPoint(import.meta.url)) await main(process.argv.slice(2));
