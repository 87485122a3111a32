/**
 * One hop (half a round trip) of a small message, ccjs beside its references, in one run:
 *   - in one endpoint (two members, one thread): a Float64Array(1) and a small object, beside a
 *     bare promise hand-off between two async functions (the floor of any awaited hop);
 *   - between two processes over TCP: a Float64Array(1) and a small object, beside a raw Node
 *     `net` ping-pong of 8 bytes;
 *   - between two threads of one process, over whatever device the device table picks for them.
 * Rounds alternate the measurements in fresh processes, so that all see the same machine noise;
 * every repetition is kept, and the table gives the best, the median and the spread (max/min).
 *
 *   node dist/bench/hops.js [--quick] [--rounds N] [--out DIR]
 * The table and the samples go to DIR/hops.md and DIR/hops.json (DIR: bench/results, the committed results, by default).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster } from '../src/index.js';
import { echoes, hop, prefixed, timeHops } from './hopping.js';
import { stats } from './statistics.js';
import type { Samples } from './hopping.js';
import { Progress, warnIfLoaded } from './progress.js';
import { runJob, runScript, runThreads } from './job.js';
import { rawClient, rawEchoServer } from './raw-net.js';

const SCRIPT = fileURLToPath(import.meta.url);
const COMMITTED_RESULTS = path.resolve(path.dirname(SCRIPT), '..', '..', 'bench', 'results');
const quick = process.argv.includes('--quick');
/** Round trips per repetition, and repetitions per series and run. */
const TRIPS = quick ? 2_000 : 20_000;
const REPETITIONS = quick ? 3 : 7;
const WARM_UP = quick ? 2_000 : 20_000;
const SMALL_OBJECT = { id: 7, name: 'pivot', value: 3.25, flags: [true, false] };

const REPEATS = { trips: TRIPS, repetitions: REPETITIONS, warmUp: WARM_UP };
const ECHOES = echoes(REPEATS);

/** The floor: two async functions handing each other a fresh promise, nothing else. */
async function promiseHandOff(): Promise<number[]> {
  let wakeEcho: () => void = () => {};
  let wakeTimer: () => void = () => {};
  let echoWaits = new Promise<void>((resolve) => (wakeEcho = resolve));
  const echo = (async () => {
    for (let i = 0; i < ECHOES; i += 1) {
      await echoWaits;
      echoWaits = new Promise<void>((resolve) => (wakeEcho = resolve));
      wakeTimer();
    }
  })();
  const samples = await timeHops(() => {
    const back = new Promise<void>((resolve) => (wakeTimer = resolve));
    wakeEcho();
    return back;
  }, REPEATS);
  await echo;
  return samples;
}

const SERIES = [
  { name: 'Float64Array(1)', value: Float64Array.of(1.5), repeats: REPEATS },
  { name: 'small object', value: SMALL_OBJECT, repeats: REPEATS },
];

async function inProcess(): Promise<Samples> {
  const handOff = await promiseHandOff();
  const samples = await hop(await ColGroupMaster.create(), true, SERIES);
  return { 'promise hand-off': handOff, ...prefixed('in-process', samples) };
}

/** One endpoint of a two-endpoint job (two processes, or two threads of one process). */
async function endpoint(prefix: string): Promise<void> {
  const master = await ColGroupMaster.create();
  const samples = await hop(master, false, SERIES);
  if (master.rank === 0) process.stdout.write(`${JSON.stringify({ samples: prefixed(prefix, samples), devices: master.describe() })}\n`);
}

async function raw(): Promise<Samples> {
  let serverDone: Promise<string> | undefined;
  const port = await new Promise<number>((resolve) => {
    serverDone = runScript(SCRIPT, ['raw-server'], {}, (text) => resolve(Number(text.trim())));
  });
  const client = await rawClient(port);
  const payload = new Uint8Array(8);
  const samples = await timeHops(() => client.roundTrip(payload), REPEATS);
  client.close();
  await serverDone;
  return { 'raw net 8 B': samples };
}

