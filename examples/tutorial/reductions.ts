/**
 * Reductions: the built-in ones, a plain function, an operation that is not commutative, and
 * instances of your own class reduced and gathered as instances.
 *   npx ccjrun -n 4 examples/tutorial/reductions.ts
 */
import { ColGroupMaster, ColMember, DividableArray, Reductions, registerClass } from 'ccjs';
import type { ReductionObject } from 'ccjs';

/** Count and mean of some samples; two of them merge into the statistics of all their samples. */
class Stats {
  constructor(
    readonly count: number,
    readonly mean: number,
  ) {}

  merge(other: Stats): Stats {
    const count = this.count + other.count;
    return new Stats(count, (this.mean * this.count + other.mean * other.count) / count);
  }
}
// Every process registers the class under the same name, so Stats arrive as Stats.
registerClass(Stats, 'tutorial.Stats');

const mergeStats: ReductionObject<Stats> = { reduce: (a, b) => a.merge(b), name: 'mergeStats' };
// Concatenation is associative but not commutative: ccjs combines it in rank order.
const concatenate: ReductionObject<string> = { reduce: (a, b) => a + b, commutative: false, name: 'concatenate' };
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

class Reducing extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('reductions', this.master.size);
    const rank = group.getRank(this);

    const sums = await this.allReduce(group, Float64Array.of(rank, 1), Reductions.SUM);   // element-wise
    const largest = await this.allReduce(group, { value: (rank * 5) % 7, index: rank }, Reductions.MAXLOC);
    const divisor = await this.allReduce(group, 12 * (rank + 1), gcd);                   // a plain function
    const word = await this.reduce(group, String.fromCharCode(97 + rank), concatenate, 0);
    const stats = await this.allReduce(group, new Stats(rank + 1, rank * 10), mergeStats);
    const all = await this.allGather(group, new DividableArray(new Array<Stats>(group.size())), [new Stats(1, rank)]);

    if (rank === 0) {
      console.log(`sums [${sums.join(', ')}], MAXLOC value ${largest.value} at rank ${largest.index}, gcd ${divisor}, concatenated '${word}'`);
      console.log(`merged: ${stats instanceof Stats} count ${stats.count} mean ${stats.mean}`);
      console.log(`gathered ${all.array.length} Stats, all instances: ${all.array.every((item) => item instanceof Stats)}`);
    }
  }
}

const master = await ColGroupMaster.create();
const member = new Reducing(master);
master.addMember('reductions', member);
await member.start();
