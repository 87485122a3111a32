/**
 * What the network devices' opt-in frame checksum (CCJS_CHECKSUM, CRC32C) costs: a ping-pong
 * (sendAsync/receive of a Uint8Array) of 8 B and 1 MiB between two processes over tcp and over ucx
 * (UCX_TLS=tcp; where the UCX addon is built), with the checksum off (the reference), on, and on
 * with JavaScript's CRC instead of the checksum addon's (CCJS_NO_NATIVE_CHECKSUM=1), rounds
 * rotating the settings (a fresh job each), in one run. Each job reports the half round trip, best
 * of 5 repetitions; the table gives, per setting, the best round, the spread (min–max over rounds)
 * and the ratio of bests to the checksum off. Writes bench/results/checksum.md.
 *
 *   node dist/bench/checksum.js [rounds]      (default 4)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import { ucxNative } from '../transport/ucx/native.js';
import { runJob } from './job.js';
import { Progress, warnIfLoaded } from './progress.js';

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

const SETTINGS = [
  { name: 'off', env: { CCJS_CHECKSUM: '0' } },
  { name: 'on', env: { CCJS_CHECKSUM: '1' } },
  { name: 'on, JavaScript CRC', env: { CCJS_CHECKSUM: '1', CCJS_NO_NATIVE_CHECKSUM: '1' } },
] as const;

const RESULTS = path.resolve(path.dirname(SCRIPT), '..', '..', 'bench', 'results', 'checksum.md');

async function main(): Promise<void> {
  warnIfLoaded();
  const rounds = Number(process.argv[2] ?? 4);
  const transports = typeof ucxNative() === 'string' ? ['tcp'] : ['tcp', 'ucx'];
  const results = new Map<string, number[]>();
  const progress = new Progress('checksum', rounds * transports.length * SETTINGS.length);
  for (let round = 0; round < rounds; round += 1) {
    for (const transport of transports) {
      // Each round starts the rotation at another setting, so that none always runs first.
      for (let index = 0; index < SETTINGS.length; index += 1) {
        const setting = SETTINGS[(index + round) % SETTINGS.length] as (typeof SETTINGS)[number];
        Object.assign(process.env, setting.env, transport === 'ucx' ? { UCX_TLS: 'tcp' } : {});
        const output = await runJob(SCRIPT, 2, ['member'], transport);
        delete process.env.CCJS_NO_NATIVE_CHECKSUM;
        for (const [, bytes, microseconds] of output.matchAll(/^RESULT (\d+) ([\d.]+)$/gm)) {
          const key = `${transport} ${bytes} ${setting.name}`;
          results.set(key, [...(results.get(key) ?? []), Number(microseconds)]);
        }
        progress.tick(`round ${round + 1}: ${transport}, checksum ${setting.name}`);
      }
    }
  }
  progress.finish();
  const cell = (values: readonly number[]) => `${Math.min(...values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;
  const lines = [
    '# Cost of the opt-in frame checksum (CCJS_CHECKSUM, CRC32C on the network devices)',
    '',
    `${rounds} rounds rotating the settings, a fresh 2-process job each, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), loopback; half round trip of sendAsync/receive of a Uint8Array, best of 5 repetitions per job. ucx runs with UCX_TLS=tcp. Re-run: \`node dist/bench/checksum.js ${rounds}\`.`,
    '',
    `| device | message | ${SETTINGS.map((setting) => `checksum ${setting.name}: best (min–max) µs`).join(' | ')} | ${SETTINGS.slice(1).map((setting) => `${setting.name} / off`).join(' | ')} |`,
    `|---|---|${SETTINGS.map(() => '---:').join('|')}|${SETTINGS.slice(1).map(() => '---:').join('|')}|`,
  ];
  for (const transport of transports) {
    for (const bytes of SIZES) {
      const values = SETTINGS.map((setting) => results.get(`${transport} ${bytes} ${setting.name}`) ?? []);
      const reference = Math.min(...(values[0] as number[]));
      lines.push(`| ${transport} | ${bytes === 8 ? '8 B' : '1 MiB'} | ${values.map(cell).join(' | ')} | ${values.slice(1).map((samples) => (Math.min(...samples) / reference).toFixed(2)).join(' | ')} |`);
    }
  }
  lines.push(
    '',
    'Each message is summed once at the sender and once at the receiver. The checksum addon (native/crc32c.cc) uses the CPU\'s crc32 instruction; JavaScript\'s tables (transport/crc32c.ts, slicing-by-8) are the fallback where the addon is not built. Small frames pay the cost of a message of their own instead of the outbox (ucx) or a block header (tcp).',
  );
  fs.writeFileSync(RESULTS, `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
}

if (process.argv[2] === 'member') {
  const master = await ColGroupMaster.create();
  const member = new PingPong(master);
  master.addMember('pingpong', member);
  await member.start();
} else {
  await main();
}
