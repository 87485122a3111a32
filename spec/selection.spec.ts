import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../src/index.js';
import type { ColGroup, ColMember } from '../src/index.js';
import { resolveConfig } from '../src/runtime/config.js';
import { Reductions } from '../reduction/index.js';
import { DividableArray } from '../dividable/index.js';
import type { ReductionObject } from '../reduction/index.js';
import { closeAll, createMasters, runGroup } from './harness.js';
import { Selector, checkTable } from '../src/collectives/selection.js';

/** Runs `body` in a group of `size` members in one process whose master uses `options`, collecting trace lines. */
async function traced(size: number, options: Parameters<typeof createMasters>[1], body: (member: ColMember, group: ColGroup, rank: number) => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const masters = await createMasters(1, { ...options, trace: (line: string) => lines.push(line) });
  try {
    await runGroup(masters, [size], 'traced', body);
  } finally {
    await closeAll(masters);
  }
  return lines;
}

const chosen = (lines: string[], collective: string) => lines.filter((line) => line.includes(`: ${collective}(`)).map((line) => /\) (\S+),/.exec(line)?.[1]);

/** A fresh directory for a config file, removed after the suite. */
const configDirectories: string[] = [];
function configDirectory(): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-selection-'));
  configDirectories.push(directory);
  return directory;
}

