/**
 * Ring: one member per endpoint passes a token around the ring `laps` times; rank 0 checks that
 * it made every hop.   npx ccjrun -n 4 examples/ring 3
 */
import { ColGroupMaster, ColMember } from '../src/index.js';

const laps = Number(process.argv[2] ?? '3');

class RingMember extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('ring', this.master.getNumberOfCpus());
    const rank = group.getRank(this);
    const size = group.size();
    const next = (rank + 1) % size;
    const previous = (rank + size - 1) % size;
    let token = { hops: 0, visited: [] as number[] };
    for (let lap = 0; lap < laps; lap += 1) {
      if (rank === 0) {
        await this.sendAsync(group, { hops: token.hops + 1, visited: [...token.visited, rank] }, next);
        token = await this.receive(group, previous);
      } else {
        const received = await this.receive<typeof token>(group, previous);
        await this.sendAsync(group, { hops: received.hops + 1, visited: [...received.visited, rank] }, next);
      }
    }
    if (rank === 0) {
      const expected = laps * size;
      if (token.hops !== expected) throw new Error(`ring: ${token.hops} hops, expected ${expected}`);
      console.log(`ring ok: ${size} members, ${token.hops} hops`);
    }
  }
}

const master = await ColGroupMaster.create();
const member = new RingMember(master);
master.addMember('ring', member);
await member.start();
