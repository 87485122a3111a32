/**
 * Dividable data: objects that scatter, gather, allGather and allToAll divide into one element
 * per member. A matrix-vector product y = A·x by row blocks, and a class of your own.
 *   npx ccjrun -n 3 examples/tutorial/dividable.ts
 */
import { ColGroupMaster, ColMember, DenseMatrix, DividableArray } from 'ccjs';
import type { DividableData } from 'ccjs';

/** A sentence divided into runs of words: part i of n is the i-th run (the last ones may be empty). */
class Sentence implements DividableData<string[]> {
  constructor(readonly words: string[]) {}

  elementAt(index: number, groupSize: number): string[] {
    const [start, end] = DividableArray.blockRange(this.words.length, index, groupSize);
    return this.words.slice(start, end);
  }

  setElementAt(index: number, groupSize: number, element: string[]): void {
    const [start, end] = DividableArray.blockRange(this.words.length, index, groupSize);
    this.words.splice(start, end - start, ...element);
  }
}

class RowBlocks extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('rows', this.master.size);
    const rank = group.getRank(this);
    const n = 7;

    // The root's matrix travels as row blocks (views of its Float64Array, sent as raw bytes).
    const a = rank === 0 ? DenseMatrix.fromRows(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 2 : i + j)))) : null;
    const block = await this.scatter(group, a, 0);
    const x = (await this.broadcast(group, rank === 0 ? Float64Array.from({ length: n }, (_, j) => j + 1) : null, 0)) as Float64Array;
    const y = new Float64Array(block.rows);
    for (let row = 0; row < block.rows; row += 1) {
      for (let col = 0; col < n; col += 1) y[row] += block.get(row, col) * x[col];
    }
    console.log(`rank ${rank} holds rows ${block.rowOffset}..${block.rowOffset + block.rows - 1}`);
    // 7 rows over 3 members: blocks of 3, 2 and 2 rows, so y's blocks are 3, 2 and 2 long.
    const result = await this.gather(group, rank === 0 ? new DividableArray(new Float64Array(n)) : null, y, 0);
    if (result !== null) console.log(`y = [${result.array.join(', ')}]`);

    // Your own DividableData: every member gets a run of words and returns it in capitals.
    const sentence = rank === 0 ? new Sentence('the quick brown fox jumps over the lazy dog'.split(' ')) : null;
    const words = await this.scatter(group, sentence, 0);
    const shouted = await this.gather(group, sentence, words.map((word) => word.toUpperCase()), 0);
    if (shouted !== null) console.log(shouted.words.join(' '));
  }
}

const master = await ColGroupMaster.create();
const member = new RowBlocks(master);
master.addMember('rows', member);
await member.start();
