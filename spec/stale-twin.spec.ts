/**
 * Issue 30.11: `ccjrun src/x.ts` runs the compiled twin dist/src/x.js; when the source changed
 * after the twin was built, ccjrun says so (and runs it all the same).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ccjrun } from './harness.js';

describe('ccjrun and a stale compiled twin (issue 30.11)', function () {
  this.timeout(60_000);
  let root = '';

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-stale-twin-'));
    fs.writeFileSync(path.join(root, 'package.json'), '{"type": "module"}');
    fs.mkdirSync(path.join(root, 'src'));
    fs.mkdirSync(path.join(root, 'dist', 'src'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src', 'job.ts'), "console.log('new source');\n");
    fs.writeFileSync(path.join(root, 'dist', 'src', 'job.js'), "console.log('old build');\n");
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Runs ccjrun -n 1 src/job.ts in the package, with the source `sourceAgeS` and the twin `twinAgeS` seconds old. */
  function runWithAges(sourceAgeS: number, twinAgeS: number): { stderr: string } {
    const now = Date.now() / 1000;
    fs.utimesSync(path.join(root, 'src', 'job.ts'), now - sourceAgeS, now - sourceAgeS);
    fs.utimesSync(path.join(root, 'dist', 'src', 'job.js'), now - twinAgeS, now - twinAgeS);
    // ccjrun resolves the script against its working directory: the package's.
    const started = spawnSync(process.execPath, [ccjrun, '-n', '1', 'src/job.ts'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(started.status, started.stderr).to.equal(0);
    expect(started.stdout).to.equal('[0] old build\n');
    return started;
  }

  it('warns when the .ts file is newer than its .js twin, naming both and how to rebuild', () => {
    const { stderr } = runWithAges(10, 60);
    expect(stderr).to.equal(`ccjrun: warning: src/job.ts changed after ${path.join('dist', 'src', 'job.js')} was built from it; running the older build: rebuild first (e.g. npx tsc)\n`);
  });

  it('says nothing when the twin was built after the source', () => {
    const { stderr } = runWithAges(60, 10);
    expect(stderr).to.equal('');
  });
});
