/**
 * QR: QR factorization with column pivoting by Householder reflections (CCJ 4.2). The columns are
 * dealt out cyclically, so every member keeps a fair share of work as factored columns drop out.
 * In iteration k every member proposes its remaining column of largest norm (rows k..n-1) as a
 * Pivot object; an allReduce with a user ReductionObject picks the pivot; the pivot's owner
 * computes the Householder reflection and broadcasts it; every member applies it to its remaining
 * columns. Checksum: the sum of |R_kk|.
 *   npx ccjrun -n 4 examples/qr 1000 [--seed S] [--check]
 */
import { ColGroupMaster, ColMember, registerClass } from '../src/index.js';
import type { ColGroup } from '../src/index.js';
import type { ReductionObject } from '../reduction/index.js';
import { exactDifferences, parseArguments, randomStream, relativeDifferences, reportCheck, resultLine, sum, timeBetweenBarriers } from './common.js';
import type { ExampleArguments } from './common.js';

/** A member's candidate for pivot k: its remaining column of largest norm over rows k..n-1. */
class Pivot {
  constructor(
    /** The squared norm of rows k..n-1; -1 for a member without remaining columns. */
    readonly squaredNorm: number,
    readonly column: number,
  ) {}
}
registerClass(Pivot, 'examples.qr.Pivot');

const NO_PIVOT = new Pivot(-1, -1);

/** The larger norm; ties go to the lower column index, the one the sequential scan picks. */
class LargestPivot implements ReductionObject<Pivot> {
  reduce(a: Pivot, b: Pivot): Pivot {
    if (a.squaredNorm !== b.squaredNorm) return a.squaredNorm > b.squaredNorm ? a : b;
    return a.column <= b.column ? a : b;
  }
}

const LARGEST_PIVOT = new LargestPivot();

/** H = I − tau·v·vᵀ, mapping rows k..n-1 of the pivot column to (alpha, 0, ..., 0); alpha is R_kk. */
class Reflection {
  constructor(
    readonly alpha: number,
    readonly tau: number,
    /** v, for rows k..n-1. */
    readonly vector: Float64Array,
  ) {}
}
registerClass(Reflection, 'examples.qr.Reflection');

interface Factorization {
  /** pivots[k]: the column chosen in iteration k. */
  readonly pivots: Int32Array;
  readonly rDiagonal: Float64Array;
}

// ---- kernels, shared by the parallel and the sequential factorization ----

/** Column j of the n × n matrix: uniform in [-1, 1). */
function generateColumn(seed: number, n: number, j: number): Float64Array {
  const random = randomStream(seed, j);
  const column = new Float64Array(n);
  for (let i = 0; i < n; i += 1) column[i] = 2 * random() - 1;
  return column;
}

function squaredNormFrom(column: Float64Array, k: number): number {
  let total = 0;
  for (let i = k; i < column.length; i += 1) total += column[i] * column[i];
  return total;
}

/** The reflection for a column whose rows k..n-1 have the given squared norm. */
function householder(column: Float64Array, k: number, squaredNorm: number): Reflection {
  const norm = Math.sqrt(squaredNorm);
  const head = column[k];
  // alpha takes the sign opposite to the head, so that v's first entry suffers no cancellation.
  const alpha = head >= 0 ? -norm : norm;
  const vector = column.slice(k);
  vector[0] = head - alpha;
  // vᵀv = ‖x‖² − x₀² + (x₀ − alpha)² = 2‖x‖(‖x‖ + |x₀|); zero for a zero column, which needs no reflection.
  const vv = 2 * norm * (norm + Math.abs(head));
  return new Reflection(alpha, vv > 0 ? 2 / vv : 0, vector);
}

/** column[k..] ← H · column[k..]. */
function applyReflection(reflection: Reflection, column: Float64Array, k: number): void {
  const { tau, vector } = reflection;
  let dot = 0;
  for (let i = 0; i < vector.length; i += 1) dot += vector[i] * column[k + i];
  const scale = tau * dot;
  for (let i = 0; i < vector.length; i += 1) column[k + i] -= scale * vector[i];
}

