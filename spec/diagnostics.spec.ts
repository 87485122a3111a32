/**
 * Diagnoses instead of silence: a member returning from run() with a call still pending (a missing
 * await) is named, and the watchdog (CCJS_WATCHDOG_MS) makes every endpoint log its pending calls
 * once when a call waits too long. Also the device table each endpoint prints with CCJS_TRACE.
 */
import { expect } from 'chai';
import { runScenario } from './harness.js';

describe('diagnostics', function () {
  it('names the call a member left pending when run() returned', async function () {
    const { stderr } = await runScenario(2, 1, 'forgotten');
    expect(stderr).to.match(/\[0\] ccjs: member TestMember #0 of process 0 returned from run\(\) with 1 call\(s\) still pending \(a missing await\?\):\n\[0\]   - receive from rank 1 of group 'forgotten-\d+' \(tag 7\), member TestMember #0 of process 0/);
  });

  it('dumps the pending calls of every endpoint once when the watchdog fires, in the other processes too', async function () {
    // Only process 0 has a watchdog: process 1's endpoints dump because they are asked to.
    const { stderr, results } = await runScenario(2, 2, 'stall', { stallMs: 2000, optionsOfProcess: { 0: { watchdogMs: 400 } } });
    expect(results.map((result) => (result as string[])[0])).to.deep.equal(['late', 'late', 'late', 'late']);
    for (let endpoint = 0; endpoint < 4; endpoint += 1) {
      const dumps = stderr.split('\n').filter((line) => line.startsWith(`[${endpoint}] ccjs watchdog: endpoint ${endpoint} `));
      expect(dumps, `endpoint ${endpoint}`).to.have.lengthOf(1);
      expect(stderr).to.contain(`[${endpoint}]   - receive from rank ${(endpoint + 1) % 4} of group 'stall-`);
      if (endpoint >= 2) expect(dumps[0]).to.match(/: the watchdog of endpoint [01] \(process 0, thread [01]\) fired; 1 pending call\(s\)$/);
    }
    expect(stderr).to.match(/\[[01]\] ccjs watchdog: endpoint [01] \(process 0, thread [01]\): a call has waited more than 400 ms; 1 pending call\(s\)/);
  });

  for (const [addon, between] of [
    ['built', 'shm'],
    ['switched off', 'tcp'],
  ] as const) {
    it(`prints which device serves which peer: in-process for itself, shm between threads, ${between} between processes (addon ${addon})`, async function () {
      const { results, stderr } = await runScenario(2, 2, 'devices', {}, addon === 'built' ? {} : { CCJS_NO_NATIVE_SHM: '1' });
      const table = results[1] as string;
      const note = addon === 'built' ? '' : " — 'shm' is not used: the shared-memory addon is switched off (CCJS_NO_NATIVE_SHM=1)";
      expect(table.split('\n')).to.deep.equal([
        'endpoint 1 (host ' + table.split('host ')[1]?.split(',')[0] + ', process 0, thread 1):',
        '  → endpoint 0 (process 0, thread 0): shm (same process)',
        '  → endpoint 1 (process 0, thread 1): local (same endpoint)',
        `  → endpoint 2 (process 1, thread 0): ${between} (same host)${note}`,
        `  → endpoint 3 (process 1, thread 1): ${between} (same host)${note}`,
      ]);
      // Said once per process, by its main thread.
      const warnings = stderr.split('\n').filter((line) => line.includes("ccjs: 'shm' is not used"));
      expect(warnings).to.have.lengthOf(addon === 'built' ? 0 : 2);
      expect(warnings.map((line) => line.slice(0, 4)).sort()).to.deep.equal(addon === 'built' ? [] : ['[0] ', '[2] ']);
    });
  }
});
