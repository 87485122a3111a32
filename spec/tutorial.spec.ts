/**
 * Runs every example of docs/getting-started.md (examples/tutorial/) as the guide does, through
 * ccjrun with the TypeScript path, and checks what it prints.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ccjrun, packageRoot, run } from './harness.js';
import type { Completed } from './harness.js';

function example(name: string): string {
  return path.join(packageRoot, 'examples', 'tutorial', `${name}.ts`);
}

/** `npx ccjrun <args> examples/tutorial/<name>.ts <scriptArgs>`, which must succeed. */
async function runExample(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, scriptArgs: readonly string[] = []): Promise<Completed> {
  const result = await run(process.execPath, [ccjrun, ...args, example(name), ...scriptArgs], env);
  expect(result.code, `${name} exited with ${result.code} (signal ${result.signal})\n${result.stderr}${result.stdout}`).to.equal(0);
  return result;
}

/** The lines rank `rank` printed, without ccjrun's "[rank] " prefix, in order. */
function linesOf(output: string, rank: number): string[] {
  const prefix = `[${rank}] `;
  return output
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

/**
 * Runs a job that hangs on purpose until its stderr holds every line `until` wants, then stops it
 * with SIGTERM (as Ctrl-C would) and returns what it printed. A job still silent after a minute is
 * killed, so that a failing test leaves no processes behind.
 */
function runUntil(args: readonly string[], env: NodeJS.ProcessEnv, until: (stderr: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ccjrun, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stopped = false;
    const guard = setTimeout(() => child.kill('SIGTERM'), 60_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!stopped && until(stderr)) {
        stopped = true;
        child.kill('SIGTERM');
      }
    });
    child.stdout.resume();
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(guard);
      if (stopped) resolve(stderr);
      else reject(new Error(`the job ended before it printed what was expected:\n${stderr}`));
    });
  });
}

