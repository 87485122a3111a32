/**
 * Collectives through the collective segment (src/collectives/segment/) in a job: every collective
 * on the member counts of `args.sizes`, spread over the endpoints; values larger than a chunk and
 * empty ones; and the messages the engine sent for calls with the built-in selection (none, but
 * the segment's setup on a group's first call).
 */
import { expect } from 'chai';
import type { ColGroup, ColGroupMaster, ColMember } from '../../src/index.js';
import { COLLECTIVES } from '../../src/collectives/algorithms.js';
import { Reductions } from '../../reduction/index.js';
import { DividableArray } from '../../dividable/index.js';
import { PAYLOADS, exercise, type PayloadKind } from '../exercise.js';
import { longStreamsRead } from '../../src/collectives/segment/transfer.js';
import { runHere, spread } from './members.js';

let counter = 0;

/** Several MiB and empty values through every collective that moves data, checked. */
export async function largeAndEmpty(member: ColMember, group: ColGroup, rank: number, elements: number): Promise<void> {
  const size = group.size();
  const options = { algorithm: 'shared-memory' } as never;
  const make = (from: number, length = elements) => Float64Array.from({ length }, (_, i) => from * 1000 + (i % 997));
  for (const root of new Set([0, size - 1])) {
    const value = await member.broadcast(group, rank === root ? make(root) : null, root, options);
    expect(Array.from(value as Float64Array)).to.deep.equal(Array.from(make(root)));
    const empty = await member.broadcast(group, rank === root ? new Float64Array(0) : null, root, options);
    expect((empty as Float64Array).length).to.equal(0);
    const reduced = await member.reduce(group, make(rank), Reductions.SUM, root, options);
    if (rank === root) expect(Array.from(reduced as Float64Array)).to.deep.equal(Array.from(sum(size, make)));
    const gathered = await member.gather(group, rank === root ? new DividableArray(new Array(size)) : null, [make(rank, elements / 8)], root, options);
    if (rank === root) expect((gathered?.array as Float64Array[]).map((array) => array.length)).to.deep.equal(Array(size).fill(elements / 8));
    const scattered = await member.scatter(group, rank === root ? new DividableArray(Array.from({ length: size }, (_, to) => make(to, elements / 8))) : null, root, options);
    expect(Array.from((scattered as Float64Array[])[0] as Float64Array)).to.deep.equal(Array.from(make(rank, elements / 8)));
  }
  const all = await member.allReduce(group, make(rank), Reductions.SUM, options);
  expect(Array.from(all)).to.deep.equal(Array.from(sum(size, make)));
  expect((await member.allReduce(group, new Float64Array(0), Reductions.SUM, options)).length).to.equal(0);
  const ints = await member.allReduce(group, Int32Array.from({ length: elements }, (_, i) => rank + i), Reductions.MAX, options);
  expect(ints[elements - 1]).to.equal(size - 1 + elements - 1);
  const gatheredAll = await member.allGather(group, new DividableArray(new Array(size)), [make(rank, elements / 4)], options);
  gatheredAll.array.forEach((array, from) => expect((array as Float64Array)[1]).to.equal(from * 1000 + 1));
  const exchanged = await member.allToAll(group, new DividableArray(Array.from({ length: size }, (_, to) => make(rank * size + to, elements / 16))), new DividableArray(new Array(size)), options);
  exchanged.array.forEach((array, from) => expect((array as Float64Array)[0]).to.equal((from * size + rank) * 1000));
  const prefix = await member.scan(group, make(rank), Reductions.SUM, options);
  expect(prefix[3]).to.equal(sum(rank + 1, make)[3]);
}

function sum(count: number, make: (from: number) => Float64Array): Float64Array {
  const total = make(0);
  for (let from = 1; from < count; from += 1) make(from).forEach((value, i) => (total[i] = (total[i] as number) + value));
  return total;
}

