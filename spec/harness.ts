/** Test helpers: in-process jobs over real sockets, and real multi-process jobs. */
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ColGroupMaster, ColMember } from '../src/index.js';
import type { ColGroup, MasterOptions } from '../src/index.js';
import { Hosts } from '../bench/netns.js';

/** dist/ of the compiled package. */
export const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const packageRoot = path.resolve(distRoot, '..');
export const ccjrun = path.join(packageRoot, 'bin', 'ccjrun.js');

export function fixture(name: string): string {
  return path.join(distRoot, 'spec', 'fixtures', `${name}.js`);
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A job of `count` processes' masters inside this process: each has its own coordinator
 * connection and devices; unless `options.transport` says otherwise, TCP serves every pair, so
 * every cross-master message crosses a real socket.
 */
export async function createMasters(count: number, options: MasterOptions = {}): Promise<ColGroupMaster[]> {
  const coordinator = `127.0.0.1:${await freePort()}`;
  return Promise.all(
    [...Array(count).keys()].map((processRank) =>
      ColGroupMaster.create({ abortOnError: false, autoClose: false, timeoutMs: 10_000, transport: 'tcp', ...options, processRank, processCount: count, coordinator }),
    ),
  );
}

export async function closeAll(masters: readonly ColGroupMaster[]): Promise<void> {
  await Promise.all(masters.map((master) => master.close()));
}

/** For a mocha `describe`: masters created before its tests and closed after them. */
export function mastersForSuite(count: number, options: MasterOptions = {}): () => ColGroupMaster[] {
  let masters: ColGroupMaster[] = [];
  before(async function () {
    masters = await createMasters(count, options);
  });
  after(async function () {
    await closeAll(masters);
  });
  return () => masters;
}

/** A member whose run() is given as a function. */
export class TestMember extends ColMember {
  /** Position among the members runGroup made in the same process. */
  index = 0;

  constructor(private readonly body: (member: TestMember) => Promise<void> = async () => {}) {
    super();
  }

  override async run(): Promise<void> {
    await this.body(this);
  }
}

/**
 * Adds `perProcess[p]` members of each master to `name`, runs `body` in every member with its
 * group, and resolves with the members' results in group-rank order.
 */
export async function runGroup<T>(
  masters: readonly ColGroupMaster[],
  perProcess: readonly number[],
  name: string,
  body: (member: ColMember, group: ColGroup, rank: number) => Promise<T>,
): Promise<T[]> {
  const size = perProcess.reduce((a, b) => a + b, 0);
  const results: { rank: number; value: T }[] = [];
  const members: TestMember[] = [];
  masters.forEach((master, processRank) => {
    for (let i = 0; i < perProcess[processRank]; i += 1) {
      const member: TestMember = new TestMember(async (self) => {
        const group = await master.getGroup(name, size);
        const rank = group.getRank(self);
        results.push({ rank, value: await body(self, group, rank) });
      });
      member.index = i;
      master.addMember(name, member);
      members.push(member);
    }
  });
  try {
    await Promise.all(members.map((member) => member.start()));
  } catch (error) {
    // Release the members still waiting for the failed one, so that the masters can close.
    await Promise.all(members.map((member) => member.done()));
    throw error;
  }
  return results.sort((a, b) => a.rank - b.rank).map((result) => result.value);
}

export interface Completed {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** The environment `env` adds to (default: this process's; environmentWithoutLaunchers() for a job that must not see the test runner's launcher). */
  readonly base?: NodeJS.ProcessEnv;
  /** Sees the standard output so far whenever more comes. */
  readonly onOutput?: (stdout: string) => void;
}

/** Runs a command to completion (killing it after `timeoutMs`), collecting its output. */
export function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, { base = process.env, onOutput }: RunOptions = {}): Promise<Completed> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onOutput?.(stdout);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // SIGTERM first: a launcher passes it on to its ranks, which SIGKILL would leave running.
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** What a scenario job printed: each endpoint's result by endpoint rank, and the job's output. */
export interface ScenarioRun {
  readonly results: unknown[];
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a test job under ccjrun (processes × threads endpoints) in which every endpoint runs the
 * scenario `name` of spec/scenarios/ with `args`; resolves with each endpoint's result, by
 * endpoint rank. A failing endpoint fails the job, and this rejects with its output.
 */
export function runScenario(processes: number, threads: number, name: string, args: object = {}, env: NodeJS.ProcessEnv = {}, timeoutMs = 100_000): Promise<ScenarioRun> {
  return runScenarioWith(['-n', String(processes), '--threads', String(threads)], name, args, env, timeoutMs);
}

/** runScenario with ccjrun's options as given (e.g. --hosts and --launch-agent). */
export async function runScenarioWith(ccjrunOptions: readonly string[], name: string, args: object = {}, env: NodeJS.ProcessEnv = {}, timeoutMs = 100_000): Promise<ScenarioRun> {
  // A job that hangs says where before it is stopped (within mocha's 120 s), in the error below.
  const watchdog = { CCJS_WATCHDOG_MS: String(Math.min(30_000, timeoutMs / 3)) };
  const result = await run(process.execPath, [ccjrun, ...ccjrunOptions, fixture('scenario'), name, JSON.stringify(args)], { ...watchdog, ...env }, timeoutMs);
  if (result.code !== 0) throw new Error(`job '${name}' (ccjrun ${ccjrunOptions.join(' ')}) exited with ${result.code ?? result.signal}:\n${result.stderr.slice(-4000)}`);
  const results: unknown[] = [];
  for (const line of result.stdout.split('\n')) {
    const match = /^\[(\d+)\] RESULT (.*)$/.exec(line);
    if (match) results[Number(match[1])] = JSON.parse(match[2] as string);
  }
  return { results, stdout: result.stdout, stderr: result.stderr };
}

/** A process of a job started by spawnJob, with what it printed so far. */
export interface SpawnedProcess {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  /** Its exit code, once its output is drained. */
  readonly exited: Promise<number | null>;
}

/**
 * Starts `processes` processes of `script` as one job without a launcher (CCJS_RANK, CCJS_SIZE,
 * a coordinator port of their own), so that one can be killed without the others being stopped.
 */
export async function spawnJob(processes: number, script: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<SpawnedProcess[]> {
  const coordinator = `127.0.0.1:${await freePort()}`;
  return Array.from({ length: processes }, (_, rank) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, CCJS_RANK: String(rank), CCJS_SIZE: String(processes), CCJS_COORDINATOR: coordinator, CCJS_TIMEOUT_MS: '5000', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const spawned: SpawnedProcess = { child, stdout: '', stderr: '', exited: new Promise((resolve) => child.on('close', (code) => resolve(code))) };
    child.stdout?.on('data', (chunk: Buffer) => (spawned.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (spawned.stderr += chunk.toString()));
    return spawned;
  });
}

/** Resolves once `spawned` has printed `text`. */
export function printed(spawned: SpawnedProcess, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (spawned.stdout.includes(text)) resolve();
    else spawned.child.stdout?.on('data', () => spawned.stdout.includes(text) && resolve());
  });
}

/** This process's environment without any launcher's variables (so that a job started from a test finds only its own launcher). */
export function environmentWithoutLaunchers(): Record<string, string> {
  const launcherVariable = /^(CCJS_|OMPI_|PMIX_|PMI_|MPI_LOCAL|SLURM_)|^(RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT)$/;
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && !launcherVariable.test(entry[0]),
    ),
  );
}

/** `count` test hosts (bench/netns.ts) for a suite; where namespaces cannot be made, the suite is skipped, saying why. */
export function hostsOrSkip(suite: Mocha.Context, count: number): Hosts {
  try {
    return new Hosts(count);
  } catch (error) {
    console.warn(`    skipped: cannot make network namespaces here (${(error as Error).message.split('\n')[0]}); these tests need root and iproute2`);
    return suite.skip();
  }
}