describe('the getting-started guide (examples/tutorial)', function () {
  it('shows only code that is in the examples: every TypeScript snippet is lines of one of them', function () {
    const guide = fs.readFileSync(path.join(packageRoot, 'docs', 'getting-started.md'), 'utf8');
    const directory = path.join(packageRoot, 'examples', 'tutorial');
    const examples = fs.readdirSync(directory).map((file) => fs.readFileSync(path.join(directory, file), 'utf8').split('\n').map((line) => line.trim()));
    const snippets = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => (match[1] as string).trimEnd().split('\n').map((line) => line.trim()));
    expect(snippets.length).to.be.above(10);
    for (const snippet of snippets) {
      const found = examples.some((lines) => lines.some((_, start) => snippet.every((line, offset) => lines[start + offset] === line)));
      expect(found, `not in examples/tutorial:\n${snippet.join('\n')}`).to.equal(true);
    }
  });

  it('hello: every endpoint says its rank and where it runs', async function () {
    const { stdout } = await runExample('hello', ['-n', '3']);
    for (const rank of [0, 1, 2]) {
      expect(linesOf(stdout, rank)).to.deep.equal([`hello from rank ${rank} of 3 (process ${rank} on ${os.hostname()})`]);
    }
  });

  it('p2p: objects, tags, any source and probes', async function () {
    const { stdout } = await runExample('p2p', ['-n', '3']);
    expect(linesOf(stdout, 1)).to.deep.equal(["rank 1 got a=7 b=3.14 samples=Float64Array [1, 2, 3]", "rank 1 received 'second sent' (tag 22), then 'first sent' (tag 11)"]);
    expect(linesOf(stdout, 0)).to.deep.equal(['rank 0 collected 1→1 2→4']);
  });

  it('collectives: broadcast, scatter, gather, allReduce, barrier', async function () {
    const { stdout } = await runExample('collectives', ['-n', '4']);
    expect(linesOf(stdout, 0)).to.deep.equal(['gathered [0.5,2,4.5,8] with step 0.5 for x,y', 'rank 0: sum of ranks 6']);
    for (const rank of [1, 2, 3]) expect(linesOf(stdout, rank)).to.deep.equal([`rank ${rank}: sum of ranks 6`]);
  });

  it('dividable: a matrix-vector product by row blocks, and a DividableData class of its own', async function () {
    const { stdout } = await runExample('dividable', ['-n', '3']);
    const n = 7;
    const y = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 2 : i + j) * (j + 1)).reduce((a, b) => a + b));
    expect(linesOf(stdout, 0)).to.deep.equal(['rank 0 holds rows 0..2', `y = [${y.join(', ')}]`, 'THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG']);
    expect(linesOf(stdout, 1)).to.deep.equal(['rank 1 holds rows 3..4']);
    expect(linesOf(stdout, 2)).to.deep.equal(['rank 2 holds rows 5..6']);
  });

  it('reductions: built-in, a plain function, a non-commutative one, a registered class', async function () {
    const { stdout } = await runExample('reductions', ['-n', '4']);
    expect(linesOf(stdout, 0)).to.deep.equal([
      "sums [6, 4], MAXLOC value 5 at rank 1, gcd 12, concatenated 'abcd'",
      // Means 0, 10, 20, 30 weighted by counts 1, 2, 3, 4.
      'merged: true count 10 mean 20',
      'gathered 4 Stats, all instances: true',
    ]);
  });

  it('threads: 2 processes × 2 threads are 4 endpoints, threads of a process on shared memory', async function () {
    const { stdout } = await runExample('threads', ['-n', '2', '--threads', '2']);
    for (const rank of [0, 1, 2, 3]) {
      expect(linesOf(stdout, rank)[0]).to.equal(`rank ${rank}: process ${Math.floor(rank / 2)}, thread ${rank % 2}; 4 members`);
    }
    expect(linesOf(stdout, 0).slice(1)).to.include('  → endpoint 1 (process 0, thread 1): shm (same process)');
  });

  it('tuning: per call, per group, CCJS_ALGORITHMS and the config file, as CCJS_TRACE shows them', async function () {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-tutorial-'));
    try {
      const config = path.join(directory, 'ccjs.config.json');
      fs.writeFileSync(config, JSON.stringify({ collectives: { scan: [{ algorithm: 'linear' }] } }));
      const { stdout, stderr } = await runExample('tuning', ['-n', '3'], { CCJS_TRACE: '1', CCJS_ALGORITHMS: 'reduce=flat-blocking', CCJS_CONFIG: config });
      for (const rank of [0, 1, 2]) {
        const ran = linesOf(stderr, rank)
          .map((line) => /^ccjs trace: group 'tuning' rank \d: (\w+)\([^)]*\) ([\w-]+),/.exec(line))
          .filter((match) => match !== null)
          .map((match) => `${match[1]} ${match[2]}`);
        expect(ran, stderr).to.deep.equal(['allReduce ring', 'broadcast mst', 'reduce flat-blocking', 'scan linear']);
        expect(linesOf(stdout, rank)).to.deep.equal([`rank ${rank}: prefix sum ${(rank * (rank + 1)) / 2}`]);
      }
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('debugging: the watchdog names the receives of a deadlock, and the fixed exchange completes', async function () {
    const watchdogLine = (rank: number, peer: number) => `[${rank}]   - receive from rank ${peer} of group 'exchange' (tag 7), member Exchange #0 of process ${rank}`;
    const stderr = await runUntil(['-n', '2', example('debugging')], { CCJS_WATCHDOG_MS: '500' }, (text) => text.includes(watchdogLine(0, 1)) && text.includes(watchdogLine(1, 0)));
    // Each endpoint logs once: because its own watchdog fired, or because the other's did first.
    for (const [rank, peer] of [[0, 1], [1, 0]] as const) {
      const reason = String.raw`(a call has waited more than 500 ms|the watchdog of process ${peer} fired)`;
      expect(stderr).to.match(new RegExp(String.raw`^\[${rank}\] ccjs watchdog: process ${rank}: ${reason}; 1 pending call\(s\)$`, 'm'));
    }

    const { stdout } = await runExample('debugging', ['-n', '2'], {}, ['--fixed']);
    expect(linesOf(stdout, 0)).to.deep.equal(["rank 0 received 'greetings from 1'"]);
    expect(linesOf(stdout, 1)).to.deep.equal(["rank 1 received 'greetings from 0'"]);
  });
});
