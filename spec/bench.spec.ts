import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import type { CollectiveName } from '../src/collectives/algorithm.js';
import { Selector, checkTable } from '../src/collectives/selection.js';
import type { SelectionRule } from '../src/collectives/selection.js';
import { fitHockney, fitLinearModel, formulaInMembers, hockneyTime, linearModelTime } from '../bench/model.js';
import type { LinearModel, Sample } from '../bench/model.js';
import { MARGIN, deriveRegions, rulesOf } from '../bench/ccjtune.js';
import type { TuneLog } from '../bench/ccjtune.js';
import type { Measurement } from '../bench/ccjbench.js';
import { barChart, lineChart } from '../bench/svg.js';
import { loadWarning } from '../bench/progress.js';
import { closeAll, createMasters, packageRoot, run } from './harness.js';

const MiB = 1024 * 1024;

const ccjbench = path.join(packageRoot, 'bin', 'ccjbench.js');
const ccjtune = path.join(packageRoot, 'bin', 'ccjtune.js');

/** Sizes 1 B to 16 MiB, powers of two. */
const SIZES = Array.from({ length: 25 }, (_, i) => 2 ** i);

/** A fixed pseudo-random sequence in [-1, 1) (a linear congruential generator), so the noisy cases are reproducible. */
function noise(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 - 1;
  };
}

function samplesOf(time: (bytes: number) => number, relativeNoise: number, seed = 7): Sample[] {
  const next = noise(seed);
  return SIZES.map((bytes) => ({ bytes, microseconds: time(bytes) * (1 + relativeNoise * next()) }));
}

function expectWithin(actual: number, expected: number, tolerance: number, what: string): void {
  expect(Math.abs(actual / expected - 1), `${what}: fitted ${actual}, true ${expected}`).to.be.at.most(tolerance);
}

/**
 * Checks a tuned rule list against the measurements it came from, apart from the tuner's own
 * bookkeeping: in every cell the selector would now run either the built-in choice or an
 * algorithm the built-in choice is no faster than, and over each rule's cells the built-in
 * choice takes at least 1 + MARGIN times as long (geometric mean) unless the rule only repeats it.
 */
function expectEveryRuleBeatsBuiltIn(collective: CollectiveName, rules: readonly SelectionRule[], measurements: readonly Measurement[]): void {
  const builtIn = new Selector(undefined, {}, undefined);
  const tuned = new Selector({ [collective]: rules }, {}, undefined);
  const mine = measurements.filter((m) => m.primitive === collective && m.payload === 'typed');
  const ratiosByRule = rules.map((): number[] => []);
  for (const cell of mine.filter((m, index) => mine.findIndex((other) => other.members === m.members && other.bytes === m.bytes) === index)) {
    const shape = { bytes: cell.selectionBytes, members: cell.members, commutative: true, requested: undefined };
    const [chosen, original] = [tuned, builtIn].map((selector) => selector.select(collective, shape).name);
    const time = (algorithm: string) => mine.find((m) => m.members === cell.members && m.bytes === cell.bytes && m.algorithm === algorithm)?.microseconds as number;
    const ratio = time(original) / time(chosen);
    const where = `${collective}, ${cell.members} members, ${cell.bytes} B: tuned ${chosen}, built-in ${original}`;
    expect(ratio, where).to.be.at.least(1);
    const rule = rules.findIndex((r) => (r.maxBytes === undefined || shape.bytes <= r.maxBytes) && (r.maxMembers === undefined || shape.members <= r.maxMembers));
    ratiosByRule[rule].push(ratio);
  }
  ratiosByRule.forEach((ratios, index) => {
    if (ratios.every((ratio) => ratio === 1)) return;
    const geometricMean = Math.exp(ratios.reduce((sum, ratio) => sum + Math.log(ratio), 0) / ratios.length);
    expect(geometricMean, `${collective} rule ${JSON.stringify(rules[index])}`).to.be.at.least(1 + MARGIN);
  });
}

/** The text of every `<text class="...">` of a chart, with where it is anchored. */
function texts(svg: string, kind: string): { x: number; y: number; text: string }[] {
  return [...svg.matchAll(new RegExp(`<text class="${kind}" x="([\\d.]+)" y="([\\d.]+)"[^>]*>([^<]*)</text>`, 'g'))].map((match) => ({ x: Number(match[1]), y: Number(match[2]), text: match[3] }));
}