// ---- the parallel factorization ----

class Qr extends ColMember {
  constructor(
    private readonly master: ColGroupMaster,
    private readonly options: ExampleArguments,
  ) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('qr', this.master.getNumberOfCpus());
    const rank = group.getRank(this);
    const members = group.size();
    const { size: n, seed, check } = this.options;
    // Cyclic distribution: local column c is global column rank + c·members.
    const columns: Float64Array[] = [];
    for (let j = rank; j < n; j += members) columns.push(generateColumn(seed, n, j));

    const { result, seconds } = await timeBetweenBarriers(this, group, () => this.factor(group, n, columns));
    if (rank !== 0) return;
    console.log(resultLine({ example: 'qr', size: n, members, checksum: sum(result.rDiagonal.map(Math.abs)), seconds }));
    if (check) {
      const expected = sequentialQr(n, seed);
      reportCheck([
        ...exactDifferences('pivot', result.pivots, expected.pivots),
        ...relativeDifferences('R diagonal', result.rDiagonal, expected.rDiagonal, 1e-9),
      ]);
    }
  }

  private async factor(group: ColGroup, n: number, columns: Float64Array[]): Promise<Factorization> {
    const rank = group.getRank(this);
    const members = group.size();
    const factored = new Uint8Array(columns.length);
    const pivots = new Int32Array(n);
    const rDiagonal = new Float64Array(n);
    for (let k = 0; k < n; k += 1) {
      let proposal = NO_PIVOT;
      for (let local = 0; local < columns.length; local += 1) {
        if (factored[local]) continue;
        const squaredNorm = squaredNormFrom(columns[local], k);
        if (squaredNorm > proposal.squaredNorm) proposal = new Pivot(squaredNorm, rank + local * members);
      }
      const pivot = await this.allReduce(group, proposal, LARGEST_PIVOT);
      const owner = pivot.column % members;
      let ownReflection: Reflection | null = null;
      if (owner === rank) {
        const local = Math.floor(pivot.column / members);
        ownReflection = householder(columns[local], k, pivot.squaredNorm);
        factored[local] = 1;
      }
      // Only the owner has a reflection to send; everyone receives it.
      const reflection = (await this.broadcast(group, ownReflection, owner)) as Reflection;
      pivots[k] = pivot.column;
      rDiagonal[k] = reflection.alpha;
      for (let local = 0; local < columns.length; local += 1) {
        if (!factored[local]) applyReflection(reflection, columns[local], k);
      }
    }
    return { pivots, rDiagonal };
  }
}

// ---- the sequential factorization, for --check ----

function sequentialQr(n: number, seed: number): Factorization {
  const columns = Array.from({ length: n }, (_, j) => generateColumn(seed, n, j));
  const factored = new Uint8Array(n);
  const pivots = new Int32Array(n);
  const rDiagonal = new Float64Array(n);
  for (let k = 0; k < n; k += 1) {
    let pivot = -1;
    let largest = -1;
    for (let j = 0; j < n; j += 1) {
      if (factored[j]) continue;
      const squaredNorm = squaredNormFrom(columns[j], k);
      if (squaredNorm > largest) {
        largest = squaredNorm;
        pivot = j;
      }
    }
    const reflection = householder(columns[pivot], k, largest);
    factored[pivot] = 1;
    pivots[k] = pivot;
    rDiagonal[k] = reflection.alpha;
    for (let j = 0; j < n; j += 1) {
      if (!factored[j]) applyReflection(reflection, columns[j], k);
    }
  }
  return { pivots, rDiagonal };
}

const options = parseArguments('qr', process.argv.slice(2));
const master = await ColGroupMaster.create();
const member = new Qr(master, options);
master.addMember('qr', member);
await member.start();
