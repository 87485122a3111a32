/**
 * Threads: with --threads T every process runs this script on its main thread and in T − 1
 * worker threads, each an endpoint with its own master; endpoints of one process talk through
 * shared memory.
 *   npx ccjrun -n 2 --threads 2 examples/tutorial/threads.ts
 */
import { ColGroupMaster, ColMember, Reductions } from 'ccjs';

class Threaded extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('threads', this.master.size);
    const rank = group.getRank(this);
    const { processRank, threadRank } = this.master;
    const total = await this.allReduce(group, 1, Reductions.SUM);
    console.log(`rank ${rank}: process ${processRank}, thread ${threadRank}; ${total} members`);
    if (rank === 0) console.log(this.master.describe());
  }
}

const master = await ColGroupMaster.create();
const member = new Threaded(master);
master.addMember('threads', member);
await member.start();