const viewBoxOf = (svg: string) => {
  const [, width, height] = /viewBox="0 0 (\d+) (\d+)"/.exec(svg) as RegExpExecArray;
  return { width: Number(width), height: Number(height) };
};
const plotOf = (svg: string) => {
  const [, x, y, width, height] = (/<rect class="plot" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/.exec(svg) as RegExpExecArray).map(Number);
  return { x, y, width, height };
};
const pointsOf = (svg: string) => [...svg.matchAll(/<circle class="point" cx="([\d.]+)" cy="([\d.]+)"/g)].map((match) => ({ x: Number(match[1]), y: Number(match[2]) }));
/** A generous average advance of a 12 px sans-serif glyph. */
const CHAR_WIDTH = 7;

/** The size a tick label names: "4 KiB" is 4096. */
function bytesOf(label: string): number {
  const match = /^(\d+) (B|KiB|MiB|GiB)$/.exec(label);
  expect(match, `'${label}' is a size in B, KiB, MiB or GiB`).to.not.equal(null);
  const [, count, unit] = match as RegExpExecArray;
  return Number(count) * { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[unit as 'B'];
}

/** The µs a tick label names: "2 ms" is 2000. */
function microsecondsOf(label: string): number {
  const match = /^([\d.]+) (µs|ms|s)$/.exec(label);
  expect(match, `'${label}' is a time in µs, ms or s`).to.not.equal(null);
  const [, value, unit] = match as RegExpExecArray;
  return Number(value) * { µs: 1, ms: 1e3, s: 1e6 }[unit as 'µs'];
}

/** The MB/s a tick label names: "1.5 GB/s" is 1500. */
function bandwidthOf(label: string): number {
  if (label === '0') return 0;
  const match = /^([\d.]+) (MB|GB)\/s$/.exec(label);
  expect(match, `'${label}' is a bandwidth in MB/s or GB/s`).to.not.equal(null);
  const [, value, unit] = match as RegExpExecArray;
  return Number(value) * (unit === 'GB' ? 1000 : 1);
}

/** Every text of a chart lies inside its view box, at CHAR_WIDTH per character. */
function expectTextsInside(svg: string): void {
  const { width, height } = viewBoxOf(svg);
  for (const match of svg.matchAll(/<text class="([\w-]+)" x="([\d.]+)" y="([\d.]+)"([^>]*)>([^<]*)<\/text>/g)) {
    const [, kind, x, y, attributes, text] = match;
    const length = [...text].length * (/font-size="15"/.test(attributes) ? (CHAR_WIDTH * 15) / 12 : CHAR_WIDTH);
    const anchor = /text-anchor="(\w+)"/.exec(attributes)?.[1] ?? 'start';
    const left = Number(x) - (anchor === 'end' ? length : anchor === 'middle' ? length / 2 : 0);
    expect(left, `${kind} '${text}' starts inside`).to.be.at.least(0);
    expect(left + length, `${kind} '${text}' ends inside (width ${width})`).to.be.at.most(width);
    expect(Number(y), `${kind} '${text}' is above the bottom`).to.be.at.most(height);
  }
}

describe('benchmarks and tuning', function () {
  describe('the performance model (Taboada, Touriño and Doallo, Performance Analysis of Message-Passing Libraries on High-Speed Clusters, section 3)', function () {
    /** The paper's ScaMPI and MPICH-GM Send, and two of the shape TCP on loopback has (µs, µs, µs per byte). */
    const parameterSets: LinearModel[] = [
      { t0: 4, ti: 13, tb: 0.00389 },
      { t0: 9, ti: 20, tb: 0.00533 },
      { t0: 40, ti: 120, tb: 0.0005 },
      { t0: 15, ti: 30, tb: 0.0008 },
    ];

    for (const truth of parameterSets) {
      for (const relativeNoise of [0, 0.01]) {
        it(`recovers t0 = ${truth.t0} µs, ti = ${truth.ti} µs, tb = ${truth.tb} µs/B within 5% ${relativeNoise ? 'under ±1% noise' : 'from exact times'}`, function () {
          const fitted = fitLinearModel(samplesOf((bytes) => linearModelTime(truth, bytes), relativeNoise));
          for (const parameter of ['t0', 'ti', 'tb'] as const) expectWithin(fitted[parameter], truth[parameter], 0.05, parameter);
        });
      }
    }

    it("recovers Hockney's t0 and tb from Hockney data, and fits it with ti = 0", function () {
      const truth = { t0: 25, tb: 0.002 };
      for (const relativeNoise of [0, 0.01]) {
        const samples = samplesOf((bytes) => hockneyTime(truth, bytes), relativeNoise, 11);
        const hockney = fitHockney(samples);
        expectWithin(hockney.t0, truth.t0, 0.05, 't0');
        expectWithin(hockney.tb, truth.tb, 0.05, 'tb');
      }
      const linear = fitLinearModel(samplesOf((bytes) => hockneyTime(truth, bytes), 0));
      expect(linear.ti).to.be.below(0.01 * truth.t0);
    });

    it('fits a barrier (a single size) with t0 only', function () {
      expect(fitLinearModel([{ bytes: 0, microseconds: 30 }, { bytes: 0, microseconds: 30 }])).to.deep.equal({ t0: 30, ti: 0, tb: 0 });
    });

    it("writes parameters as functions of p in the paper's notation", function () {
      expect(formulaInMembers([[2, 7 + 5 * 2], [3, 7 + 5 * 3], [4, 7 + 5 * 4], [8, 7 + 5 * 8]])).to.equal('7.00 + 5.00p');
      expect(formulaInMembers([[2, 3 + 8], [4, 3 + 16], [8, 3 + 24], [16, 3 + 32]])).to.equal('3.00 + 8.00⌈lp⌉');
      expect(formulaInMembers([[2, 12]])).to.equal('12.0');
    });

    it('never writes a negative constant: a free fit below zero becomes a line through the origin', function () {
      // The free least-squares line through these is -15.3 + 15.2p.
      expect(formulaInMembers([[2, 14.6], [3, 30], [4, 45]])).to.equal('10.3p');
    });
  });

  describe('ccjtune rules', function () {
    /** Synthetic timings: `fast` wins up to `crossover` bytes (and everywhere above `members` members when given). */
    function measurements(crossover: number, largeGroupWinner?: string): Measurement[] {
      const rows: Measurement[] = [];
      for (const members of [2, 3, 4]) {
        for (const bytes of [0, 1024, 16384, 262144, 4194304]) {
          const smallWins = bytes <= crossover;
          const times: Record<string, number> = { small: smallWins ? 10 : 20, large: smallWins ? 20 : 10, other: members === 4 && largeGroupWinner === 'other' ? 5 : 30 };
          for (const [algorithm, microseconds] of Object.entries(times)) {
            rows.push({ primitive: 'broadcast', algorithm, payload: 'typed', members, bytes, selectionBytes: bytes, microseconds, repetitions: 3 });
          }
        }
      }
      return rows;
    }

    it('puts the threshold between the sizes where the winner changes and merges equal neighbours', function () {
      expect(deriveRegions('broadcast', measurements(16384)).map((region) => region.rule)).to.deep.equal([{ maxBytes: 65536, algorithm: 'small' }, { algorithm: 'large' }]);
      expect(deriveRegions('broadcast', measurements(Infinity)).map((region) => region.rule)).to.deep.equal([{ algorithm: 'small' }]);
    });

    it('splits by member count where the winner depends on it', function () {
      expect(deriveRegions('broadcast', measurements(0, 'other')).map((region) => region.rule)).to.deep.equal([
        { maxBytes: 0, maxMembers: 3, algorithm: 'small' },
        { maxMembers: 3, algorithm: 'large' },
        { algorithm: 'other' },
      ]);
    });
  });

  describe('ccjtune against the built-in table', function () {
    /** Broadcast on 2 to 4 members, where the built-in table picks binomial (2) and four-ary (3, 4); `mst` takes `mst(bytes)` µs, the others 100. */
    function broadcastTimes(mst: (bytes: number) => number): Measurement[] {
      const rows: Measurement[] = [];
      for (const members of [2, 3, 4]) {
        for (const bytes of [0, 1024, 16384, 262144, 4194304]) {
          for (const [algorithm, microseconds] of [['binomial', 100], ['four-ary', 100], ['flat-blocking', 130], ['mst', mst(bytes)]] as const) {
            rows.push({ primitive: 'broadcast', algorithm, payload: 'typed', members, bytes, selectionBytes: bytes, microseconds, repetitions: 3 });
          }
        }
      }
      return rows;
    }

    it(`keeps the built-in choice where the winner beats it by less than ${100 * MARGIN}%`, function () {
      const regions = deriveRegions('broadcast', broadcastTimes(() => 97));
      expect(rulesOf('broadcast', regions)).to.equal(undefined);
    });

    it('keeps a rule that beats the built-in choice clearly, and the built-in rules elsewhere', function () {
      const measurements = broadcastTimes((bytes) => (bytes <= 16384 ? 80 : 120));
      const rules = rulesOf('broadcast', deriveRegions('broadcast', measurements)) as SelectionRule[];
      // The built-in rule for groups over several hosts comes first: the tuner's jobs run on one host; then the collective segment's, where the members share memory.
      expect(rules).to.deep.equal([
        { minHosts: 2, minPerHost: 2, algorithm: 'hierarchical' },
        { maxHosts: 1, algorithm: 'shared-memory' },
        { maxBytes: 65536, algorithm: 'mst' },
        { maxMembers: 2, algorithm: 'binomial' },
        { maxMembers: 4, algorithm: 'four-ary' },
        { algorithm: 'binomial' },
      ]);
      expect(checkTable({ broadcast: rules }, 'the tuned table')).to.deep.equal({ broadcast: rules });
      expectEveryRuleBeatsBuiltIn('broadcast', rules, measurements);
    });
  });

  describe('ccjtune over hosts', function () {
    /** allReduce on 3 hosts × 2 members, at 8 B and 1 MiB: µs per algorithm at each size. */
    function overHosts(times: Record<number, Record<string, number>>): Measurement[] {
      return Object.entries(times).flatMap(([bytes, byAlgorithm]) =>
        Object.entries(byAlgorithm).map(([algorithm, microseconds]) => ({ primitive: 'allReduce' as const, algorithm, payload: 'typed' as const, members: 6, bytes: Number(bytes), selectionBytes: Number(bytes), microseconds, repetitions: 3, layout: { hosts: 3, perHost: 2 } })),
      );
    }
    const select = (rules: readonly SelectionRule[] | undefined, bytes: number, layout: { hosts: number; perHost: number }) =>
      new Selector(rules === undefined ? undefined : { allReduce: rules }, {}, undefined).select('allReduce', { bytes, members: layout.hosts * layout.perHost, commutative: true, requested: undefined, layout }).name;

    it(`selects the hierarchical variant only where it beats every flat algorithm by ${100 * MARGIN}%`, function () {
      // At 1 MiB the hierarchical variant (the built-in choice) is 1% faster than the binomial tree: within the noise.
      const rules = rulesOf('allReduce', deriveRegions('allReduce', overHosts({ 8: { hierarchical: 100, binomial: 130, rabenseifner: 140 }, [MiB]: { hierarchical: 990, binomial: 1000, rabenseifner: 1200 } })), 'hosts');
      expect(rules).to.deep.equal([
        { minHosts: 2, minPerHost: 2, algorithm: 'hierarchical', maxBytes: 2048 },
        { minHosts: 2, minPerHost: 2, algorithm: 'binomial' },
        { minHosts: 3, maxPerHost: 1, algorithm: 'binomial' },
        { maxHosts: 1, algorithm: 'shared-memory' },
        { maxMembers: 2, algorithm: 'bde-blocking' },
        { maxBytes: 32768, algorithm: 'bde-nonblocking' },
        { algorithm: 'rabenseifner' },
      ]);
      const threeByTwo = { hosts: 3, perHost: 2 };
      expect([select(rules, 8, threeByTwo), select(rules, MiB, threeByTwo)]).to.deep.equal(['hierarchical', 'binomial']);
      // Groups of one member per host (a hierarchical call's leaders) were not measured: they keep the built-in choice.
      for (const leaders of [{ hosts: 2, perHost: 1 }, { hosts: 3, perHost: 1 }]) {
        expect(select(rules, MiB, leaders), `${leaders.hosts} leaders`).to.equal(select(undefined, MiB, leaders));
      }
    });

    it('measured in several runs, keeps the hierarchical variant only where it wins significantly more of them (paired by run)', function () {
      // Six runs of 1 MiB, the machine slow in the last three; the tree's median is 1100 µs.
      const tree = [600, 600, 600, 1100, 1100, 1100];
      const runs = (hierarchical: readonly number[]) => hierarchical.flatMap((time, run) => overHosts({ 8: { hierarchical: 100, binomial: 130 }, [MiB]: { hierarchical: time, binomial: tree[run] as number } }));
      const choice = (hierarchical: readonly number[]) => select(rulesOf('allReduce', deriveRegions('allReduce', runs(hierarchical)), 'hosts'), MiB, { hosts: 3, perHost: 2 });
      // Faster in every run.
      expect(choice([500, 500, 500, 1000, 1000, 1000])).to.equal('hierarchical');
      // A median 18% below the tree's, but faster in only three runs of six.
      expect(choice([700, 700, 700, 900, 900, 900])).to.equal('binomial');
    });

    it('writes no rule where the hierarchical variant wins clearly at every size', function () {
      const regions = deriveRegions('allReduce', overHosts({ 8: { hierarchical: 100, binomial: 130, rabenseifner: 140 }, [MiB]: { hierarchical: 900, binomial: 1000, rabenseifner: 1200 } }));
      expect(rulesOf('allReduce', regions, 'hosts')).to.equal(undefined);
    });
  });

  describe('the charts', function () {
    const sizes = [0, ...Array.from({ length: 11 }, (_, i) => 4 ** i), 2 * 1024 ** 2];
    const time = (bytes: number) => 20 + 0.002 * bytes;
    const latency = lineChart({
      title: 'a collective: time',
      x: 'bytes',
      xLabel: 'message size n',
      y: 'time',
      yLabel: 'time T',
      series: [
        { name: 'first', points: sizes.map((bytes) => [bytes, time(bytes)] as const) },
        { name: 'second', points: sizes.map((bytes) => [bytes, 2 * time(bytes)] as const) },
      ],
    });

    it('writes sizes in B, KiB and MiB, and draws 0 B at its own labelled place', function () {
      const ticks = texts(latency, 'x-tick');
      const labels = ticks.map((tick) => tick.text);
      labels.forEach(bytesOf);
      expect(labels).to.include.members(['0 B', '1 B', '4 KiB', '2 MiB']);
      const zero = ticks.find((tick) => tick.text === '0 B') as { x: number };
      expect(pointsOf(latency).filter((point) => Math.abs(point.x - zero.x) < 0.5)).to.have.length(2);
    });

    it('ends the size axis at the largest size and the time axis near the data', function () {
      const plot = plotOf(latency);
      const rightmost = Math.max(...pointsOf(latency).map((point) => point.x));
      expect(plot.x + plot.width - rightmost).to.be.below(0.05 * plot.width);
      const largestTick = Math.max(...texts(latency, 'x-tick').map((tick) => bytesOf(tick.text)));
      expect(largestTick).to.be.at.most(2 * 1024 ** 2);
      const times = texts(latency, 'y-tick').map((tick) => microsecondsOf(tick.text));
      expect(Math.max(...times)).to.be.at.most(2.5 * 2 * time(2 * 1024 ** 2));
      expect(Math.min(...times)).to.be.at.least(time(0) / 2.5);
    });

    it('writes bandwidths in MB/s or GB/s, from 0 to near the largest', function () {
      const chart = lineChart({ title: 'bandwidth', x: 'bytes', xLabel: 'n', y: 'bandwidth', yLabel: 'n/T', series: [{ name: 'measured', points: sizes.map((bytes) => [bytes, bytes / time(bytes)] as const) }] });
      const values = texts(chart, 'y-tick').map((tick) => bandwidthOf(tick.text));
      const largest = Math.max(...sizes.map((bytes) => bytes / time(bytes)));
      expect(Math.min(...values)).to.equal(0);
      expect(Math.max(...values)).to.be.within(largest, 2 * largest);
    });

    it('keeps legends and labels whole, however long', function () {
      const long = 'linear model: t0 14.6 µs, ti 0 µs, tb 0.260 ns/B (average error 24.8%) and a few more words';
      const chart = lineChart({ title: 'a title long enough to be wider than the plot area of the chart, which it must not overflow', x: 'bytes', xLabel: 'n', y: 'time', yLabel: 'T', series: [{ name: long, points: [[1, 1], [4, 2]] }] });
      expectTextsInside(chart);
      expectTextsInside(latency);
      expect(texts(chart, 'legend').map((legend) => legend.text)).to.deep.equal([long]);
      expectTextsInside(barChart('bars', 'times slower', [{ label: 'a label far longer than the usual ones, to push the bars right', value: 31.3, target: 2 }, { label: 'short', value: 0.8 }]));
    });

    it('draws a dashed model over a wide one, so that coinciding models both show', function () {
      const curve = sizes.slice(1).map((bytes) => [bytes, bytes / time(bytes)] as const);
      const chart = lineChart({ title: 'model', x: 'bytes', xLabel: 'n', y: 'bandwidth', yLabel: 'n/T', series: [{ name: 'linear model', points: curve, style: 'dashed' }, { name: 'Hockney', points: curve, style: 'wide' }] });
      const polylines = [...chart.matchAll(/<polyline [^>]*>/g)].map((match) => match[0]);
      expect(polylines).to.have.length(2);
      expect(polylines[0]).to.include('stroke-width="7"');
      expect(polylines[1]).to.include('stroke-dasharray');
      expect(texts(chart, 'legend').map((legend) => legend.text)).to.deep.equal(['linear model', 'Hockney']);
    });
  });

  describe('progress and load', function () {
    it('warns when the load average is above the number of cores, and only then', function () {
      expect(loadWarning(3.5, 2)).to.include('load average (3.50').and.to.include('above the 2 cores');
      expect(loadWarning(2, 2)).to.equal(undefined);
      expect(loadWarning(0.3, 8)).to.equal(undefined);
    });
  });

  describe('the commands', function () {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-bench-'));
    after(function () {
      fs.rmSync(directory, { recursive: true, force: true });
    });

    it('ccjbench --list-algorithms lists every registered algorithm and the ping-pong variants', async function () {
      const result = await run(process.execPath, [ccjbench, '--list-algorithms']);
      expect(result.code, result.stderr).to.equal(0);
      const listed = result.stdout.trim().split('\n');
      const expected = ['pingpong sendSync', 'pingpong sendAsync', ...COLLECTIVES.flatMap((collective) => Object.keys(ALGORITHMS[collective]).map((name) => `${collective} ${name}`))];
      expect(listed).to.deep.equal(expected);
    });

    it('ccjbench measures a tiny range and writes the results, the model tables and the plots', async function () {
      const out = path.join(directory, 'results');
      const args = [ccjbench, '--collectives', 'broadcast,allReduce', '--sizes', '0,1024,4096', '--members', '2', '--repetitions', '2', '--out', out];
      const result = await run(process.execPath, args);
      expect(result.code, result.stderr).to.equal(0);
      const { measurements } = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8')) as { measurements: Measurement[] };
      const markdown = fs.readFileSync(path.join(out, 'results.md'), 'utf8');
      const model = fs.readFileSync(path.join(out, 'model.md'), 'utf8');
      for (const collective of ['broadcast', 'allReduce'] as const) {
        const latency = fs.readFileSync(path.join(out, `${collective}-typed-latency.svg`), 'utf8');
        expect(fs.existsSync(path.join(out, `${collective}-object-bandwidth.svg`))).to.equal(true);
        for (const algorithm of Object.keys(ALGORITHMS[collective])) {
          const mine = measurements.filter((m) => m.primitive === collective && m.algorithm === algorithm);
          expect(mine.map((m) => `${m.payload} ${m.bytes}`).sort(), `${collective} ${algorithm}`).to.deep.equal(['object 0', 'object 1024', 'object 4096', 'typed 0', 'typed 1024', 'typed 4096']);
          expect(mine.every((m) => m.members === 2 && m.microseconds > 0)).to.equal(true);
          expect(markdown).to.include(`${algorithm} (typed)`);
          expect(model).to.include(`| ${collective} | ${algorithm} (typed) |`);
          expect(latency).to.include(`>${algorithm}</text>`);
        }
      }
      expect(fs.existsSync(path.join(out, `model-broadcast-${Object.keys(ALGORITHMS.broadcast)[0]}-p2.svg`))).to.equal(true);
      // The plots: sizes in bytes units from 0 B, texts whole; the model tables without negative constants.
      for (const name of fs.readdirSync(out).filter((file) => file.endsWith('.svg'))) {
        const svg = fs.readFileSync(path.join(out, name), 'utf8');
        const sizes = texts(svg, 'x-tick').map((tick) => tick.text);
        sizes.forEach(bytesOf);
        expect(sizes, name).to.include('0 B');
        expectTextsInside(svg);
      }
      const formulaCells = model.split('\n').filter((line) => line.startsWith('| ')).flatMap((line) => line.split('|').map((cell) => cell.trim()));
      expect(formulaCells.filter((cell) => cell.startsWith('-'))).to.deep.equal([]);
      // One progress bar for the run, in a log one line per step of 5% at most, with an ETA until the end.
      const progress = result.stderr.split('\n').filter((line) => line.startsWith('ccjbench ['));
      expect(progress.length).to.be.within(2, 21);
      expect(progress[0]).to.match(/^ccjbench \[[#.]{30}\] \d+% \d+s, ETA \d+(m\d\ds)?s? {2}p=2 /);
      expect(progress[progress.length - 1]).to.match(/^ccjbench \[#{30}\] 100% /);
    });

    it('ccjbench --report redraws the tables and plots from results.json without measuring', async function () {
      const out = path.join(directory, 'results');
      const before = fs.readFileSync(path.join(out, 'results.json'), 'utf8');
      for (const name of ['results.md', 'model.md', 'broadcast-typed-latency.svg']) fs.rmSync(path.join(out, name));
      const result = await run(process.execPath, [ccjbench, '--report', '--out', out]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.not.include('ccjbench [');
      for (const name of ['results.md', 'model.md', 'broadcast-typed-latency.svg']) expect(fs.existsSync(path.join(out, name)), name).to.equal(true);
      const { date, measurements } = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8')) as { date: string; measurements: Measurement[] };
      expect(date).to.equal((JSON.parse(before) as { date: string }).date);
      expect(measurements).to.deep.equal((JSON.parse(before) as { measurements: Measurement[] }).measurements);
      const refused = await run(process.execPath, [ccjbench, '--report', '--sizes', '0', '--out', out]);
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.include('--report redraws what results.json holds: --sizes does not apply');
    });

    it('ccjtune writes a checked selection table into the config file, keeping its other keys and only rules that beat the built-in choice, and a master loads it', async function () {
      const file = path.join(directory, 'ccjs.config.json');
      const log = path.join(directory, 'ccjtune.json');
      fs.writeFileSync(file, JSON.stringify({ eagerLimit: 65536, collectives: { scan: [{ algorithm: 'linear' }], broadcast: [{ algorithm: 'mst' }] } }));
      const args = [ccjtune, '--collectives', 'broadcast,allReduce', '--sizes', '0,1024', '--members', '2', '--repetitions', '2', '--out', file, '--log', log];
      const result = await run(process.execPath, args);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/^broadcast$/m).and.to.match(/^allReduce$/m).and.to.match(/built-in \S+ (takes \d+\.\d\d× as long|kept: no algorithm beats it by 5%)/);
      expect(result.stderr).to.match(/^ccjtune \[#{30}\] 100% /m);
      const written = JSON.parse(fs.readFileSync(file, 'utf8')) as { eagerLimit: number; collectives: unknown };
      expect(written.eagerLimit).to.equal(65536);
      const table = checkTable(written.collectives, 'the tuned table');
      const { measurements, tuned, builtIn } = JSON.parse(fs.readFileSync(log, 'utf8')) as TuneLog;
      expect([...Object.keys(tuned), ...builtIn]).to.have.members(['broadcast', 'allReduce']);
      // The earlier broadcast rules go: measured now, broadcast has the tuned rules or the built-in table again.
      expect(table).to.deep.equal({ scan: [{ algorithm: 'linear' }], ...tuned });
      for (const [collective, rules] of Object.entries(tuned)) expectEveryRuleBeatsBuiltIn(collective as CollectiveName, rules, measurements);
      const [master] = await createMasters(1, { config: file });
      try {
        expect(master.config.collectives).to.deep.equal(table);
        expect(master.config.eagerLimit).to.equal(65536);
      } finally {
        await closeAll([master]);
      }
    });
  });
});
