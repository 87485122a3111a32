import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import { checkTable } from '../src/collectives/selection.js';
import { fitHockney, fitLinearModel, formulaInMembers, hockneyTime, linearModelTime } from '../bench/model.js';
import type { LinearModel, Sample } from '../bench/model.js';
import { deriveRegions } from '../bench/ccjtune.js';
import type { Measurement } from '../bench/ccjbench.js';
import { closeAll, createMasters, packageRoot, run } from './harness.js';

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

describe('benchmarks and tuning', function () {
  describe('the performance model (seed 004, section 3)', function () {
    /** The seed's ScaMPI and MPICH-GM Send, and two of the shape TCP on loopback has (µs, µs, µs per byte). */
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

    it("writes parameters as functions of p in the seed's notation", function () {
      expect(formulaInMembers([[2, 7 + 5 * 2], [3, 7 + 5 * 3], [4, 7 + 5 * 4], [8, 7 + 5 * 8]])).to.equal('7.00 + 5.00p');
      expect(formulaInMembers([[2, 3 + 8], [4, 3 + 16], [8, 3 + 24], [16, 3 + 32]])).to.equal('3.00 + 8.00⌈lp⌉');
      expect(formulaInMembers([[2, 12]])).to.equal('12.0');
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
      expect(deriveRegions(measurements(16384)).map((region) => region.rule)).to.deep.equal([{ maxBytes: 65536, algorithm: 'small' }, { algorithm: 'large' }]);
      expect(deriveRegions(measurements(Infinity)).map((region) => region.rule)).to.deep.equal([{ algorithm: 'small' }]);
    });

    it('splits by member count where the winner depends on it', function () {
      expect(deriveRegions(measurements(0, 'other')).map((region) => region.rule)).to.deep.equal([
        { maxBytes: 0, maxMembers: 3, algorithm: 'small' },
        { maxMembers: 3, algorithm: 'large' },
        { algorithm: 'other' },
      ]);
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
    });

    it('ccjtune writes a checked selection table into the config file, keeping its other keys, and a master loads it', async function () {
      const file = path.join(directory, 'ccjs.config.json');
      fs.writeFileSync(file, JSON.stringify({ eagerLimit: 65536, collectives: { scan: [{ algorithm: 'linear' }] } }));
      const args = [ccjtune, '--collectives', 'broadcast,allReduce', '--sizes', '0,1024', '--members', '2', '--repetitions', '2', '--out', file];
      const result = await run(process.execPath, args);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/^broadcast$/m).and.to.match(/^allReduce$/m).and.to.match(/built-in \S+ takes \d+\.\d\d× as long/);
      const written = JSON.parse(fs.readFileSync(file, 'utf8')) as { eagerLimit: number; collectives: unknown };
      expect(written.eagerLimit).to.equal(65536);
      const table = checkTable(written.collectives, 'the tuned table');
      expect(Object.keys(table)).to.have.members(['scan', 'broadcast', 'allReduce']);
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
