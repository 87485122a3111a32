/**
 * LEQ: a linear equation solver by Jacobi iteration (CCJ 4.3). The rows of a diagonally dominant
 * system Ax = b are divided in blocks among the members; in each iteration every member computes
 * its part of the next x from the whole current x, the parts are exchanged with allGather, and
 * an allReduce (MAX) of the largest change decides whether another iteration is needed.
 * Checksum: the sum of x.
 *   npx ccjrun -n 4 examples/leq 1000 [--seed S] [--check]
 */
import { ColGroupMaster, ColMember } from '../src/index.js';
import type { ColGroup } from '../src/index.js';
import { DenseMatrix, DividableArray, blockRange } from '../dividable/index.js';
import { Reductions } from '../reduction/index.js';
import { parseArguments, randomStream, relativeDifferences, reportCheck, resultLine, sum, timeBetweenBarriers } from './common.js';
import type { ExampleArguments } from './common.js';

/** Stop when no element of x changes by this much or more. */
const TOLERANCE = 1e-10;
const MAX_ITERATIONS = 10_000;
/**
 * |a_ii| = DOMINANCE · Σ_{j≠i} |a_ij| with nonnegative a_ij, so an iteration shrinks the error by
 * about 1/DOMINANCE: a hundred or so iterations.
 */
const DOMINANCE = 1.02;

/** Rows [rowOffset, rowOffset + matrix.rows) of the system. */
interface EquationRows {
  readonly matrix: DenseMatrix;
  readonly rhs: Float64Array;
}

interface Solution {
  readonly x: Float64Array;
  readonly iterations: number;
}

// ---- kernels, shared by the parallel and the sequential solver ----

/** Rows [first, end) of the n × n system; x comes out of order 1. */
function generateRows(seed: number, n: number, first: number, end: number): EquationRows {
  const matrix = new DenseMatrix(end - first, n, undefined, first);
  const rhs = new Float64Array(end - first);
  for (let i = first; i < end; i += 1) {
    const random = randomStream(seed, i);
    const row = matrix.row(i - first);
    let offDiagonalSum = 0;
    for (let j = 0; j < n; j += 1) {
      if (j === i) continue;
      row[j] = random();
      offDiagonalSum += row[j];
    }
    // A 1×1 system has no off-diagonal to dominate.
    row[i] = n === 1 ? 1 : DOMINANCE * offDiagonalSum;
    rhs[i - first] = row[i] * (2 * random() - 1);
  }
  return { matrix, rhs };
}

/** One Jacobi step for the given rows: next[r] = (b_i − Σ_{j≠i} a_ij·x_j) / a_ii. Returns the largest |change|. */
function jacobiStep({ matrix, rhs }: EquationRows, x: Float64Array, next: Float64Array): number {
  const { rows, cols: n, data, rowOffset } = matrix;
  let largestChange = 0;
  for (let r = 0; r < rows; r += 1) {
    const i = rowOffset + r;
    const start = r * n;
    let offDiagonal = 0;
    for (let j = 0; j < i; j += 1) offDiagonal += data[start + j] * x[j];
    for (let j = i + 1; j < n; j += 1) offDiagonal += data[start + j] * x[j];
    next[r] = (rhs[r] - offDiagonal) / data[start + i];
    largestChange = Math.max(largestChange, Math.abs(next[r] - x[i]));
  }
  return largestChange;
}

// ---- the parallel solver ----

class Leq extends ColMember {
  constructor(
    private readonly master: ColGroupMaster,
    private readonly options: ExampleArguments,
  ) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('leq', this.master.getNumberOfCpus());
    const rank = group.getRank(this);
    const members = group.size();
    const { size: n, seed, check } = this.options;
    const [firstRow, endRow] = blockRange(n, rank, members);
    const equations = generateRows(seed, n, firstRow, endRow);

    const { result, seconds } = await timeBetweenBarriers(this, group, () => this.solve(group, n, equations));
    if (rank !== 0) return;
    console.log(resultLine({ example: 'leq', size: n, members, extra: { iterations: result.iterations }, checksum: sum(result.x), seconds }));
    if (check) {
      const expected = sequentialLeq(n, seed);
      reportCheck([
        ...(result.iterations === expected.iterations ? [] : [`${result.iterations} iterations, expected ${expected.iterations}`]),
        ...relativeDifferences('x', result.x, expected.x, 1e-9),
      ]);
    }
  }

  private async solve(group: ColGroup, n: number, equations: EquationRows): Promise<Solution> {
    // Two whole vectors, swapped each iteration: the current x, and the next one, which allGather fills.
    let x = new DividableArray(new Float64Array(n));
    let next = new DividableArray(new Float64Array(n));
    const part = new Float64Array(equations.matrix.rows);
    let iterations = 0;
    let largestChange = Infinity;
    while (largestChange >= TOLERANCE && iterations < MAX_ITERATIONS) {
      const localChange = jacobiStep(equations, x.array, part);
      await this.allGather(group, next, part);
      largestChange = await this.allReduce<number>(group, localChange, Reductions.MAX);
      [x, next] = [next, x];
      iterations += 1;
    }
    return { x: x.array, iterations };
  }
}

// ---- the sequential solver, for --check ----

function sequentialLeq(n: number, seed: number): Solution {
  const equations = generateRows(seed, n, 0, n);
  let x = new Float64Array(n);
  let next = new Float64Array(n);
  let iterations = 0;
  let largestChange = Infinity;
  while (largestChange >= TOLERANCE && iterations < MAX_ITERATIONS) {
    largestChange = jacobiStep(equations, x, next);
    [x, next] = [next, x];
    iterations += 1;
  }
  return { x, iterations };
}

const options = parseArguments('leq', process.argv.slice(2));
const master = await ColGroupMaster.create();
const member = new Leq(master, options);
master.addMember('leq', member);
await member.start();
