/**
 * How long a tight loop of `await sendAsync` keeps its thread's event loop from turning (issue 11,
 * item 5). Rank 0 sends small objects to rank 1, which receives them all; a 1 ms interval timer
 * on rank 0 measures the longest gap between two of its ticks while the loop runs (a gap of g ms
 * means timers, sockets and peer losses waited about g ms). Between two members of one endpoint
 * (the local device), two processes over TCP and shm, and two threads over shm.
 *
 *   node dist/bench/starvation.js [--sends N] [--rounds R]
 */
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import { runJob, runScript, runThreads } from './job.js';
import { warnIfLoaded } from './progress.js';

const SCRIPT = fileURLToPath(import.meta.url);
const MESSAGE = { id: 7, name: 'pivot', value: 3.25 };

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
}

const SENDS = option('--sends', 200_000);

/** What rank 0 saw. */
interface Stretch {
  /** The longest gap between two ticks of the 1 ms interval, in ms. */
  longestGapMs: number;
  /** The 99th percentile of those gaps, in ms (the longest is often the machine's noise: a GC, a preempted process). */
  p99GapMs: number;
  /** The most sends that resolved between two ticks: a measure the machine's load cannot stretch. */
  mostSendsBetweenTicks: number;
  /** Ticks of the interval during the loop. */
  ticks: number;
  /** The loop's duration, in ms. */
  loopMs: number;
}

class Flooder extends ColMember {
  stretch: Stretch | undefined;

  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('starvation', 2);
    if (group.getRank(this) === 1) {
      for (let i = 0; i < SENDS; i += 1) await this.receive(group, 0);
      return;
    }
    await this.sendSync(group, MESSAGE, 1);
    const gaps: number[] = [];
    let last = performance.now();
    let sends = 1;
    let sendsAtLastTick = sends;
    let mostSendsBetweenTicks = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
      mostSendsBetweenTicks = Math.max(mostSendsBetweenTicks, sends - sendsAtLastTick);
      sendsAtLastTick = sends;
    }, 1);
    const started = performance.now();
    last = started;
    for (; sends < SENDS; sends += 1) await this.sendAsync(group, MESSAGE, 1);
    const ended = performance.now();
    clearInterval(probe);
    const ticks = gaps.length;
    gaps.push(ended - last);
    mostSendsBetweenTicks = Math.max(mostSendsBetweenTicks, sends - sendsAtLastTick);
    gaps.sort((a, b) => a - b);
    this.stretch = { longestGapMs: gaps[gaps.length - 1] as number, p99GapMs: gaps[Math.floor(gaps.length * 0.99)] as number, mostSendsBetweenTicks, ticks, loopMs: ended - started };
  }
}

/** Runs one or both flooders here; prints rank 0's stretch. */
async function flood(both: boolean): Promise<void> {
  const master = await ColGroupMaster.create();
  const members = Array.from({ length: both ? 2 : 1 }, () => new Flooder(master));
  for (const member of members) master.addMember('starvation', member);
  await Promise.all(members.map((member) => member.start()));
  const stretch = members.find((member) => member.stretch !== undefined)?.stretch;
  if (stretch !== undefined) process.stdout.write(`${JSON.stringify(stretch)}\n`);
}

const CASES: readonly { name: string; run: (args: string[]) => Promise<string> }[] = [
  { name: 'one endpoint (local)', run: (args) => runScript(SCRIPT, ['both', ...args]) },
  { name: 'two processes, tcp', run: (args) => runJob(SCRIPT, 2, ['one', ...args], 'tcp') },
  { name: 'two processes, shm', run: (args) => runJob(SCRIPT, 2, ['one', ...args], 'shm') },
  { name: 'two threads, shm', run: (args) => runThreads(SCRIPT, 2, ['one', ...args], 'shm') },
];

async function orchestrate(): Promise<void> {
  warnIfLoaded();
  const rounds = option('--rounds', 3);
  const args = ['--sends', String(SENDS)];
  const lines = [`${SENDS.toLocaleString('en')} sendAsync of a small object, ${rounds} rounds (Node ${process.version})`, '', '| case | longest gap ms (worst round, median round) | 99th percentile gap ms (worst round) | most sends between two ticks (worst round) | 1 ms ticks per second of loop | µs per send |', '|---|---:|---:|---:|---:|---:|'];
  for (const { name, run } of CASES) {
    const stretches: Stretch[] = [];
    for (let round = 0; round < rounds; round += 1) stretches.push(JSON.parse((await run(args)).trim()) as Stretch);
    const gaps = stretches.map((stretch) => stretch.longestGapMs).sort((a, b) => a - b);
    const p99 = Math.max(...stretches.map((stretch) => stretch.p99GapMs));
    const mostSends = Math.max(...stretches.map((stretch) => stretch.mostSendsBetweenTicks));
    const tickRate = stretches.reduce((sum, stretch) => sum + stretch.ticks / (stretch.loopMs / 1000), 0) / rounds;
    const perSend = stretches.reduce((sum, stretch) => sum + (stretch.loopMs * 1000) / SENDS, 0) / rounds;
    lines.push(`| ${name} | ${(gaps[gaps.length - 1] as number).toFixed(1)}, ${(gaps[Math.floor(gaps.length / 2)] as number).toFixed(1)} | ${p99.toFixed(1)} | ${mostSends} | ${tickRate.toFixed(0)} | ${perSend.toFixed(2)} |`);
    process.stderr.write(`${name}: done\n`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

const role = process.argv[2];
if (role === 'both' || role === 'one') await flood(role === 'both');
else await orchestrate();
