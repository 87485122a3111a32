/**
 * Issue 30.8: under a real mpirun, the coordinator's derived port is taken by another program.
 * Process 0 must say that the port is taken and how to choose one (CCJS_COORDINATOR); the others,
 * which meet that program instead of a coordinator, must say so too, not that the job secrets differ.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { environmentWithoutLaunchers, fixture } from './harness.js';

describe('a coordinator port taken by another program (issue 30.8)', function () {
  this.timeout(120_000);

  it('under mpirun -n 2: process 0 names the port and CCJS_COORDINATOR, process 1 blames no job secret', function () {
    if (spawnSync('mpirun', ['--version']).error !== undefined) {
      console.log('      (skipped: mpirun is not installed; apt-get install openmpi-bin to run it)');
      this.skip();
    }
    const result = spawnSync('mpirun', ['--allow-run-as-root', '--oversubscribe', '-x', 'CCJS_TIMEOUT_MS=5000', '-n', '2', process.execPath, fixture('port-taken')], {
      env: environmentWithoutLaunchers(),
      encoding: 'utf8',
      timeout: 90_000,
    });
    const output = `${result.stdout}\n${result.stderr}`;
    const port = /^HOLDING (\d+)$/m.exec(result.stdout)?.[1];
    expect(port, output).to.not.equal(undefined);
    const failures = result.stdout.split('\n').filter((line) => line.startsWith('FAILED '));
    expect(failures, output).to.have.length(2);
    const process0 = failures.find((line) => line.startsWith('FAILED coordinator cannot listen'));
    expect(process0, output).to.include(`port ${port} is taken by another program`).and.to.include('CCJS_COORDINATOR=host:port');
    const process1 = failures.find((line) => line.startsWith('FAILED process 1:'));
    expect(process1, output).to.include(`127.0.0.1:${port} is not a ccjs coordinator`).and.to.include('CCJS_COORDINATOR=host:port');
    expect(output).not.to.include('job secret');
  });
});
