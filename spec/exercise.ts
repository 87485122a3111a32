/**
 * The check of one member's part in one collective × algorithm against the sequential
 * reference, for a typed-array and an object payload, every root: shared by the in-process
 * suite (spec/algorithms.spec.ts) and the jobs over threads and processes (spec/scenarios/).
 */
import { expect } from 'chai';
import type { ColMember, ColGroup } from '../src/index.js';
import { Reductions } from '../reduction/index.js';
import type { ReductionObject } from '../reduction/index.js';
import type { CollectiveName } from '../src/collectives/algorithm.js';
import type { CollectiveOptions } from '../src/collectives/operations.js';
import { algorithmName } from '../src/collectives/selection.js';
import { DividableArray } from '../dividable/index.js';

export const MAX_MEMBERS = 9;

/**
 * A contribution of member `rank` for the call numbered `salt`: a typed array or an object. The
 * typed array is long enough for the reductions' native loop (NATIVE_MIN_ELEMENTS), its blocks in
 * Rabenseifner's and the ring's steps short enough for the JavaScript one.
 */
export const PAYLOADS = {
  'Float64Array': (rank: number, salt: number) => Float64Array.from({ length: 131 }, (_, i) => rank * 100 + i + salt),
  'object': (rank: number, salt: number) => ({ rank, salt, label: `r${rank}`, values: [rank, salt] }),
} as const;
export type PayloadKind = keyof typeof PAYLOADS;

/** Element-wise sum for typed arrays; for objects a commutative merge. */
function opFor(kind: PayloadKind): ReductionObject<never> {
  if (kind === 'Float64Array') return Reductions.SUM as ReductionObject<never>;
  type Tally = { rank: number; salt: number; label: string; values: number[] };
  const merge: ReductionObject<Tally> = {
    name: 'merge',
    reduce: (a, b) => ({ rank: a.rank + b.rank, salt: Math.max(a.salt, b.salt), label: [...a.label.split('+'), ...b.label.split('+')].sort().join('+'), values: [a.values[0] + b.values[0], Math.max(a.values[1], b.values[1])] }),
  };
  return merge as ReductionObject<never>;
}

const concatenate: ReductionObject<string> = { name: 'concatenate', commutative: false, reduce: (a, b) => `${a}|${b}` };

function fold<T>(values: readonly T[], op: ReductionObject<T>): T {
  return values.slice(1).reduce((acc, value) => op.reduce(acc, value), values[0]);
}

/** Typed arrays as plain arrays, recursively, so results compare with chai's deep equality. */
function plain(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) return Array.from(value as Float64Array);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, plain(field)]));
  return value;
}

/** A reduction combines what it received in place (reduceInto), never the caller's operand. */
function expectUnchanged(operand: unknown, original: unknown): void {
  expect(plain(operand), "the caller's operand after the call").to.deep.equal(plain(original));
}

/** One member's part of `collective` with `algorithm`, checked against the sequential result. */
export async function exercise(collective: CollectiveName, algorithm: string, member: ColMember, group: ColGroup, rank: number, kind: PayloadKind): Promise<void> {
  const size = group.size();
  const make = PAYLOADS[kind];
  // One name for whichever collective this is: typed per collective, as the members' calls want it.
  const options = <C extends CollectiveName>(of: C): CollectiveOptions<C> => ({ algorithm: algorithmName(of, algorithm, 'exercise') });
  const roots = [...Array(size).keys()];
  const everyone = (salt: number) => roots.map((r) => make(r, salt));
  switch (collective) {
    case 'barrier':
      await member.barrier(group, options(collective));
      return;
    case 'broadcast':
      for (const root of roots) expect(plain(await member.broadcast(group, rank === root ? make(root, 1) : null, root, options(collective)))).to.deep.equal(plain(make(root, 1)));
      return;
    case 'reduce':
      for (const root of roots) {
        const operand = make(rank, root);
        const result = await member.reduce(group, operand as never, opFor(kind), root, options(collective));
        expect(plain(result)).to.deep.equal(rank === root ? plain(fold(everyone(root), opFor(kind) as ReductionObject<unknown>)) : null);
        expectUnchanged(operand, make(rank, root));
        const ordered = await member.reduce(group, String(rank), concatenate, root, options(collective));
        expect(ordered).to.equal(rank === root ? roots.join('|') : null);
      }
      return;
    case 'allReduce': {
      const operand = make(rank, 2);
      expect(plain(await member.allReduce(group, operand as never, opFor(kind), options(collective)))).to.deep.equal(plain(fold(everyone(2), opFor(kind) as ReductionObject<unknown>)));
      expectUnchanged(operand, make(rank, 2));
      expect(await member.allReduce(group, String(rank), concatenate, options(collective))).to.equal(roots.join('|'));
      return;
    }
    case 'scatter':
      for (const root of roots) {
        const whole = new DividableArray(everyone(root));
        expect(plain(await member.scatter(group, rank === root ? whole : null, root, options(collective)))).to.deep.equal(plain([make(rank, root)]));
      }
      return;
    case 'gather':
      for (const root of roots) {
        const result = await member.gather(group, rank === root ? new DividableArray(new Array(size)) : null, [make(rank, root)], root, options(collective));
        expect(result === null ? null : plain(result.array)).to.deep.equal(rank === root ? plain(everyone(root)) : null);
      }
      return;
    case 'allGather':
      expect(plain((await member.allGather(group, new DividableArray(new Array(size)), [make(rank, 3)], options(collective))).array)).to.deep.equal(plain(everyone(3)));
      return;
    case 'allToAll': {
      const outgoing = new DividableArray(roots.map((to) => ({ from: rank, to, payload: make(rank, to) })));
      const result = await member.allToAll(group, outgoing, new DividableArray(new Array(size)), options(collective));
      expect(plain(result.array)).to.deep.equal(plain(roots.map((from) => ({ from, to: rank, payload: make(from, rank) }))));
      return;
    }
    case 'reduceScatter': {
      // Block j of member r's data is make(r, j); member j gets the fold over r of make(r, j).
      const data = new DividableArray(roots.map((block) => make(rank, block)));
      const result = await member.reduceScatter(group, data, ((a: unknown[], b: unknown[]) => a.map((x, i) => (opFor(kind) as ReductionObject<unknown>).reduce(x, b[i]))) as never, options(collective));
      expect(plain(result)).to.deep.equal(plain([fold(roots.map((r) => make(r, rank)), opFor(kind) as ReductionObject<unknown>)]));
      expectUnchanged(data.array, roots.map((block) => make(rank, block)));
      return;
    }
    case 'scan': {
      const operand = make(rank, 4);
      expect(plain(await member.scan(group, operand as never, opFor(kind), options(collective)))).to.deep.equal(plain(fold(everyone(4).slice(0, rank + 1), opFor(kind) as ReductionObject<unknown>)));
      expectUnchanged(operand, make(rank, 4));
      expect(await member.scan(group, String(rank), concatenate, options(collective))).to.equal(roots.slice(0, rank + 1).join('|'));
      return;
    }
  }
}

