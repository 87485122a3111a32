/**
 * Tuning: choosing the algorithm of a collective per call, per group, for the whole job
 * (CCJS_ALGORITHMS) or by rules in ccjs.config.json (written by npx ccjtune). CCJS_TRACE=1 prints
 * what each call ran.
 *   CCJS_TRACE=1 npx ccjrun -n 3 examples/tutorial/tuning.ts
 */
import { ColGroupMaster, ColMember, Reductions } from 'ccjs';

class Tuned extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('tuning', this.master.size);
    const rank = group.getRank(this);
    const data = Float64Array.of(rank, rank);

    await this.allReduce(group, data, Reductions.SUM, { algorithm: 'ring' });   // this call only
    group.setAlgorithm('broadcast', 'mst');                                     // this group, from now on
    await this.broadcast(group, rank === 0 ? data : null, 0);
    await this.reduce(group, data, Reductions.MAX, 0);                          // CCJS_ALGORITHMS or the tables
    const prefix = await this.scan(group, rank, Reductions.SUM);                 // the config file or the built-in table
    console.log(`rank ${rank}: prefix sum ${prefix}`);
  }
}

const master = await ColGroupMaster.create();
const member = new Tuned(master);
master.addMember('tuning', member);
await member.start();
