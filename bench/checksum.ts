/**
 * What the tcp device's opt-in frame checksum (CCJS_CHECKSUM, CRC32C) costs: a ping-pong
 * (sendAsync/receive of a Uint8Array) of 8 B and 1 MiB between two processes over tcp, checksum off
 * and on in alternating rounds (a fresh job each), in one run. Each job reports the half round
 * trip, best of 5 repetitions; the table gives, per setting, the best round and the spread (min–max
 * over rounds).
 *
 *   node dist/bench/checksum.js [rounds]      (default 4)
 */
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import { runJob } from './job.js';

const SCRIPT = fileURLToPath(import.meta.url);
const SIZES = [8, 1 << 20];
const REPETITIONS = 5;

function roundTrips(bytes: number): number {
  return bytes < 4096 ? 2000 : 100;
}

class PingPong extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('pingpong', 2);
    const rank = group.getRank(this);
    for (const bytes of SIZES) {
      const message = new Uint8Array(bytes).fill(rank + 1);
      const trips = roundTrips(bytes);
      let best = Infinity;
      for (let repetition = 0; repetition <= REPETITIONS; repetition += 1) {
        const started = process.hrtime.bigint();
        for (let trip = 0; trip < trips; trip += 1) {
          if (rank === 0) {
            await this.sendAsync(group, message, 1);
            await this.receive(group, 1);
          } else {
            await this.receive(group, 0);
            await this.sendAsync(group, message, 0);
          }
        }
        // Repetition 0 warms up.
        if (repetition > 0) best = Math.min(best, Number(process.hrtime.bigint() - started) / 1000 / trips / 2);
      }
      if (rank === 0) console.log(`RESULT ${bytes} ${best.toFixed(2)}`);
    }
  }
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 4);
  const results = new Map<string, number[]>();
  for (let round = 0; round < rounds; round += 1) {
    for (const checksum of round % 2 === 0 ? ['0', '1'] : ['1', '0']) {
      process.env.CCJS_CHECKSUM = checksum;
      const output = await runJob(SCRIPT, 2, ['member']);
      for (const [, bytes, microseconds] of output.matchAll(/^RESULT (\d+) ([\d.]+)$/gm)) {
        const key = `${bytes} ${checksum}`;
        results.set(key, [...(results.get(key) ?? []), Number(microseconds)]);
      }
    }
  }
  console.log('| message | checksum off: best (min–max) µs | checksum on: best (min–max) µs | on / off (best) |');
  console.log('|---|---|---|---|');
  for (const bytes of SIZES) {
    const [off, on] = ['0', '1'].map((checksum) => results.get(`${bytes} ${checksum}`) ?? []) as [number[], number[]];
    const cell = (values: number[]) => `${Math.min(...values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;
    console.log(`| ${bytes === 8 ? '8 B' : '1 MiB'} | ${cell(off)} | ${cell(on)} | ${(Math.min(...on) / Math.min(...off)).toFixed(2)} |`);
  }
}

if (process.argv[2] === 'member') {
  const master = await ColGroupMaster.create();
  const member = new PingPong(master);
  master.addMember('pingpong', member);
  await member.start();
} else {
  await main();
}
