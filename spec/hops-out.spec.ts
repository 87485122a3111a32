/**
 * Issue 30.15b: `bench/hops.js --out DIR` writes its table and samples into DIR, and leaves the
 * committed results in bench/results alone. (The shortest run there is: one quick round.)
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { distRoot, packageRoot, run } from './harness.js';

describe('bench/hops.js --out (issue 30.15b)', function () {
  this.timeout(120_000);

  it('writes hops.md and hops.json into the directory named, not into bench/results', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-hops-out-'));
    const out = path.join(directory, 'made-by-hops');
    const committed = path.join(packageRoot, 'bench', 'results', 'hops.md');
    const before = fs.statSync(committed, { throwIfNoEntry: false })?.mtimeMs;
    try {
      const result = await run(process.execPath, [path.join(distRoot, 'bench', 'hops.js'), '--quick', '--rounds', '1', '--out', out]);
      expect(result.code, result.stderr).to.equal(0);
      expect(fs.readdirSync(out).sort()).to.deep.equal(['hops.json', 'hops.md']);
      expect(fs.readFileSync(path.join(out, 'hops.md'), 'utf8')).to.match(/^One hop, 1 rounds/);
      expect(Object.keys(JSON.parse(fs.readFileSync(path.join(out, 'hops.json'), 'utf8')) as object)).to.include('tcp Float64Array(1)');
      expect(fs.statSync(committed, { throwIfNoEntry: false })?.mtimeMs).to.equal(before);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
