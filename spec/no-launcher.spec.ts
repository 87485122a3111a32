import { expect } from 'chai';
import { environmentWithoutLaunchers, fixture, run } from './harness.js';

/** A timeout far beyond the test's: a process that waits for the members of other processes fails this test. */
const PATIENT = { CCJS_TIMEOUT_MS: '600000' };

describe('a job started without a launcher (issue 30, item 12)', function () {
  it('fails at once with a ConfigError that says how to start it, when its group needs other processes', async function () {
    // One member here, in a group of 4: the other three would come from processes nobody starts.
    const result = await run(process.execPath, [fixture('groups-job'), '1,1,1,1'], PATIENT, 60_000, { base: environmentWithoutLaunchers() });
    expect(result.signal, result.stderr).to.equal(null);
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.include('ConfigError');
    expect(result.stderr).to.include('no launcher started this process, so the job is this 1 endpoint, with 1 member(s): a group of 4 cannot form');
    expect(result.stderr).to.include('npx ccjrun -n 4');
    expect(result.stderr).to.include('CCJS_RANK, CCJS_SIZE and CCJS_COORDINATOR');
  });

  it('still forms a group whose members all joined in this process', async function () {
    const result = await run(process.execPath, [fixture('groups-job'), '4'], PATIENT, 60_000, { base: environmentWithoutLaunchers() });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout.trim().split('\n')).to.have.length(4);
    expect(result.stderr).to.equal('');
  });
});
