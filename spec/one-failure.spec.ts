import { expect } from 'chai';
import { ccjrun, environmentWithoutLaunchers, fixture, run } from './harness.js';

/** Runs spec/fixtures/one-failure.ts under `ccjrun -n 4` in `mode`, with `env` added. */
function job(mode: string, env: Record<string, string> = {}) {
  return run(process.execPath, [ccjrun, '-n', '4', fixture('one-failure'), mode], { ...environmentWithoutLaunchers(), ...env }, 60_000);
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe('one failure, one message (issue 30, item 14)', function () {
  it('prints the stack of a member that throws once, and names its rank as the cause', async function () {
    const result = await job('throw');
    expect(result.code).to.equal(1);
    expect(occurrences(result.stderr, 'boom in rank 2'), result.stderr).to.equal(1);
    expect(occurrences(result.stderr, 'at OneFailure.run'), result.stderr).to.equal(1);
    expect(result.stderr).to.match(/^\[2\] ccjs: aborting the job: member OneFailure #0 of process 2 \(groups: one-failure\) failed: Error: boom in rank 2$/m);
    for (const rank of [0, 1, 3]) expect(result.stderr).to.contain(`[${rank}] ccjs: process ${rank} stops: the job was aborted by process 2\n`);
    expect(result.stderr).to.contain('ccjrun: rank 2 exited with code 1; stopping the job');
  });

  it('prints one cause of a collective mismatch, without a chain of "failed at rank"', async function () {
    const result = await job('mismatch');
    expect(result.code).to.equal(1);
    expect(occurrences(result.stderr, 'every member must pass the same reduction'), result.stderr).to.equal(1);
    expect(result.stderr).to.not.contain('failed at rank');
    const cause = /^\[(\d)\] ccjs: aborting the job: .*CollectiveMismatchError: allReduce: receive from rank/m.exec(result.stderr);
    expect(cause, result.stderr).to.not.equal(null);
    const rank = (cause as RegExpExecArray)[1];
    expect(result.stderr).to.contain(`ccjrun: rank ${rank} exited with code 1; stopping the job`);
    expect(occurrences(result.stderr, `stops: the job was aborted by process ${rank}\n`)).to.equal(3);
  });

  it('says a bad CCJS_ variable in one line, before any process starts', async function () {
    const result = await job('throw', { CCJS_TIMEOUT_MS: 'soon' });
    expect(result.code).to.not.equal(0);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.equal('ccjrun: CCJS_TIMEOUT_MS must be an integer >= 1, got "soon"\n');
  });
});
