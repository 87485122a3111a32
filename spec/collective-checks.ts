/**
 * What every collective must do on any member count, checked by each member: the bodies of the
 * collectives suite (spec/collectives.spec.ts), shared with the jobs over threads and processes
 * (spec/scenarios/). Every check compares with a sequential reference.
 */
import { expect } from 'chai';
import { CCJError, CollectiveMismatchError } from '../src/index.js';
import type { ColMember, ColGroup } from '../src/index.js';
import { algorithmNames } from '../src/collectives/algorithms.js';
import { Reductions, toReductionObject } from '../reduction/index.js';
import type { ReductionLike, ReductionObject } from '../reduction/index.js';
import { DenseMatrix, DividableArray, SparseMatrix } from '../dividable/index.js';
import type { DividableData } from '../dividable/index.js';
import { Point, Unbuildable, expectSame } from './payloads.js';

/** Values a root broadcasts: a number, an object graph, a registered class, empty and 1 MiB arrays. */
const BROADCAST_PAYLOADS: readonly { name: string; make: (root: number) => unknown }[] = [
  { name: 'number', make: (root) => root * 10 + 0.5 },
  { name: 'object graph', make: (root) => ({ root, list: [1, 'two', { three: 3 }], nested: { deep: [null, true, 'Grüße'] } }) },
  { name: 'registered class', make: (root) => new Point(root, -root, `p${root}`) },
  { name: 'empty Float64Array', make: () => new Float64Array(0) },
  { name: '1 MiB Float64Array', make: (root) => Float64Array.from({ length: 131072 }, (_, i) => i + root) },
];

class PointSum implements ReductionObject<Point> {
  reduce(a: Point, b: Point): Point {
    return new Point(a.x + b.x, a.y + b.y, 'sum');
  }
}

export const concatenate: ReductionObject<string> = { reduce: (a: string, b: string) => `${a},${b}`, commutative: false, name: 'concatenate' };

interface ReductionCase {
  readonly name: string;
  readonly contribution: (rank: number) => unknown;
  readonly op: ReductionLike<unknown>;
}

/** A reduction of each member's contribution, its operand type erased so cases fit one list. */
function reductionCase<T>(name: string, contribution: (rank: number) => T, op: ReductionLike<T>): ReductionCase {
  return { name, contribution, op: op as unknown as ReductionLike<unknown> };
}

interface Tally {
  count: number;
  max: number;
  tags: string[];
}

const REDUCTIONS: readonly ReductionCase[] = [
  reductionCase('SUM of numbers', (rank) => rank + 1, Reductions.SUM),
  reductionCase('SUM of 1 MiB Float64Arrays', (rank) => new Float64Array(131072).fill(rank + 1), Reductions.SUM),
  reductionCase('SUM of empty Float64Arrays', () => new Float64Array(0), Reductions.SUM),
  reductionCase('a function on object graphs', (rank): Tally => ({ count: 1, max: rank, tags: ['t'] }), (a: Tally, b: Tally) => ({ count: a.count + b.count, max: Math.max(a.max, b.max), tags: a.tags })),
  reductionCase('a ReductionObject on a registered class', (rank) => new Point(rank, 2 * rank, 'r'), new PointSum()),
  reductionCase('a non-commutative concatenation', (rank) => String(rank), concatenate),
];

/** The reference result: a plain left fold in rank order. */
function sequentialFold(reduction: ReductionCase, size: number): unknown {
  const op = toReductionObject(reduction.op, 'fold');
  let result = reduction.contribution(0);
  for (let rank = 1; rank < size; rank += 1) result = op.reduce(result, reduction.contribution(rank));
  return result;
}

/** Dividable objects of a size that splits unevenly over `size` members. */
function dividables(size: number) {
  const dense = new DenseMatrix(size + 2, 3, Float64Array.from({ length: (size + 2) * 3 }, (_, i) => i * 1.5));
  const sparseSource = new DenseMatrix(2 * size + 1, 5, Float64Array.from({ length: (2 * size + 1) * 5 }, (_, i) => (i % 3 === 0 ? i : 0)));
  const kinds: { name: string; whole: () => DividableData; empty: () => DividableData }[] = [
    { name: 'DividableArray of a plain array', whole: () => new DividableArray(Array.from({ length: 2 * size + 3 }, (_, i) => `e${i}`)), empty: () => new DividableArray(new Array<string>(2 * size + 3).fill('')) },
    { name: 'DividableArray of a Float64Array', whole: () => new DividableArray(Float64Array.from({ length: 3 * size + 1 }, (_, i) => i / 4)), empty: () => new DividableArray(new Float64Array(3 * size + 1)) },
    { name: 'DenseMatrix', whole: () => new DenseMatrix(dense.rows, dense.cols, dense.data.slice()), empty: () => new DenseMatrix(dense.rows, dense.cols) },
    { name: 'SparseMatrix', whole: () => SparseMatrix.fromDense(sparseSource), empty: () => SparseMatrix.fromDense(new DenseMatrix(sparseSource.rows, sparseSource.cols)) },
  ];
  return kinds;
}

