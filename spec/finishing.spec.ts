/**
 * Members that finish normally fail nothing that another member could still complete: a pending
 * wildcard receive waits while any other member may send, takes what was sent before its sender
 * closed, and fails only once no other member is left (spec/fixtures/farewell.ts).
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { ccjrun, environmentWithoutLaunchers, fixture, run } from './harness.js';

interface Failure {
  readonly name: string;
  readonly message: string;
}

interface Report {
  readonly endpoint: number;
  readonly bye: string;
  readonly received?: string[];
  readonly afterAll?: Failure;
  readonly fromFinished?: Failure;
}

/** The RESULT lines of a job's output, by endpoint. */
function reports(stdout: string): Report[] {
  const found: Report[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^(?:\[\d+\] )?RESULT (.*)$/.exec(line);
    if (match) {
      const report = JSON.parse(match[1] as string) as Report;
      found[report.endpoint] = report;
    }
  }
  return found;
}

function checkReports(found: Report[], members: number, output: string): void {
  expect(found.filter(Boolean), output).to.have.length(members);
  for (const report of found) expect(report.bye, `endpoint ${report.endpoint}: ${output}`).to.equal('bye');
  const root = found[0] as Report;
  const expected = Array.from({ length: members - 1 }, (_, worker) => Array.from({ length: 5 }, (__, i) => `${worker + 1}.${i}`)).flat().sort();
  expect(root.received).to.deep.equal(expected);
  if (members === 1) return;
  expect(root.afterAll?.name).to.equal('PeerLostError');
  expect(root.afterAll?.message).to.match(/^receive from any rank of group 'farm' failed: no other member of the group is left to send \(.*closed its connection/);
  expect(root.fromFinished?.name).to.equal('PeerLostError');
  expect(root.fromFinished?.message).to.match(/^receive from rank 1 of group 'farm' failed: .*1.* closed its connection/);
}

describe('members that finish while others wait on wildcard receives', function () {
  this.timeout(120_000);

  for (const [processes, threads] of [
    [1, 1],
    [2, 1],
    [3, 1],
    [4, 1],
    [5, 1],
    [6, 1],
    [7, 1],
    [8, 1],
    [9, 1],
    [1, 2],
    [1, 4],
    [1, 9],
    [2, 2],
    [3, 3],
  ] as const) {
    it(`ccjrun -n ${processes} --threads ${threads}: every message arrives, and the last wildcard receive fails naming who finished`, async () => {
      const result = await run(process.execPath, [ccjrun, '-n', String(processes), '--threads', String(threads), fixture('farewell')]);
      const output = `${result.stdout}\n${result.stderr}`.slice(-4000);
      expect(result.code, output).to.equal(0);
      checkReports(reports(result.stdout), processes * threads, output);
    });
  }

  it('ccjrun -n 4 over TCP only: the same', async () => {
    const result = await run(process.execPath, [ccjrun, '-n', '4', fixture('farewell')], { CCJS_TRANSPORT: 'tcp' });
    const output = `${result.stdout}\n${result.stderr}`.slice(-4000);
    expect(result.code, output).to.equal(0);
    checkReports(reports(result.stdout), 4, output);
  });

  for (const processes of [2, 4]) {
    it(`mpirun -n ${processes}: the same`, function () {
      if (spawnSync('mpirun', ['--version']).error !== undefined) {
        console.log('      (skipped: mpirun is not installed; apt-get install openmpi-bin to run it)');
        this.skip();
      }
      const result = spawnSync('mpirun', ['--allow-run-as-root', '--oversubscribe', '-n', String(processes), process.execPath, fixture('farewell')], { env: environmentWithoutLaunchers(), encoding: 'utf8', timeout: 90_000 });
      const output = `${result.stdout}\n${result.stderr}`.slice(-4000);
      expect(result.status, output).to.equal(0);
      checkReports(reports(result.stdout), processes, output);
    });
  }
});
