/**
 * Hello: one member per endpoint joins the group 'world' and says where it runs.
 *   npx ccjrun -n 4 examples/tutorial/hello.ts      (or mpirun -np 4 node dist/examples/tutorial/hello.js)
 */
import { ColGroupMaster, ColMember } from 'ccjs';

class Hello extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const world = await this.master.getGroup('world', this.master.size);
    console.log(`hello from rank ${world.getRank(this)} of ${world.size()} (${this.master.label} on ${this.master.host})`);
  }
}

const master = await ColGroupMaster.create();
const member = new Hello(master);
master.addMember('world', member);
await member.start();