/** A user DividableData whose elements are whatever each index holds. */
class Mailbox implements DividableData<Float64Array> {
  constructor(readonly elements: Float64Array[]) {}

  elementAt(index: number): Float64Array {
    return this.elements[index];
  }

  setElementAt(index: number, _size: number, element: Float64Array): void {
    this.elements[index] = element;
  }
}

/** Comparable form of a dividable object. */
function contents(object: unknown): unknown {
  if (object instanceof DividableArray) return ArrayBuffer.isView(object.array) ? Array.from(object.array as Float64Array) : object.array;
  if (object instanceof SparseMatrix) return Array.from(object.toDense().data);
  if (object instanceof DenseMatrix) return Array.from(object.data);
  return object;
}

/** The error a call rejected with, or undefined if it resolved. */
export async function failureOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return error;
  }
}

/**
 * After a collective that went wrong: each member either failed with `kind`, or its own part was
 * consistent and completed (members that exchanged data with one that disagreed fail); together
 * they caught it, and none hangs.
 */
async function expectCaught(member: ColMember, group: ColGroup, error: unknown, kind: abstract new (...args: never[]) => Error, what: string): Promise<void> {
  if (error !== undefined) expect(error, what).to.be.instanceOf(kind);
  const failures = await member.allReduce(group, error === undefined ? 0 : 1, Reductions.SUM);
  expect(failures, `members that failed: ${what}`).to.be.at.least(1);
}

class RefusedError extends Error {}

/** The four rooted collectives, each called with `root` (data that fits any algorithm). */
const ROOTED_CALLS: readonly { name: string; call: (member: ColMember, group: ColGroup, rank: number, size: number, root: number) => Promise<unknown> }[] = [
  { name: 'broadcast', call: (member, group, rank, _size, root) => member.broadcast(group, rank === root ? { from: root } : null, root) },
  { name: 'reduce', call: (member, group, rank, _size, root) => member.reduce(group, rank, Reductions.SUM, root) },
  { name: 'scatter', call: (member, group, rank, size, root) => member.scatter(group, rank === root ? new DividableArray(Array.from({ length: size }, (_, i) => i)) : null, root) },
  { name: 'gather', call: (member, group, rank, size, root) => member.gather(group, rank === root ? new DividableArray(new Array<number>(size).fill(0)) : null, rank, root) },
];

/** Roots that members disagree on (on two or more members): patterns that once passed silently or hung. */
const MISMATCHED_ROOTS: readonly { name: string; rootOf: (rank: number, size: number) => number }[] = [
  { name: 'rank 0 says 0, the others 1', rootOf: (rank) => (rank === 0 ? 0 : 1) },
  { name: 'every member names itself', rootOf: (rank) => rank },
  { name: 'each names the rank two below', rootOf: (rank, size) => (rank - 2 + 2 * size) % size },
  { name: 'only the last member differs', rootOf: (rank, size) => (rank === size - 1 ? 0 : size - 1) },
];

/** A member's part in one check; `size` is the group's. */
export interface CollectiveCheck {
  readonly name: string;
  readonly body: (member: ColMember, group: ColGroup, rank: number, size: number) => Promise<void>;
}

