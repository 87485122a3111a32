/**
 * Real jobs of processes and worker threads (ccjrun -n P --threads T) over each device between
 * endpoints: the point-to-point and algorithm checks of the in-process suites, run by every
 * endpoint (spec/scenarios/). Shared memory between threads (1 × 4), between processes (3 × 1)
 * and both (2 × 2); TCP between processes and between threads; UCX (forced: it otherwise serves
 * other hosts) over its TCP and its shared-memory transports, between processes and threads; TCP
 * encrypted with TLS (CCJS_TLS=1).
 */
import { expect } from 'chai';
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import { runScenario } from './harness.js';
import { COLLECTIVE_CHECKS } from './collective-checks.js';
import { ucxMissing } from '../transport/ucx/native.js';

const TOPOLOGIES: readonly { processes: number; threads: number; transport: string; ucxTls?: string; tls?: boolean }[] = [
  { processes: 1, threads: 4, transport: 'shm' },
  { processes: 3, threads: 1, transport: 'shm' },
  { processes: 2, threads: 2, transport: 'shm' },
  { processes: 3, threads: 1, transport: 'tcp' },
  { processes: 2, threads: 2, transport: 'tcp' },
  { processes: 3, threads: 1, transport: 'tcp', tls: true },
  { processes: 3, threads: 1, transport: 'ucx', ucxTls: 'tcp' },
  { processes: 3, threads: 1, transport: 'ucx', ucxTls: 'sm' },
  { processes: 2, threads: 2, transport: 'ucx', ucxTls: 'tcp' },
];

for (const { processes, threads, transport, ucxTls, tls } of TOPOLOGIES) {
  describe(`a job of ${processes} process(es) × ${threads} thread(s) over ${transport}${ucxTls ? ` (UCX_TLS=${ucxTls})` : ''}${tls ? ' with TLS' : ''}`, function () {
    const endpoints = processes * threads;
    const transportEnv = { CCJS_TRANSPORT: transport, ...(ucxTls === undefined ? {} : { UCX_TLS: ucxTls }), ...(tls ? { CCJS_TLS: '1' } : {}) };
    const job = (name: string, args: object = {}, env: NodeJS.ProcessEnv = {}) => runScenario(processes, threads, name, args, { ...transportEnv, ...env });

    before(function () {
      const missing = ucxTls === undefined ? undefined : ucxMissing();
      if (missing !== undefined) {
        console.warn(`    skipped: ${missing}`);
        this.skip();
      }
    });

    it(`serves every pair of endpoints with ${transport}${tls ? ', every link encrypted' : ''}`, async function () {
      const { results, stderr } = await job('devices', {}, tls ? { CCJS_TRACE: '1' } : {});
      const tables = results as string[];
      expect(tables).to.have.lengthOf(endpoints);
      for (const table of tables) {
        const devices = [...table.matchAll(/: (\w+) \((same process|same host)\)/g)].map((match) => match[1]);
        expect(devices, table).to.deep.equal(new Array(endpoints - 1).fill(transport));
      }
      if (tls) {
        // Both ends of every link say it is encrypted.
        const links = [...stderr.matchAll(/tcp endpoint (\d+) ↔ endpoint (\d+): TLSv1\.2 TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256/g)].map((match) => `${match[1]}-${match[2]}`);
        expect(links.sort(), stderr).to.have.lengthOf(endpoints * (endpoints - 1));
        expect(new Set(links).size).to.equal(endpoints * (endpoints - 1));
      }
    });

    it('carries every payload through sendSync, sendAsync, sendReceive and rendezvous, with both serializers', async function () {
      for (const serializer of ['msgpack', 'v8']) {
        const { results } = await job('payloads', { v8: serializer === 'v8' }, { CCJS_SERIALIZER: serializer });
        expect(results).to.have.lengthOf(endpoints);
      }
    });

    it('receives binary messages of every protocol into the receivers\' buffers, and fails those that cannot go there', async function () {
      const results = (await job('receiveInto')).results as number[][];
      expect(results.flat()).to.deep.equal(Array.from({ length: endpoints }, (_, rank) => ((rank ^ 1) < endpoints && rank % 2 === 1 ? 24 : 0)));
    });

    it('keeps the order of 10,000 messages per (sender, receiver, tag), with tags and ANY_TAG interleaved, two members per endpoint', async function () {
      const results = (await job('ordering', { perEndpoint: 2, count: 10_000 })).results as number[][];
      expect(results.flat()).to.deep.equal(new Array(2 * endpoints).fill(10_000));
    });

    it('farms out tasks with ANY_SOURCE, ANY_TAG and probe', async function () {
      const results = (await job('farm', { perEndpoint: 2, tasks: 300 })).results as (number[] | null)[][];
      const tally = results[0]?.[0] as number[];
      expect(tally.reduce((a, b) => a + b, 0)).to.equal(300);
      expect(tally[0]).to.equal(0);
    });

    it('passes the collectives suite: every collective, payload kind and root on 1..9 members', async function () {
      const results = (await job('collectives')).results as string[][];
      expect(results[0]).to.have.lengthOf(9 * COLLECTIVE_CHECKS.length);
    });

    for (const collective of COLLECTIVES) {
      it(`${collective}: every algorithm on 1..9 members spread over the endpoints`, async function () {
        const results = (await job('algorithms', { collectives: [collective] })).results as string[][];
        expect(results[0]).to.deep.equal(Object.keys(ALGORITHMS[collective]).map((algorithm) => `${collective} ${algorithm}`));
      });
    }
  });
}