async function threads(): Promise<{ samples: Samples; devices: string }> {
  return JSON.parse(await runThreads(SCRIPT, 2, ['endpoint', 'thread-to-thread', ...flags()])) as { samples: Samples; devices: string };
}

function flags(): string[] {
  return quick ? ['--quick'] : [];
}

/** The directory --out names (made if missing), or the committed results'. */
function resultsDirectory(): string {
  const index = process.argv.indexOf('--out');
  if (index < 0) return COMMITTED_RESULTS;
  const directory = process.argv[index + 1];
  if (directory === undefined || directory.startsWith('--')) throw new Error('--out needs a directory');
  return path.resolve(directory);
}

async function orchestrate(): Promise<void> {
  const results = resultsDirectory();
  warnIfLoaded();
  const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 3;
  const all: Samples = {};
  let devices = '';
  const keep = (samples: Samples) => {
    for (const [name, values] of Object.entries(samples)) (all[name] ??= []).push(...values);
  };
  const progress = new Progress('hops', rounds * 4);
  for (let round = 1; round <= rounds; round += 1) {
    keep(JSON.parse(await runScript(SCRIPT, ['in-process', ...flags()])) as Samples);
    progress.tick(`round ${round}: in one endpoint`);
    keep(await raw());
    progress.tick(`round ${round}: raw net`);
    keep((JSON.parse(await runJob(SCRIPT, 2, ['endpoint', 'tcp', ...flags()])) as { samples: Samples }).samples);
    progress.tick(`round ${round}: tcp`);
    const threaded = await threads();
    keep(threaded.samples);
    devices = threaded.devices;
    progress.tick(`round ${round}: threads`);
  }
  progress.finish();
  const rows: [string, string | undefined][] = [
    ['promise hand-off', undefined],
    ['in-process Float64Array(1)', 'promise hand-off'],
    ['in-process small object', 'promise hand-off'],
    ['raw net 8 B', undefined],
    ['tcp Float64Array(1)', 'raw net 8 B'],
    ['tcp small object', 'raw net 8 B'],
    ['thread-to-thread Float64Array(1)', 'raw net 8 B'],
    ['thread-to-thread small object', 'raw net 8 B'],
  ];
  const lines = ['| hop | best µs | median µs | spread (max/min) | best ÷ reference (median ÷ median) |', '|---|---:|---:|---:|---|'];
  for (const [name, reference] of rows) {
    const own = stats(all[name] ?? [NaN]);
    const versus = reference === undefined ? '' : `${(own.best / stats(all[reference] ?? [NaN]).best).toFixed(2)}× ${reference} (${(own.median / stats(all[reference] ?? [NaN]).median).toFixed(2)}×)`;
    lines.push(`| ${name} | ${own.best.toFixed(3)} | ${own.median.toFixed(3)} | ${own.spread.toFixed(2)} | ${versus} |`);
  }
  const table = lines.join('\n');
  const heading = `One hop, ${rounds} rounds × ${REPETITIONS} repetitions × ${TRIPS} round trips (Node ${process.version}, ${new Date().toISOString()})`;
  process.stdout.write(`\n${heading}\n\n${table}\n\nDevices of the thread-to-thread job:\n${devices}\n`);
  fs.mkdirSync(results, { recursive: true });
  fs.writeFileSync(path.join(results, 'hops.json'), `${JSON.stringify(all, null, 2)}\n`);
  fs.writeFileSync(path.join(results, 'hops.md'), `${heading}\n\n${table}\n\nDevices of the thread-to-thread job:\n\n\`\`\`\n${devices}\n\`\`\`\n`);
}

const role = process.argv[2];
if (role === 'raw-server') await rawEchoServer();
else if (role === 'in-process') process.stdout.write(`${JSON.stringify(await inProcess())}\n`);
else if (role === 'endpoint') await endpoint(process.argv[3] as string);
else await orchestrate();