export const COLLECTIVE_CHECKS: readonly CollectiveCheck[] = [
  {
    name: 'mismatched roots fail at every member with CollectiveMismatchError, and the group goes on',
    body: async (member, group, rank, size) => {
      if (size < 2) return;
      for (const { call, name } of ROOTED_CALLS) {
        for (const pattern of MISMATCHED_ROOTS) {
          const roots = Array.from({ length: size }, (_, r) => pattern.rootOf(r, size));
          if (roots.every((root) => root === roots[0])) continue;
          const error = await failureOf(call(member, group, rank, size, roots[rank] as number));
          await expectCaught(member, group, error, CollectiveMismatchError, `${name}, ${pattern.name}`);
        }
        expect(await member.broadcast(group, rank === size - 1 ? name : null, size - 1)).to.equal(name);
      }
    },
  },
  {
    name: 'a failure inside a collective reaches every member as an error, never a hang',
    body: async (member, group, rank, size) => {
      if (size < 2) return;
      for (const algorithm of algorithmNames('broadcast')) {
        for (const root of new Set([0, size - 1])) {
          // Encodes at the root, fails to decode everywhere else: inner tree nodes forward it first.
          const error = await failureOf(member.broadcast(group, rank === root ? new Unbuildable(algorithm) : null, root, { algorithm }));
          if (rank !== root) expect(error, `${algorithm} from ${root}`).to.be.instanceOf(CCJError);
          expect(await member.broadcast(group, rank === root ? [algorithm, root] : null, root)).to.deep.equal([algorithm, root]);
        }
      }
      // A reduction that refuses the last rank's operand, at whichever member an algorithm combines it: every member's allReduce fails.
      type Marked = { sum: number; last: boolean };
      const failing = { reduce: (a: Marked, b: Marked) => { if (a.last || b.last) throw new RefusedError('this reduction refuses'); return { sum: a.sum + b.sum, last: false }; }, name: 'refusing' };
      const error = await failureOf(member.allReduce(group, { sum: rank, last: rank === size - 1 }, failing));
      await expectCaught(member, group, error, error instanceof RefusedError ? RefusedError : CCJError, 'allReduce with a refusing reduction');
      expect(await member.allReduce(group, rank, Reductions.SUM)).to.equal((size * (size - 1)) / 2);
    },
  },
  {
    name: 'barrier: nobody leaves before everybody arrived',
    body: async (member, group, rank, size) => {
      // In each round one member arrives late; everybody checks it left after that member came.
      for (let round = 0; round < 3; round += 1) {
      const late = round % size;
      if (rank === late) await new Promise((resolve) => setTimeout(resolve, 20));
      const arrived = Date.now();
      await member.barrier(group);
      const left = Date.now();
      const lateArrival = await member.broadcast(group, rank === late ? arrived : null, late);
      expect(left).to.be.at.least(lateArrival as number);
      }
    },
  },
  {
    name: 'broadcast from every root: the root keeps its reference, the others get a copy',
    body: async (member, group, rank, size) => {
      for (let root = 0; root < size; root += 1) {
        for (const payload of BROADCAST_PAYLOADS) {
          const mine = rank === root ? payload.make(root) : null;
          const result = await member.broadcast(group, mine, root);
          if (rank === root) expect(result).to.equal(mine);
          else expectSame(result, payload.make(root));
        }
      }
    },
  },
  {
    name: 'reduce to every root and allReduce, compared with a sequential fold',
    body: async (member, group, rank, size) => {
      for (const reduction of REDUCTIONS) {
        const expected = sequentialFold(reduction, size);
        for (let root = 0; root < size; root += 1) {
          const result = await member.reduce(group, reduction.contribution(rank), reduction.op, root);
          if (rank === root) expectSame(result, expected);
          else expect(result, reduction.name).to.equal(null);
        }
        expectSame(await member.allReduce(group, reduction.contribution(rank), reduction.op), expected);
      }
    },
  },
  {
    name: 'scan: inclusive prefixes in rank order',
    body: async (member, group, rank) => {
      expect(await member.scan(group, rank + 1, Reductions.SUM)).to.equal(((rank + 1) * (rank + 2)) / 2);
      expect(await member.scan(group, String(rank), concatenate)).to.equal([...Array(rank + 1).keys()].join(','));
    },
  },
  {
    name: 'scatter and gather with every root and uneven blocks',
    body: async (member, group, rank, size) => {
      for (const kind of dividables(size)) {
        const whole = kind.whole();
        for (let root = 0; root < size; root += 1) {
          const element = await member.scatter(group, rank === root ? kind.whole() : null, root);
          expect(contents(element), kind.name).to.deep.equal(contents(whole.elementAt(rank, size)));
          const gathered = await member.gather(group, rank === root ? kind.empty() : null, element, root);
          if (rank === root) expect(contents(gathered), kind.name).to.deep.equal(contents(whole));
          else expect(gathered).to.equal(null);
        }
      }
    },
  },
  {
    name: 'allGather and allToAll with uneven blocks',
    body: async (member, group, rank, size) => {
      for (const kind of dividables(size)) {
        const whole = kind.whole();
        const gathered = await member.allGather(group, kind.empty(), whole.elementAt(rank, size));
        expect(contents(gathered), kind.name).to.deep.equal(contents(whole));
      }
      // Member r sends block j of its array (tagged with r) to member j; blocks of 3.
      const sendArray = Array.from({ length: 3 * size }, (_, i) => `${rank}:${i}`);
      const result = await member.allToAll(group, new DividableArray(sendArray), new DividableArray(new Array<string>(3 * size).fill('')));
      const expected = Array.from({ length: size }, (_, source) => [0, 1, 2].map((offset) => `${source}:${3 * rank + offset}`)).flat();
      expect(result.array).to.deep.equal(expected);
      // Uneven elements through a user DividableData: member r sends r + j + 1 numbers to j.
      const outgoing = new Mailbox(Array.from({ length: size }, (_, j) => Float64Array.from({ length: rank + j + 1 }, () => rank)));
      const incoming = await member.allToAll(group, outgoing, new Mailbox(new Array<Float64Array>(size)));
      incoming.elements.forEach((element, source) => expect(Array.from(element)).to.deep.equal(new Array(source + rank + 1).fill(source)));
    },
  },
  {
    name: 'reduceScatter: member r gets the reduction of everyone’s block r',
    body: async (member, group, rank, size) => {
      const data = new DividableArray(Float64Array.from({ length: 2 * size + 1 }, (_, i) => i * (rank + 1)));
      const block = await member.reduceScatter(group, data, Reductions.SUM);
      const total = (size * (size + 1)) / 2;
      const expected = new DividableArray(Float64Array.from({ length: 2 * size + 1 }, (_, i) => i * total)).elementAt(rank, size);
      expect(Array.from(block as Float64Array)).to.deep.equal(Array.from(expected));
    },
  },
];
