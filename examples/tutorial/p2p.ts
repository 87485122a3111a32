/**
 * Point-to-point: any object to a rank, tags, receiving from any source, probing.
 *   npx ccjrun -n 3 examples/tutorial/p2p.ts
 */
import { ANY_SOURCE, ColGroupMaster, ColMember } from 'ccjs';

class Messages extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('p2p', this.master.size);
    const rank = group.getRank(this);

    // Any object: rank 1 gets a copy, typed arrays included (they travel as raw bytes).
    if (rank === 0) await this.sendSync(group, { a: 7, b: 3.14, samples: Float64Array.of(1, 2, 3) }, 1);
    if (rank === 1) {
      const data = await this.receive<{ a: number; b: number; samples: Float64Array }>(group, 0);
      console.log(`rank 1 got a=${data.a} b=${data.b} samples=${data.samples.constructor.name} [${data.samples.join(', ')}]`);
    }

    // Tags: a receive takes the message with its tag, whatever arrived first.
    if (rank === 0) {
      await this.sendAsync(group, 'first sent', 1, { tag: 11 });
      await this.sendAsync(group, 'second sent', 1, { tag: 22 });
    }
    if (rank === 1) {
      const second = await this.receive<string>(group, 0, { tag: 22 });
      const first = await this.receive<string>(group, 0, { tag: 11 });
      console.log(`rank 1 received '${second}' (tag 22), then '${first}' (tag 11)`);
    }

    // Any source: rank 0 collects one message from every other rank, in arrival order.
    if (rank !== 0) await this.sendAsync(group, rank * rank, 0);
    if (rank === 0) {
      const squares = new Map<number, number>();
      for (let count = 1; count < group.size(); count += 1) {
        const { bytes } = await this.probe(group, ANY_SOURCE);      // what would arrive, not received yet
        const { value, source } = await this.receiveMessage<number>(group, ANY_SOURCE);
        squares.set(source, value);
        if (bytes <= 0) throw new Error('a probe reported an empty message');
      }
      console.log(`rank 0 collected ${[...squares].sort(([a], [b]) => a - b).map(([source, square]) => `${source}→${square}`).join(' ')}`);
    }
    // Nobody leaves while rank 0 still receives from ANY_SOURCE: such a receive fails once any
    // member of the group has closed, as it could be the one to send.
    await this.barrier(group);
  }
}

const master = await ColGroupMaster.create();
const member = new Messages(master);
master.addMember('p2p', member);
await member.start();
