/**
 * Collectives: broadcast, scatter, gather, allReduce and barrier; every member calls each one,
 * in the same order.
 *   npx ccjrun -n 4 examples/tutorial/collectives.ts
 */
import { ColGroupMaster, ColMember, DividableArray, Reductions } from 'ccjs';

interface Settings {
  readonly step: number;
  readonly names: string[];
}

class Collectives extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('collectives', this.master.size);
    const rank = group.getRank(this);
    const size = group.size();

    // Broadcast: the root's object to everyone (non-roots pass null and get the root's object).
    const settings = (await this.broadcast(group, rank === 0 ? { step: 0.5, names: ['x', 'y'] } : null, 0)) as Settings;

    // Scatter: element r of the root's DividableArray goes to rank r.
    const squares = rank === 0 ? new DividableArray(Array.from({ length: size }, (_, i) => (i + 1) ** 2)) : null;
    const [mine] = await this.scatter(group, squares, 0);
    if (mine !== (rank + 1) ** 2) throw new Error(`rank ${rank} got ${mine}`);

    // Gather: everyone's value into the root's object, block r from rank r.
    const gathered = await this.gather(group, rank === 0 ? new DividableArray(new Array<number>(size)) : null, [mine * settings.step], 0);
    if (gathered !== null) console.log(`gathered ${JSON.stringify(gathered.array)} with step ${settings.step} for ${settings.names.join(',')}`);

    // allReduce: every member gets the sum of all ranks.
    const total = await this.allReduce(group, rank, Reductions.SUM);
    console.log(`rank ${rank}: sum of ranks ${total}`);

    await this.barrier(group);
  }
}

const master = await ColGroupMaster.create();
const member = new Collectives(master);
master.addMember('collectives', member);
await member.start();
