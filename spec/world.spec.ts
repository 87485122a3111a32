/**
 * Issue 30, item 16: `await world()` is a ready member of the group of every endpoint, so that an
 * SPMD script reaches its first message in three lines (examples/tutorial/world.ts), on processes
 * and on threads, and exits once it closes.
 */
import { expect } from 'chai';
import path from 'node:path';
import { ccjrun, packageRoot, run } from './harness.js';

const script = path.join(packageRoot, 'examples', 'tutorial', 'world.ts');

describe('world(): an SPMD script as a ready member', function () {
  for (const layout of [['-n', '4'], ['-n', '2', '--threads', '2']]) {
    it(`exchanges point to point and reduces over every endpoint (ccjrun ${layout.join(' ')})`, async function () {
      const result = await run(process.execPath, [ccjrun, ...layout, script]);
      expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
      const lines = result.stdout.trim().split('\n').sort();
      expect(lines).to.deep.equal([0, 1, 2, 3].map((rank) => `[${rank}] rank ${rank} of 4 got 'hello from ${(rank + 3) % 4}'; the ranks sum to 6`));
    });
  }
});
