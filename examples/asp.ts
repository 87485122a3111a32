/**
 * ASP: all-pairs shortest paths with Floyd's algorithm (CCJ 4.1, Figures 1 and 2). The rows of
 * the distance matrix are divided in blocks among the members; in iteration k the owner of row k
 * broadcasts it (an Int32Array, so it travels as raw bytes) and every member relaxes its rows
 * through node k. Checksum: the sum of all finite distances.
 *   npx ccjrun -n 4 examples/asp 1000 [--seed S] [--check]
 */
import { ColGroupMaster, ColMember } from '../src/index.js';
import type { ColGroup } from '../src/index.js';
import { DividableArray, blockRange } from '../dividable/index.js';
import { Reductions } from '../reduction/index.js';
import { blockOwner, exactDifferences, parseArguments, randomStream, reportCheck, resultLine, timeBetweenBarriers } from './common.js';
import type { ExampleArguments } from './common.js';

/** "No edge": larger than any path, and twice it still fits an int32, so relaxing never overflows. */
const NO_EDGE = 0x3fff_ffff;
const EDGE_PROBABILITY = 0.2;
const MAX_WEIGHT = 100;

// ---- kernels, shared by the parallel and the sequential algorithm ----

/** Row i of the distance matrix: 0 on the diagonal, else a weight in [1, MAX_WEIGHT] or NO_EDGE. */
function generateRow(seed: number, n: number, i: number): Int32Array {
  const random = randomStream(seed, i);
  const row = new Int32Array(n);
  for (let j = 0; j < n; j += 1) {
    const hasEdge = random() < EDGE_PROBABILITY;
    if (i !== j) row[j] = hasEdge ? 1 + Math.floor(random() * MAX_WEIGHT) : NO_EDGE;
  }
  return row;
}

/** Floyd's step k on some rows: d[i][j] ← min(d[i][j], d[i][k] + d[k][j]). */
function relaxThrough(rows: readonly Int32Array[], k: number, rowK: Int32Array): void {
  for (const row of rows) {
    const toK = row[k];
    if (toK === NO_EDGE) continue;
    for (let j = 0; j < rowK.length; j += 1) {
      const viaK = toK + rowK[j];
      if (viaK < row[j]) row[j] = viaK;
    }
  }
}

function sumOfFiniteDistances(rows: readonly Int32Array[]): number {
  let total = 0;
  for (const row of rows) {
    for (let j = 0; j < row.length; j += 1) if (row[j] !== NO_EDGE) total += row[j];
  }
  return total;
}

// ---- the parallel algorithm ----

class Asp extends ColMember {
  constructor(
    private readonly master: ColGroupMaster,
    private readonly options: ExampleArguments,
  ) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('asp', this.master.getNumberOfCpus());
    const rank = group.getRank(this);
    const members = group.size();
    const { size: n, seed, check } = this.options;
    const [firstRow, endRow] = blockRange(n, rank, members);
    const rows = Array.from({ length: endRow - firstRow }, (_, local) => generateRow(seed, n, firstRow + local));

    const { seconds } = await timeBetweenBarriers(this, group, () => this.shortestPaths(group, n, firstRow, rows));
    // Integers below 2^53, so the float64 sum is exact in any order.
    const checksum = await this.allReduce<number>(group, sumOfFiniteDistances(rows), Reductions.SUM);
    // For --check: every member's block of rows, gathered into one array of n rows at rank 0.
    const allRows = rank === 0 ? new DividableArray(new Array<Int32Array>(n)) : null;
    const gathered = check ? await this.gather(group, allRows, rows, 0) : null;
    if (rank !== 0) return;
    console.log(resultLine({ example: 'asp', size: n, members, checksum, seconds }));
    if (gathered !== null) {
      const expected = sequentialAsp(n, seed);
      reportCheck(expected.flatMap((row, i) => exactDifferences(`distance row ${i}`, gathered.array[i], row)));
    }
  }

  private async shortestPaths(group: ColGroup, n: number, firstRow: number, rows: Int32Array[]): Promise<void> {
    const rank = group.getRank(this);
    const members = group.size();
    for (let k = 0; k < n; k += 1) {
      const owner = blockOwner(n, members, k);
      // As in CCJ's Figure 1: the owner's row k to everyone (the others' argument is ignored).
      const rowK = (await this.broadcast(group, owner === rank ? rows[k - firstRow] : null, owner)) as Int32Array;
      relaxThrough(rows, k, rowK);
    }
  }
}

// ---- the sequential algorithm, for --check ----

function sequentialAsp(n: number, seed: number): Int32Array[] {
  const rows = Array.from({ length: n }, (_, i) => generateRow(seed, n, i));
  for (let k = 0; k < n; k += 1) relaxThrough(rows, k, rows[k]);
  return rows;
}

const options = parseArguments('asp', process.argv.slice(2));
const master = await ColGroupMaster.create();
const member = new Asp(master, options);
master.addMember('asp', member);
await member.start();
