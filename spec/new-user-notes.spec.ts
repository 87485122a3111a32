/**
 * Issue 30.15d-f: what a new user reads and sees. getting-started no longer calls `ccjrun --hosts`
 * planned; every line the watchdog prints is of a documented form (its devices' internal state
 * included); the README notes npm 11's allowScripts warning and mpirun's flags for root and for
 * more processes than cores, below its first two commands, which stay as they were.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot, runScenario } from './harness.js';

const read = (file: string) => fs.readFileSync(path.join(packageRoot, file), 'utf8');

describe("a new user's notes (issue 30.15d-f)", function () {
  this.timeout(120_000);

  it('getting-started says that ccjrun --hosts exists, and how a job across hosts gets its secret', () => {
    const guide = read('docs/getting-started.md');
    expect(guide).not.to.match(/planned/i);
    expect(guide).to.include('npx ccjrun --hosts node01:4,node02:4');
    expect(guide).to.include('export CCJS_SECRET=$(openssl rand -hex 32)');
  });

  it('prints watchdog dumps only in documented forms: the header, the pending calls, each device\'s internal state', async () => {
    const { stderr } = await runScenario(1, 2, 'stall', { stallMs: 1500, optionsOfProcess: { 0: { watchdogMs: 300 } } });
    const dumpLines = stderr.split('\n').filter((line) => /^\[\d+\] {3}/.test(line));
    expect(dumpLines.length, stderr).to.be.at.least(4);
    for (const line of dumpLines) expect(line).to.match(/^\[\d+\] {3}(- .+, waiting \d+\.\d s|internal state of device \w+: .+)$/);
    expect(dumpLines.filter((line) => line.includes('internal state of device shm: '))).to.have.length(2);
    const guide = read('docs/getting-started.md');
    expect(guide).to.match(/\[0\] {3}internal state of device shm: /);
    expect(guide).to.match(/The lines\s+`internal state of device …` give what a device holds and waits for/);
  });

  it("the README notes npm 11's allowScripts warning and mpirun's --allow-run-as-root and --oversubscribe, its first two commands intact", () => {
    const readme = read('README.md');
    expect(readme.split('\n').slice(4, 8)).to.deep.equal([
      '```sh',
      'npm ci && npx ccjrun -n 4 examples/asp 1000 --check   # set up, then all-pairs shortest paths on 4 members, verified',
      'npm test                                              # run the tests (builds first)',
      '```',
    ]);
    expect(readme).to.include('not yet covered by allowScripts');
    expect(readme).to.include('npm install-scripts approve ccjs');
    expect(readme).to.include('mpirun --allow-run-as-root --oversubscribe -np 4 node script.js');
  });
});
