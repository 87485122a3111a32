/**
 * Jobs whose endpoints are worker threads (and processes with threads), started by ccjrun
 * --threads: the point-to-point and algorithm checks of the in-process suites, run by every
 * endpoint of real jobs (spec/scenarios/).
 */
import { expect } from 'chai';
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import { runScenario } from './harness.js';
import { COLLECTIVE_CHECKS } from './collective-checks.js';

const TOPOLOGIES = [
  { processes: 1, threads: 3 },
  { processes: 2, threads: 2 },
] as const;

for (const { processes, threads } of TOPOLOGIES) {
  describe(`a job of ${processes} process(es) × ${threads} threads`, function () {
    const endpoints = processes * threads;

    it('carries every payload through sendSync, sendAsync, sendReceive and rendezvous, with both serializers', async function () {
      for (const serializer of ['msgpack', 'v8']) {
        const { results } = await runScenario(processes, threads, 'payloads', { v8: serializer === 'v8' }, { CCJS_SERIALIZER: serializer });
        expect(results).to.have.lengthOf(endpoints);
      }
    });

    it('keeps the order of 10,000 messages per (sender, receiver, tag), with tags and ANY_TAG interleaved, two members per endpoint', async function () {
      const results = (await runScenario(processes, threads, 'ordering', { perEndpoint: 2, count: 10_000 })).results as number[][];
      expect(results.flat()).to.deep.equal(new Array(2 * endpoints).fill(10_000));
    });

    it('farms out tasks with ANY_SOURCE, ANY_TAG and probe', async function () {
      const results = (await runScenario(processes, threads, 'farm', { perEndpoint: 2, tasks: 300 })).results as (number[] | null)[][];
      const tally = results[0]?.[0] as number[];
      expect(tally.reduce((a, b) => a + b, 0)).to.equal(300);
      expect(tally[0]).to.equal(0);
    });

    it('passes the collectives suite: every collective, payload kind and root on 1..9 members', async function () {
      const results = (await runScenario(processes, threads, 'collectives')).results as string[][];
      expect(results[0]).to.have.lengthOf(9 * COLLECTIVE_CHECKS.length);
    });

    for (const collective of COLLECTIVES) {
      it(`${collective}: every algorithm on 1..9 members spread over the endpoints`, async function () {
        const results = (await runScenario(processes, threads, 'algorithms', { collectives: [collective] })).results as string[][];
        expect(results[0]).to.deep.equal(Object.keys(ALGORITHMS[collective]).map((algorithm) => `${collective} ${algorithm}`));
      });
    }
  });
}
