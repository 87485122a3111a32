/**
 * Single copy through a collective segment (src/collectives/segment/transfer.ts): a stream larger
 * than SINGLE_COPY_BYTES is lent by reference, and each reader copies it straight from its
 * writer's memory; smaller ones go through the segment's chunks. Members in one process (the
 * addon copies with memcpy there; between processes with process_vm_readv, which
 * collective-segment.spec's large values over processes cover).
 */
import { expect } from 'chai';
import { Reductions } from '../reduction/index.js';
import { mastersForSuite, runGroup } from './harness.js';
import { shmNative } from '../transport/shm/native.js';
import { singleCopies } from '../src/collectives/segment/transfer.js';
import { SINGLE_COPY_BYTES } from '../transport/shm/single-copy.js';

describe('single copy through a collective segment', function () {
  before(function () {
    if (typeof shmNative() === 'string') this.skip();
  });
  const masters = mastersForSuite(1);
  const options = { algorithm: 'shared-memory' } as const;
  const elements = (2 * SINGLE_COPY_BYTES) / 8;

  it('lends a large broadcast value: the root once, each other member reads it from the root; the root may change it after the call', async function () {
    const before = { ...singleCopies };
    const results = await runGroup(masters(), [3], 'single-copy-broadcast', async (member, group, rank) => {
      // Every member says whether it may read the others' memory on the group's first call.
      await member.barrier(group, options);
      const value = new Float64Array(elements).map((_, index) => index + 0.5);
      const first = (await member.broadcast(group, rank === 1 ? value : null, 1, options)) as Float64Array;
      const read = { first: Array.from(first.subarray(elements - 2)), length: first.length };
      value.fill(-1);
      const second = await member.broadcast(group, rank === 1 ? value : null, 1, options);
      return { ...read, second: (second as Float64Array)[0] };
    });
    for (const { first, second, length } of results) {
      expect(length).to.equal(elements);
      expect(first).to.deep.equal([elements - 1.5, elements - 0.5]);
      expect(second).to.equal(-1);
    }
    expect(singleCopies.lent - before.lent).to.equal(2);
    expect(singleCopies.read - before.read).to.equal(4);
  });

  it('lends a large object (serialized once), and copies small values through the chunks', async function () {
    const large = { name: 'rows', rows: Array.from({ length: elements }, (_, index) => index + 0.25) };
    const before = { ...singleCopies };
    const results = await runGroup(masters(), [2], 'single-copy-objects', async (member, group, rank) => {
      await member.barrier(group, options);
      const object = await member.broadcast(group, rank === 0 ? large : null, 0, options);
      const small = await member.allReduce(group, rank + 1, Reductions.SUM, options);
      return { object, small };
    });
    for (const { object, small } of results) {
      expect(object).to.deep.equal(large);
      expect(small).to.equal(3);
    }
    expect(singleCopies.lent - before.lent).to.equal(1);
    expect(singleCopies.read - before.read).to.equal(1);
  });
});
