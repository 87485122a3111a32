/**
 * Debugging a hang: both members receive before they send, so neither ever sends. With
 * CCJS_WATCHDOG_MS=2000 every endpoint logs the calls it waits in; --fixed exchanges with
 * sendReceive, which posts the receive and sends at once.
 *   CCJS_WATCHDOG_MS=2000 npx ccjrun -n 2 examples/tutorial/debugging.ts          (hangs: Ctrl-C)
 *   npx ccjrun -n 2 examples/tutorial/debugging.ts --fixed
 */
import { ColGroupMaster, ColMember } from 'ccjs';

const fixed = process.argv.includes('--fixed');

class Exchange extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('exchange', 2);
    const rank = group.getRank(this);
    const peer = 1 - rank;
    let received: string;
    if (fixed) {
      received = await this.sendReceive<string>(group, `greetings from ${rank}`, peer, peer, { tag: 7 });
    } else {
      received = await this.receive<string>(group, peer, { tag: 7 });   // waits forever: the peer waits too
      await this.sendAsync(group, `greetings from ${rank}`, peer, { tag: 7 });
    }
    console.log(`rank ${rank} received '${received}'`);
  }
}

const master = await ColGroupMaster.create();
const member = new Exchange(master);
master.addMember('exchange', member);
await member.start();