/** Every collective with 'shared-memory' on each member count of args.sizes, then large and empty values on args.largeSizes. */
export async function collectiveSegment(master: ColGroupMaster, args: Record<string, unknown>): Promise<string[]> {
  const done: string[] = [];
  for (const size of args['sizes'] as number[]) {
    await runHere(master, spread(size, master.size), `segment-${counter++}`, async (member, group, rank) => {
      for (const collective of COLLECTIVES) for (const kind of Object.keys(PAYLOADS) as PayloadKind[]) await exercise(collective, 'shared-memory', member, group, rank, kind);
    });
    done.push(`every collective on ${size}`);
  }
  for (const size of (args['largeSizes'] as number[] | undefined) ?? []) {
    const before = { ...longStreamsRead };
    await runHere(master, spread(size, master.size), `segment-large-${counter++}`, (member, group, rank) => largeAndEmpty(member, group, rank, Number(args['elements'])));
    // This endpoint's members read long streams: how they came.
    const ways = [longStreamsRead.byAddress > before.byAddress ? 'by address' : undefined, longStreamsRead.throughChunks > before.throughChunks ? 'through chunks' : undefined];
    done.push(`large and empty on ${size}, read ${ways.filter((way) => way !== undefined).join(' and ')}`);
  }
  return done;
}

/** One call of each collective with the built-in selection: the messages that this endpoint's engine sent for the first calls of a group (the setup) and for the calls after, and each call's result checked. */
export async function defaultCounts(master: ColGroupMaster, args: Record<string, unknown>): Promise<{ setup: number; calls: number }> {
  const size = Number(args['size']);
  const counts = { setup: 0, calls: 0 };
  const sent = () => master.messageCounts().sameHost.messages + master.messageCounts().otherHost.messages;
  // The setup's messages all went out once any member passed the first barrier (the lowest rank sends them before it arrives).
  const before = sent();
  await runHere(master, spread(size, master.size), `segment-counts-${counter++}`, async (member, group, rank) => {
    await member.barrier(group);
    counts.setup = sent() - before;
    const start = sent();
    for (let round = 0; round < 3; round += 1) await everyCollective(member, group, rank, size);
    await member.barrier(group);
    counts.calls = sent() - start;
  });
  return counts;
}

async function everyCollective(member: ColMember, group: ColGroup, rank: number, size: number): Promise<void> {
  const ranks = Array.from({ length: size }, (_, index) => index);
  await member.barrier(group);
  expect(await member.broadcast(group, rank === 0 ? { from: 0 } : null, 0)).to.deep.equal({ from: 0 });
  expect(await member.reduce(group, rank, Reductions.SUM, size - 1)).to.equal(rank === size - 1 ? (size * (size - 1)) / 2 : null);
  expect(Array.from(await member.allReduce(group, new Float64Array([rank, 1]), Reductions.SUM))).to.deep.equal([(size * (size - 1)) / 2, size]);
  expect(await member.scatter(group, rank === 0 ? new DividableArray(ranks) : null, 0)).to.deep.equal([rank]);
  const gathered = await member.gather(group, rank === 0 ? new DividableArray(new Array(size)) : null, [rank], 0);
  if (rank === 0) expect(gathered?.array).to.deep.equal(ranks);
  expect((await member.allGather(group, new DividableArray(new Array(size)), [rank])).array).to.deep.equal(ranks);
  expect((await member.allToAll(group, new DividableArray(ranks.map((to) => rank * size + to)), new DividableArray(new Array(size)))).array).to.deep.equal(ranks.map((from) => from * size + rank));
  expect(await member.reduceScatter(group, new DividableArray(ranks.map((to) => rank + to)), (a: number[], b: number[]) => a.map((x, i) => x + (b[i] as number)))).to.deep.equal([(size * (size - 1)) / 2 + size * rank]);
  expect(await member.scan(group, rank, Reductions.SUM)).to.equal((rank * (rank + 1)) / 2);
}
