/**
 * The numbers that name things on the wire, pinned: each collective's and each algorithm's id (a
 * collective signature's operation code) and each binary type's code (a message's format). Members
 * of one job may run different builds, so a number that changes, or a new name without its number
 * here, fails this test instead of silently changing the protocol.
 */
import { expect } from 'chai';
import { ALGORITHMS, COLLECTIVE_IDS, COLLECTIVES } from '../src/collectives/algorithms.js';
import { algorithmNameOf, collectiveOf, operationCode, registerOperations } from '../src/engine/signature.js';
import { TYPED_ARRAY_CODES, typeCodeOf } from '../src/base/typed-arrays.js';

const PINNED: Record<string, { readonly id: number; readonly algorithms: Record<string, number> }> = {
  barrier: { id: 1, algorithms: { 'hypercube': 0, 'gather-broadcast': 1, 'gather-broadcast-flat-fourary': 2, 'dissemination': 3, 'hierarchical': 4, 'shared-memory': 5 } },
  broadcast: { id: 2, algorithms: { 'binomial': 0, 'flat-blocking': 1, 'flat-nonblocking': 2, 'four-ary': 3, 'mst': 4, 'pipeline-chain': 5, 'scatter-allgather': 6, 'hierarchical': 7, 'shared-memory': 8 } },
  reduce: { id: 3, algorithms: { 'binomial': 0, 'flat-blocking': 1, 'flat-nonblocking': 2, 'mst': 3, 'hierarchical': 4, 'shared-memory': 5 } },
  allReduce: { id: 4, algorithms: { 'reduce-broadcast': 0, 'flat-nonblocking': 1, 'binomial': 2, 'bde-blocking': 3, 'bde-nonblocking': 4, 'rabenseifner': 5, 'ring': 6, 'hierarchical': 7, 'shared-memory': 8 } },
  scatter: { id: 5, algorithms: { 'binomial': 0, 'flat-blocking': 1, 'flat-nonblocking': 2, 'mst': 3, 'hierarchical': 4, 'shared-memory': 5 } },
  gather: { id: 6, algorithms: { 'binomial': 0, 'flat-blocking': 1, 'flat-nonblocking': 2, 'flat-nonblocking-1': 3, 'mst': 4, 'hierarchical': 5, 'shared-memory': 6 } },
  allGather: { id: 7, algorithms: { 'gather-broadcast': 0, 'flat-nonblocking': 1, 'recursive-doubling': 2, 'bde-nonblocking': 3, 'bucket-blocking': 4, 'bucket-nonblocking': 5, 'bruck': 6, 'hierarchical': 7, 'shared-memory': 8 } },
  allToAll: { id: 8, algorithms: { 'flat': 0, 'flat-blocking': 1, 'flat-nonblocking': 2, 'flat-nonblocking-1': 3, 'flat-nonblocking-2': 4, 'pairwise': 5, 'bruck': 6, 'shared-memory': 7 } },
  reduceScatter: { id: 9, algorithms: { 'reduce-scatter': 0, 'bde-blocking': 1, 'bde-nonblocking': 2, 'bucket-blocking': 3, 'bucket-nonblocking': 4, 'shared-memory': 5 } },
  scan: { id: 10, algorithms: { 'linear': 0, 'flat-nonblocking': 1, 'recursive-doubling': 2, 'shared-memory': 3 } },
};

const BINARY_TYPE_CODES: readonly [string, () => unknown, number][] = [
  ['Int8Array', () => new Int8Array(1), 0],
  ['Uint8Array', () => new Uint8Array(1), 1],
  ['Uint8ClampedArray', () => new Uint8ClampedArray(1), 2],
  ['Int16Array', () => new Int16Array(1), 3],
  ['Uint16Array', () => new Uint16Array(1), 4],
  ['Int32Array', () => new Int32Array(1), 5],
  ['Uint32Array', () => new Uint32Array(1), 6],
  ['Float32Array', () => new Float32Array(1), 7],
  ['Float64Array', () => new Float64Array(1), 8],
  ['BigInt64Array', () => new BigInt64Array(1), 9],
  ['BigUint64Array', () => new BigUint64Array(1), 10],
  ['Buffer', () => Buffer.alloc(1), 11],
  ['DataView', () => new DataView(new ArrayBuffer(1)), 12],
  ['ArrayBuffer', () => new ArrayBuffer(1), 13],
];

describe('wire ids', function () {
  it('names the same collectives as the pinned table', function () {
    expect(COLLECTIVES).to.have.members(Object.keys(PINNED));
  });

  for (const collective of COLLECTIVES) {
    it(`pins ${collective}'s id and its algorithms' ids`, function () {
      const pinned = PINNED[collective] as (typeof PINNED)[string];
      expect(COLLECTIVE_IDS[collective]).to.equal(pinned.id);
      const ids = Object.fromEntries(Object.entries(ALGORITHMS[collective]).map(([name, algorithm]) => [name, algorithm.id]));
      expect(ids).to.deep.equal(pinned.algorithms);
      for (const [algorithm, id] of Object.entries(pinned.algorithms)) {
        const operation = operationCode(collective, algorithm);
        expect(operation).to.equal((pinned.id << 8) | id);
        expect(collectiveOf(operation)).to.equal(collective);
        expect(algorithmNameOf(operation)).to.equal(algorithm);
      }
    });
  }

  it('refuses a table that gives two collectives, or two algorithms of one, the same id (and keeps the one it has)', function () {
    expect(() => registerOperations({ a: { id: 1, algorithms: {} }, b: { id: 1, algorithms: {} } })).to.throw('collective b: wire id 1 is not free');
    expect(() => registerOperations({ a: { id: 1, algorithms: { x: 0, y: 0 } } })).to.throw('a algorithm y: wire id 0 is not free');
    expect(collectiveOf(operationCode('scan', 'linear'))).to.equal('scan');
  });

  it('pins the binary type codes, the typed arrays first', function () {
    for (const [name, make, code] of BINARY_TYPE_CODES) expect(typeCodeOf(make()), name).to.equal(code);
    expect(TYPED_ARRAY_CODES).to.equal(11);
  });
});
