import { expect } from 'chai';
import path from 'node:path';
import { ccjrun, distRoot, run } from './harness.js';
import { exactDifferences, parseArguments, relativeDifferences, reportCheck } from '../examples/common.js';

/** Sizes that do not divide evenly by 3 or 4 members, so that the blocks differ in length. */
const examples = [
  { name: 'asp', size: 91, extra: '' },
  { name: 'qr', size: 77, extra: '' },
  { name: 'leq', size: 101, extra: String.raw` iterations=\d+` },
] as const;

const memberCounts = [1, 3, 4] as const;

describe('example applications', function () {
  for (const { name, size, extra } of examples) {
    describe(name, function () {
      const checksums = new Map<number, string>();

      for (const members of memberCounts) {
        it(`matches the sequential version on ${members} member${members === 1 ? '' : 's'}`, async function () {
          const script = path.join(distRoot, 'examples', `${name}.js`);
          // A job that stalls fails with ccjs's own TimeoutError (naming what it waited for) well before run() kills it.
          const args = [ccjrun, '-n', String(members), '--timeout', '20000', script, String(size), '--seed', '7', '--check'];
          const result = await run(process.execPath, args);
          expect(result.code, `signal ${result.signal}\n${result.stderr}${result.stdout}`).to.equal(0);
          const line = new RegExp(String.raw`^\[0\] ${name} n=${size} members=${members}${extra} checksum=(-?[\d.e+-]+) time=\d+\.\d{3}s$`, 'm');
          const printed = line.exec(result.stdout);
          expect(printed, result.stdout).to.not.equal(null);
          expect(result.stdout).to.match(/^\[0\] check: ok$/m);
          checksums.set(members, (printed as RegExpExecArray)[1]);
        });
      }

      it('prints the same checksum whatever the number of members', function () {
        if (checksums.size < memberCounts.length) this.skip();
        expect(new Set(checksums.values()).size, JSON.stringify([...checksums])).to.equal(1);
      });
    });
  }

  describe('the --check comparison', function () {
    /** reportCheck's printed lines, without letting them into the test output. */
    function printedBy(body: () => void): string[] {
      const lines: string[] = [];
      const log = console.log;
      console.log = (line: string) => lines.push(line);
      try {
        body();
      } finally {
        console.log = log;
      }
      return lines;
    }

    it('detects a single wrong integer and a floating-point value off by more than the tolerance', function () {
      const expected = Int32Array.of(0, 5, 7);
      expect(exactDifferences('row', Int32Array.of(0, 5, 7), expected)).to.deep.equal([]);
      expect(exactDifferences('row', Int32Array.of(0, 6, 7), expected)).to.deep.equal(['row[1] is 6, expected 5']);
      expect(relativeDifferences('x', [1, 2 * (1 + 1e-12)], [1, 2], 1e-9)).to.deep.equal([]);
      expect(relativeDifferences('x', [1, 2 * (1 + 1e-8)], [1, 2], 1e-9)).to.have.length(1);
      expect(relativeDifferences('x', [NaN], [NaN], 1e-9)).to.have.length(1);
    });

    it('prints check: ok, or prints and throws check: FAILED naming the difference', function () {
      expect(printedBy(() => reportCheck([]))).to.deep.equal(['check: ok']);
      const differences = ['row[1] is 6, expected 5', 'a', 'b', 'c', 'd'];
      let thrown: unknown;
      const lines = printedBy(() => {
        try {
          reportCheck(differences);
        } catch (error) {
          thrown = error;
        }
      });
      const failed = 'check: FAILED row[1] is 6, expected 5; a; b (and 2 more)';
      expect(lines).to.deep.equal([failed]);
      expect(thrown).to.be.instanceOf(Error).with.property('message', failed);
    });
  });

  it('parses <size> [--seed S] [--check] and rejects anything else', function () {
    expect(parseArguments('asp', ['100'])).to.deep.equal({ size: 100, seed: 1, check: false });
    expect(parseArguments('asp', ['--check', '100', '--seed', '42'])).to.deep.equal({ size: 100, seed: 42, check: true });
    expect(() => parseArguments('asp', [])).to.throw(/a size of at least 1 is required/);
    expect(() => parseArguments('asp', ['100', '--seed'])).to.throw(/the seed must be an integer/);
    expect(() => parseArguments('asp', ['100', '--fast'])).to.throw(/unexpected argument '--fast'/);
  });
});
