/**
 * Hierarchical collectives and message counters, on jobs of real processes on this machine that
 * claim different hosts (option `host`, as CCJS_HOST would): processes with different hosts talk
 * over TCP, processes of one host over shared memory.
 *
 * In CI: 4 layouts of processes over hosts (uneven, interleaved, one per host, one host), each
 * with a few member counts. CCJS_FULL_HIER=1 runs every member count 1..9 on every layout.
 */
import os from 'node:os';
import { expect } from 'chai';
import { runScenario } from './harness.js';

const FULL = process.env.CCJS_FULL_HIER === '1';

/** Host names of the job's processes, by process rank, as `optionsOfProcess` for the scenario fixture. */
const hostsOf = (hosts: readonly string[]) => ({ optionsOfProcess: Object.fromEntries(hosts.map((host, process) => [String(process), { host }])) });

interface Layout {
  readonly name: string;
  readonly hosts: readonly string[];
  readonly sizes: readonly number[];
}

const ALL_SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9];
const LAYOUTS: readonly Layout[] = [
  // 3 + 1 + 2 endpoints; 9 members put 2, 2, 1 | 1 | 2, 1 on them.
  { name: '3 + 1 + 2 endpoints on 3 hosts', hosts: ['a', 'a', 'a', 'b', 'c', 'c'], sizes: FULL ? ALL_SIZES : [6, 9] },
  // Ranks alternate between the hosts: no host holds consecutive ranks.
  { name: '2 + 2 endpoints on 2 hosts, interleaved', hosts: ['a', 'b', 'a', 'b'], sizes: FULL ? ALL_SIZES : [3, 7] },
  { name: 'one endpoint per host', hosts: ['a', 'b', 'c'], sizes: FULL ? ALL_SIZES : [3, 5] },
  { name: 'one host', hosts: ['a', 'a', 'a'], sizes: FULL ? ALL_SIZES : [1, 4] },
];

describe('hierarchical collectives over several hosts', function () {
  this.timeout(FULL ? 1_200_000 : 180_000);

  for (const layout of LAYOUTS) {
    it(`every hierarchical variant and the collectives suite are correct: ${layout.name}, ${layout.sizes.join(', ')} members`, async function () {
      const { results } = await runScenario(layout.hosts.length, 1, 'hierarchicalVariants', { sizes: layout.sizes, ...hostsOf(layout.hosts) }, {}, FULL ? 1_100_000 : 170_000);
      expect(results).to.have.length(layout.hosts.length);
      for (const result of results) expect(result).to.deep.equal(layout.sizes.map((size) => `${size} members`));
    });
  }

  /** Inter-host messages of one broadcast, summed over the endpoints, and the root check's share of them. */
  async function interHostMessages(hosts: readonly string[], algorithm: string, root: number): Promise<{ total: number; rootCheck: number }> {
    const { results } = await runScenario(hosts.length, 1, 'broadcastCounts', { algorithm, root, ...hostsOf(hosts) });
    const counts = results as { host: string; otherHost: number }[];
    expect(counts.map((count) => count.host)).to.deep.equal(hosts);
    // Rooted calls first tell the next rank their root (a ring): those messages cross hosts too.
    const rootCheck = hosts.filter((host, rank) => host !== hosts[(rank + 1) % hosts.length]).length;
    return { total: counts.reduce((sum, count) => sum + count.otherHost, 0), rootCheck };
  }

  it('a hierarchical broadcast sends hosts − 1 messages between hosts, a flat binomial one more here', async function () {
    const hosts = ['a', 'b', 'a', 'b', 'c', 'c'];
    const hierarchical = await interHostMessages(hosts, 'hierarchical', 1);
    expect(hierarchical.total - hierarchical.rootCheck).to.equal(3 - 1);
    const binomial = await interHostMessages(hosts, 'binomial', 1);
    expect(binomial.total - binomial.rootCheck).to.be.greaterThan(3 - 1);
  });

  it('the built-in selection picks the hierarchical variants over several hosts, and CCJS_TRACE shows both levels', async function () {
    const spread = await runScenario(4, 1, 'defaultChoice', hostsOf(['a', 'a', 'b', 'b']), { CCJS_TRACE: '1' });
    expect(spread.results).to.deep.equal([6, 6, 6, 6]);
    const output = spread.stdout + spread.stderr;
    expect(output).to.match(/broadcast\(root 0\) hierarchical, \d+ bytes, 4 members on 2 hosts \(at most 2 on one\)/);
    expect(output).to.match(/broadcast hierarchical, inter-host level: broadcast \S+, 2 members/);
    expect(output).to.match(/broadcast hierarchical, intra-host level: broadcast \S+, 2 members/);
    expect(output).to.match(/allReduce\([^)]*\) hierarchical, /);
    expect(output).to.match(/allReduce hierarchical, intra-host level: reduce \S+, 2 members/);
    expect(output).to.match(/allReduce hierarchical, inter-host level: allReduce \S+, 2 members/);

    const oneHost = await runScenario(4, 1, 'defaultChoice', hostsOf(['a', 'a', 'a', 'a']), { CCJS_TRACE: '1' });
    expect(oneHost.results).to.deep.equal([6, 6, 6, 6]);
    expect(oneHost.stdout + oneHost.stderr).to.match(/: broadcast\(root 0\) \S+, /).and.not.to.match(/hierarchical/);
  });

  it('spinning is off where the hosts on one kernel (CCJS_HOST, containers) together run more endpoints than it has cores', async function () {
    const cores = os.availableParallelism();
    if (cores < 2 || cores > 8) this.skip(); // pairs of endpoints per host, and a job of at most 10 processes
    // Two endpoints per host (shared memory between them, a polling device) and cores + 1 or + 2 in all.
    const hosts = Array.from({ length: 2 * Math.ceil((cores + 1) / 2) }, (_, process) => `h${Math.floor(process / 2)}`);
    const crowded = await runScenario(hosts.length, 1, 'spinning', hostsOf(hosts));
    expect(crowded.results).to.deep.equal(hosts.map(() => false));
    const roomy = await runScenario(2, 1, 'spinning', hostsOf(['h0', 'h0']));
    expect(roomy.results).to.deep.equal([true, true]);
  });
});