describe('algorithm selection', function () {
  after(function () {
    for (const directory of configDirectories.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
  });

  it('follows the built-in table without configuration, and traces each call', async function () {
    const lines = await traced(3, {}, async (member, group) => {
      await member.allReduce(group, 1, Reductions.SUM);
      await member.broadcast(group, 'x', 0);
    });
    // The built-in table: members of one host (here one endpoint) go through their collective segment.
    expect(chosen(lines, 'allReduce')).to.deep.equal(['shared-memory', 'shared-memory', 'shared-memory']);
    expect(lines[0]).to.match(/^ccjs trace: devices of endpoint 0 \(host .*\n  → endpoint 0 \(process 0, thread 0\): local \(same endpoint\)$/);
    expect(lines[1]).to.match(/^ccjs trace: group 'traced' rank \d: allReduce\(SUM\) shared-memory, 0 bytes, 3 members$/);
  });

  it('lets a config file choose by message size and member count', async function () {
    const directory = configDirectory();
    const file = path.join(directory, 'ccjs.config.json');
    const table = {
      broadcast: [{ maxBytes: 1024, algorithm: 'flat-nonblocking' }, { maxMembers: 2, algorithm: 'mst' }, { algorithm: 'pipeline-chain' }],
    };
    fs.writeFileSync(file, JSON.stringify({ collectives: table }));
    expect(resolveConfig({ config: file }, {}).collectives).to.deep.equal(table);
    const broadcastWith = (size: number, bytes: number) =>
      traced(size, { config: file }, async (member, group, rank) => {
        // Every member passes a same-sized value (MPI's convention), so all choose alike.
        await member.broadcast(group, new Uint8Array(bytes).fill(rank), 0);
      });
    expect(chosen(await broadcastWith(3, 16), 'broadcast')).to.deep.equal(['flat-nonblocking', 'flat-nonblocking', 'flat-nonblocking']);
    expect(chosen(await broadcastWith(2, 4096), 'broadcast')).to.deep.equal(['mst', 'mst']);
    expect(chosen(await broadcastWith(3, 4096), 'broadcast')).to.deep.equal(['pipeline-chain', 'pipeline-chain', 'pipeline-chain']);
  });

  it('lets non-roots that pass null take the root\'s choice from a size-dependent table (tuning never changes results)', async function () {
    const directory = configDirectory();
    const file = path.join(directory, 'ccjs.config.json');
    const table = {
      broadcast: [{ maxBytes: 1024, algorithm: 'flat-nonblocking' }, { algorithm: 'scatter-allgather' }],
      scatter: [{ maxBytes: 64, algorithm: 'flat-blocking' }, { algorithm: 'binomial' }],
    };
    fs.writeFileSync(file, JSON.stringify({ collectives: table }));
    for (const [bytes, broadcastAlgorithm, scatterAlgorithm] of [[16, 'flat-nonblocking', 'flat-blocking'], [65536, 'scatter-allgather', 'binomial']] as const) {
      const size = 5;
      const lines = await traced(size, { config: file }, async (member, group, rank) => {
        for (let root = 0; root < size; root += 1) {
          const value = rank === root ? new Float64Array(bytes / 8).fill(root + 1) : null;
          const received = await member.broadcast(group, value, root);
          expect(received).to.deep.equal(new Float64Array(bytes / 8).fill(root + 1));
          const blocks = rank === root ? new DividableArray(new Float64Array((bytes / 8) * size).map((_, index) => index)) : null;
          const block = await member.scatter<Float64Array>(group, blocks, root);
          expect(Array.from(block)).to.deep.equal(Array.from({ length: bytes / 8 }, (_, index) => rank * (bytes / 8) + index));
        }
      });
      expect(new Set(chosen(lines, 'broadcast'))).to.deep.equal(new Set([broadcastAlgorithm]));
      expect(new Set(chosen(lines, 'scatter'))).to.deep.equal(new Set([scatterAlgorithm]));
      expect(lines.filter((line) => line.includes("the root's choice")).length).to.equal(2 * 5 * 4);
    }
  });

  it('takes per-call over per-group over CCJS_ALGORITHMS over the tables', async function () {
    const lines = await traced(3, { algorithms: 'barrier=dissemination' }, async (member, group) => {
      await member.barrier(group);
      group.setAlgorithm('barrier', 'gather-broadcast');
      await member.barrier(group);
      await member.barrier(group, { algorithm: 'hypercube' });
      group.setAlgorithm('barrier', undefined);
      await member.barrier(group);
    });
    const perCall = chosen(lines, 'barrier');
    for (const [index, expected] of ['dissemination', 'gather-broadcast', 'hypercube', 'dissemination'].entries()) {
      expect(perCall.slice(index * 3, index * 3 + 3)).to.deep.equal([expected, expected, expected]);
    }
    expect(resolveConfig({}, { CCJS_ALGORITHMS: 'allReduce=ring, scan=linear' }).algorithms).to.deep.equal({ allReduce: 'ring', scan: 'linear' });
  });

  it('runs only rank-order algorithms for a non-commutative reduction', async function () {
    const concatenate: ReductionObject<string> = { name: 'concatenate', reduce: (a, b) => a + b, commutative: false };
    const lines = await traced(5, { collectives: { allReduce: [{ algorithm: 'ring' }, { algorithm: 'reduce-broadcast' }] } }, async (member, group, rank) => {
      expect(await member.allReduce(group, String(rank), concatenate)).to.equal('01234');
      expect(await member.allReduce(group, rank, Reductions.SUM)).to.equal(10);
    });
    expect(new Set(chosen(lines.filter((line) => line.includes('concatenate')), 'allReduce'))).to.deep.equal(new Set(['reduce-broadcast']));
    expect(new Set(chosen(lines.filter((line) => line.includes('SUM')), 'allReduce'))).to.deep.equal(new Set(['ring']));
  });

  it('rejects unknown algorithms and collectives with a ConfigError naming the valid ones', async function () {
    expect(() => resolveConfig({ collectives: { allReduce: [{ algorithm: 'telepathy' }] } }, {})).to.throw(ConfigError, /'telepathy' is not an algorithm of allReduce; valid: .*ring/);
    expect(() => resolveConfig({ collectives: { allreduce: [{ algorithm: 'ring' }] } as never }, {})).to.throw(ConfigError, /unknown collective 'allreduce'; valid: barrier, broadcast/);
    expect(() => resolveConfig({ collectives: { allReduce: [{ algorithm: 'reduce-broadcast', maxBytes: -1 }] } }, {})).to.throw(ConfigError, /maxBytes must be a non-negative integer/);
    expect(() => resolveConfig({ collectives: { allReduce: [{ algorithm: 'reduce-broadcast', max: 3 }] } as never }, {})).to.throw(ConfigError, /unknown key 'max'/);
    expect(() => resolveConfig({}, { CCJS_ALGORITHMS: 'allReduce=warp' })).to.throw(ConfigError, /CCJS_ALGORITHMS: 'warp' is not an algorithm of allReduce/);
    expect(() => resolveConfig({}, { CCJS_ALGORITHMS: 'allReduce' })).to.throw(ConfigError, /CCJS_ALGORITHMS entry 'allReduce' is not <collective>=<algorithm>/);
    await traced(1, {}, async (_member, group) => {
      // @ts-expect-error: a JavaScript caller's typo, which only the run-time check can catch
      expect(() => group.setAlgorithm('broadcast', 'smoke-signals')).to.throw(ConfigError, /group 'traced': 'smoke-signals' is not an algorithm of broadcast/);
    });
    const concatenate: ReductionObject<string> = { reduce: (a, b) => a + b, commutative: false };
    await traced(1, {}, async (member, group) => {
      // @ts-expect-error: a JavaScript caller's typo, which only the run-time check can catch
      await member.allReduce(group, 'a', concatenate, { algorithm: 'nonsense' }).then(
        () => expect.fail('unknown algorithm accepted'),
        (error: Error) => expect(error).to.be.instanceOf(ConfigError).with.property('message').that.matches(/allReduce option 'algorithm': 'nonsense' is not an algorithm of allReduce/),
      );
    });
  });

  it('keys rules on hosts and members per host; tables without those keys fit any layout', function () {
    const table = checkTable({ broadcast: [{ minHosts: 2, maxPerHost: 3, algorithm: 'mst' }, { maxHosts: 1, minPerHost: 4, algorithm: 'flat-blocking' }, { algorithm: 'four-ary' }] }, 'the table');
    const selector = new Selector(table, {}, undefined);
    const choose = (hosts: number, perHost: number) => selector.select('broadcast', { bytes: 8, members: 6, commutative: true, requested: undefined, layout: { hosts, perHost } }).name;
    expect([choose(2, 3), choose(3, 4), choose(1, 6), choose(1, 3)]).to.deep.equal(['mst', 'four-ary', 'flat-blocking', 'four-ary']);
    const old = new Selector(checkTable({ broadcast: [{ maxMembers: 4, algorithm: 'mst' }, { algorithm: 'binomial' }] }, 'an old table'), {}, undefined);
    expect(old.select('broadcast', { bytes: 8, members: 6, commutative: true, requested: undefined, layout: { hosts: 3, perHost: 2 } }).name).to.equal('binomial');
    expect(() => checkTable({ broadcast: [{ hosts: 2, algorithm: 'mst' }] }, 'the table')).to.throw(ConfigError, /unknown key 'hosts'; valid keys: maxBytes, maxMembers, minHosts, maxHosts, minPerHost, maxPerHost, algorithm/);
    expect(() => checkTable({ broadcast: [{ minHosts: -1, algorithm: 'mst' }] }, 'the table')).to.throw(ConfigError, /minHosts must be a non-negative integer/);
  });

  it('refuses hierarchical reduce and allReduce for a non-commutative reduction, saying why, and never runs a hierarchical variant as a level', function () {
    const selector = new Selector(undefined, {}, undefined);
    const layout = { hosts: 2, perHost: 3 };
    const commutative = selector.select('allReduce', { bytes: 8, members: 5, commutative: true, requested: undefined, layout });
    expect(commutative.name).to.equal('hierarchical');
    const ordered = selector.select('allReduce', { bytes: 8, members: 5, commutative: false, requested: 'hierarchical', layout });
    expect(ordered.algorithm.keepsRankOrder).to.equal(true);
    expect(ordered.refused).to.match(/hierarchical refused: it does not combine in rank order/);
    // A level is chosen from the table without its hierarchical rule, even where that rule fits.
    expect(selector.selectLevel('broadcast', { bytes: 8, members: 5, commutative: true, requested: undefined, layout }).name).to.equal('binomial');
    expect(selector.select('broadcast', { bytes: 8, members: 5, commutative: true, requested: undefined, layout: { hosts: 5, perHost: 1 } }).name).to.equal('binomial');
  });
});
