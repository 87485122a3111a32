/**
 * One benchmark of this checkout beside the same benchmark of another checkout (an earlier commit,
 * built), in one run: rounds alternate the two builds, and which goes first, so that both see the
 * same machine noise. Each build's run writes its samples to its own bench/results/<bench>.json;
 * this collects them per round and compares every series both measured: best and median of each,
 * and the ratio this ÷ other (every sample is a time: below 1 is faster here).
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
 *   node dist/bench/builds.js --other /tmp/before [--bench shm] [--rounds 3] [-- args for the benchmark]
 *
 * Writes bench/results/builds-<bench>.md (and .json, every sample of both builds).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript } from './job.js';
import { Progress, warnIfLoaded } from './progress.js';
import { stats } from './statistics.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

type Samples = Record<string, number[]>;

interface Build {
  readonly label: string;
  readonly root: string;
  readonly samples: Samples;
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
}

/** Runs `bench` of `build` once and adds what it wrote to the build's samples. */
async function measure(build: Build, bench: string, args: readonly string[]): Promise<void> {
  const script = path.join(build.root, 'dist', 'bench', `${bench}.js`);
  await runScript(script, ['--rounds', '1', ...args]);
  const written = JSON.parse(fs.readFileSync(path.join(build.root, 'bench', 'results', `${bench}.json`), 'utf8')) as Samples;
  for (const [series, values] of Object.entries(written)) (build.samples[series] ??= []).push(...values);
}

function table(here: Build, other: Build, bench: string, rounds: number): string {
  const lines = [
    `# ${bench}: this checkout beside ${other.root}`,
    '',
    `${rounds} rounds, alternating; every series is a time (µs, ms or s as the benchmark measures it). Ratio: this ÷ other (below 1: faster here).`,
    '',
    '| series | this best | other best | ratio of bests | this median | other median | ratio of medians |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const series of Object.keys(here.samples)) {
    const mine = here.samples[series];
    const theirs = other.samples[series];
    if (mine === undefined || theirs === undefined || mine.length === 0 || theirs.length === 0) continue;
    const a = stats(mine);
    const b = stats(theirs);
    const number = (value: number): string => value.toPrecision(4);
    lines.push(`| ${series} | ${number(a.best)} | ${number(b.best)} | ${(a.best / b.best).toFixed(2)} | ${number(a.median)} | ${number(b.median)} | ${(a.median / b.median).toFixed(2)} |`);
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const otherRoot = option('--other');
  if (otherRoot === undefined) throw new Error('usage: node dist/bench/builds.js --other <checkout, built> [--bench shm] [--rounds 3] [-- benchmark args]');
  const bench = option('--bench') ?? 'shm';
  const rounds = Number(option('--rounds') ?? 3);
  const separator = process.argv.indexOf('--');
  const args = separator < 0 ? [] : process.argv.slice(separator + 1);
  warnIfLoaded();
  const here: Build = { label: 'this', root: ROOT, samples: {} };
  const other: Build = { label: 'other', root: path.resolve(otherRoot), samples: {} };
  const progress = new Progress(`builds ${bench}`, rounds * 2);
  let text = '';
  for (let round = 1; round <= rounds; round += 1) {
    for (const build of round % 2 === 1 ? [here, other] : [other, here]) {
      await measure(build, bench, args);
      progress.tick(`round ${round}: ${build.label}`);
    }
    // Written after every round, so that a run cut short still leaves its complete rounds.
    text = table(here, other, bench, round);
    write(bench, here, other, text);
  }
  progress.finish();
  process.stdout.write(`\n${text}`);
}

function write(bench: string, here: Build, other: Build, text: string): void {
  const results = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(results, { recursive: true });
  fs.writeFileSync(path.join(results, `builds-${bench}.md`), text);
  fs.writeFileSync(path.join(results, `builds-${bench}.json`), `${JSON.stringify({ this: here.samples, other: { root: other.root, samples: other.samples } }, null, 1)}\n`);
}

await main();
