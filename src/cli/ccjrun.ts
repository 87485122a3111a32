/**
 * ccjrun: runs one ccjs job of N Node.js processes, on this machine or on the hosts of --hosts /
 * --hostfile (started through a launch agent called like ssh), each with T endpoints (its main
 * thread and T − 1 worker threads, --threads). Each process gets CCJS_RANK/CCJS_SIZE/
 * CCJS_COORDINATOR; output lines are prefixed with the "[rank] " of the endpoint that wrote them;
 * when one process fails, the others are stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transform } from 'node:stream';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../base/errors.js';
import { resolveConfig } from '../runtime/config.js';
import { COORDINATOR_ANNOUNCEMENT, endpointPrefixer, forwardInto, lineTransform } from '../runtime/output.js';
import { EXIT_ABORTED_ELSEWHERE } from '../runtime/threads.js';
import { isThisHost, parseHostfile, parseHostList, placeProcesses } from './hosts.js';
import { REMOTE_ENTRY, encodeRemoteSpec } from './remote.js';

const TRANSPORTS = ['auto', 'local', 'tcp', 'shm', 'ucx'] as const;

const USAGE = `Usage: ccjrun -n <processes> [options] <script> [args...]

Runs <script> as <processes> Node.js processes, forming one ccjs job: on this machine, or on
the hosts of --hosts / --hostfile.

Options:
  -n, -np, --np <count>   number of processes (required unless hosts are given: then all slots;
                          also -n4, --np=4)
  -H, --hosts <list>      hosts and their slots, e.g. a:2,b:2 (as mpirun's -H); processes fill
                          each host's slots in turn
  --hostfile <file>       the same, one host per line: "name", "name slots=N" or "name:N"
  --launch-agent <cmd>    how to start a process on another host: <cmd> HOST command args...
                          (default: ssh); this machine's own name and localhost start directly
  --transport <device>    ${TRANSPORTS.join(' | ')} (sets CCJS_TRANSPORT)
  --threads <count>       endpoints per process: the script also runs in count − 1 worker
                          threads of each process, each with its own master (sets CCJS_THREADS)
  --timeout <ms>          group formation and lost-peer timeout (sets CCJS_TIMEOUT_MS)
  -h, --help              print this help

<script> is a .js file, a name standing for <name>.js or <name>/index.js, or a .ts file
of a package whose compiled twin under dist/ exists (a warning says when the .ts file
changed after the twin was built). Each output line is prefixed with
"[rank] ", the rank of the endpoint (process × threads + thread) that wrote it. When a
process fails, the others are stopped and ccjrun exits non-zero.
`;

const KILL_GRACE_MS = 2000;
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
// Shell convention for "killed by signal N".
const SIGNAL_EXIT_BASE = 128;

interface JobOptions {
  processCount: number;
  threadCount: number;
  /** The host of each process; undefined: all on this machine. */
  hosts: string[] | undefined;
  /** The launch agent's command words (`ssh` by default). */
  launchAgent: string[];
  /** The resolved file to run. */
  script: string;
  scriptArguments: string[];
  /** CCJS_* variables that the options set for every rank. */
  environment: Record<string, string>;
}

type ValueOption = 'processes' | 'transport' | 'threads' | 'timeout' | 'hosts' | 'hostfile' | 'launchAgent';

const OPTION_NAMES: Record<string, ValueOption> = {
  '-n': 'processes',
  '-np': 'processes',
  '--np': 'processes',
  '-H': 'hosts',
  '--hosts': 'hosts',
  '--hostfile': 'hostfile',
  '--launch-agent': 'launchAgent',
  '--transport': 'transport',
  '--threads': 'threads',
  '--timeout': 'timeout',
};

/** Returns null for --help; throws ConfigError for bad usage or a script that cannot be found. */
function parseArguments(argv: readonly string[]): JobOptions | null {
  const values: Partial<Record<ValueOption, string>> = {};
  let index = 0;
  for (; index < argv.length; index++) {
    const token = argv[index] ?? '';
    if (token === '-h' || token === '--help') return null;
    if (token === '--') {
      index++;
      break;
    }
    if (!token.startsWith('-')) break;
    const [name, inlineValue] = splitOption(token);
    const option = OPTION_NAMES[name];
    if (option === undefined) throw new ConfigError(`unknown option ${token}`);
    const value = inlineValue ?? argv[++index];
    if (value === undefined) throw new ConfigError(`option ${name} needs a value`);
    values[option] = value;
  }
  const [script, ...scriptArguments] = argv.slice(index);
  if (values.hosts !== undefined && values.hostfile !== undefined) throw new ConfigError('give the hosts either with --hosts or with --hostfile, not both');
  const hostSlots = values.hosts !== undefined ? parseHostList(values.hosts) : values.hostfile !== undefined ? parseHostfile(readHostfile(values.hostfile), values.hostfile) : undefined;
  const allSlots = hostSlots?.reduce((sum, { slots }) => sum + slots, 0);
  if (values.processes === undefined && allSlots === undefined) throw new ConfigError('the number of processes is missing (-n <count>)');
  if (script === undefined) throw new ConfigError('the script to run is missing');
  const processCount = values.processes === undefined ? (allSlots as number) : parseCount('-n', values.processes);
  const launchAgent = (values.launchAgent ?? 'ssh').split(/\s+/).filter((word) => word !== '');
  if (launchAgent.length === 0) throw new ConfigError('--launch-agent needs a command');

  const environment: Record<string, string> = {};
  if (values.transport !== undefined) {
    if (!(TRANSPORTS as readonly string[]).includes(values.transport)) {
      throw new ConfigError(`--transport ${values.transport} is not one of ${TRANSPORTS.join(', ')}`);
    }
    environment.CCJS_TRANSPORT = values.transport;
  }
  if (values.threads !== undefined) environment.CCJS_THREADS = String(parseCount('--threads', values.threads));
  if (values.timeout !== undefined) environment.CCJS_TIMEOUT_MS = String(parseCount('--timeout', values.timeout));
  return {
    processCount,
    threadCount: values.threads === undefined ? 1 : parseCount('--threads', values.threads),
    hosts: hostSlots === undefined ? undefined : placeProcesses(hostSlots, processCount),
    launchAgent,
    script: resolveScript(script, process.cwd()),
    scriptArguments,
    environment,
  };
}

function readHostfile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`hostfile ${file} cannot be read: ${(error as Error).message}`);
  }
}

/** `--name=value` and `-n4` carry their value inline. */
function splitOption(token: string): [name: string, inlineValue: string | undefined] {
  const equals = token.indexOf('=');
  if (equals > 0) return [token.slice(0, equals), token.slice(equals + 1)];
  const attachedCount = /^(-np?)(\d+)$/.exec(token);
  if (attachedCount !== null) return [attachedCount[1] ?? '', attachedCount[2]];
  return [token, undefined];
}

function parseCount(option: string, text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(count) || count < 1) {
    throw new ConfigError(`${option} needs a positive integer, got ${JSON.stringify(text)}`);
  }
  return count;
}

/** The file to run for `argument`: as given, `<name>.js`, `<name>/index.js`, or a .ts file's compiled twin. */
function resolveScript(argument: string, workingDirectory: string): string {
  const requested = path.resolve(workingDirectory, argument);
  const candidates = [
    requested,
    `${requested}.js`,
    path.join(requested, 'index.js'),
    `${requested}.ts`,
    path.join(requested, 'index.ts'),
  ];
  const found = candidates.find(isFile);
  if (found === undefined) {
    throw new ConfigError(`script ${argument} not found (tried ${candidates.map((file) => path.relative(workingDirectory, file)).join(', ')})`);
  }
  return found.endsWith('.ts') ? compiledTwin(found, argument) : found;
}

/**
 * Node cannot run TypeScript: run what tsc made of it. Where that is follows the package's
 * tsconfig.json (outDir and rootDir); without them, tsc's usual layouts are tried: dist/ with the
 * same path (rootDir '.'), or without its first directory (rootDir 'src').
 */
function compiledTwin(typeScriptFile: string, argument: string): string {
  const packageRoot = findPackageRoot(path.dirname(typeScriptFile));
  if (packageRoot === undefined) {
    throw new ConfigError(`${argument} is TypeScript outside any package; compile it and run the .js file`);
  }
  const candidates = twinCandidates(packageRoot, typeScriptFile);
  const twin = candidates.find(isFile);
  if (twin === undefined) {
    throw new ConfigError(`${argument} is TypeScript and has no compiled twin (tried ${candidates.map((file) => path.relative(packageRoot, file)).join(', ')}); build first`);
  }
  warnIfStale(typeScriptFile, twin, argument);
  return twin;
}

/** A twin older than its source runs code that is no longer there: say so, and run it all the same. */
function warnIfStale(typeScriptFile: string, twin: string, argument: string): void {
  if (statSync(typeScriptFile).mtimeMs <= statSync(twin).mtimeMs) return;
  process.stderr.write(
    `ccjrun: warning: ${argument} changed after ${path.relative(process.cwd(), twin)} was built from it; running the older build: rebuild first (e.g. npx tsc)\n`,
  );
}

function twinCandidates(packageRoot: string, typeScriptFile: string): string[] {
  const { outDir, rootDir } = compilerDirectories(packageRoot);
  const output = path.resolve(packageRoot, outDir ?? 'dist');
  const relative = path.relative(packageRoot, typeScriptFile).replace(/\.(m|c)?ts$/, (_, kind: string | undefined) => `.${kind ?? ''}js`);
  const layouts = rootDir !== undefined ? [path.relative(path.resolve(packageRoot, rootDir), path.join(packageRoot, relative))] : [relative, relative.split(path.sep).slice(1).join(path.sep)];
  return [...new Set(layouts.filter((layout) => layout !== '' && !layout.startsWith('..')).map((layout) => path.join(output, layout)))];
}

/** outDir and rootDir of the package's tsconfig.json, if it says (comments and trailing commas allowed, as tsc allows). */
function compilerDirectories(packageRoot: string): { outDir?: string; rootDir?: string } {
  const file = path.join(packageRoot, 'tsconfig.json');
  if (!isFile(file)) return {};
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '').replace(/,(\s*[}\]])/g, '$1');
  try {
    const options = (JSON.parse(text) as { compilerOptions?: { outDir?: unknown; rootDir?: unknown } }).compilerOptions ?? {};
    return {
      outDir: typeof options.outDir === 'string' ? options.outDir : undefined,
      rootDir: typeof options.rootDir === 'string' ? options.rootDir : undefined,
    };
  } catch {
    return {};
  }
}

function findPackageRoot(directory: string): string | undefined {
  if (existsSync(path.join(directory, 'package.json'))) return directory;
  const parent = path.dirname(directory);
  return parent === directory ? undefined : findPackageRoot(parent);
}

function isFile(file: string): boolean {
  return statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
}

function signalExitCode(signal: NodeJS.Signals): number {
  return SIGNAL_EXIT_BASE + osConstants.signals[signal];
}

/** Passes a process's stdout on, taking out the line that announces its coordinator. */
function coordinatorListener(announced: (address: string) => void): Transform {
  const marker = Buffer.from(COORDINATOR_ANNOUNCEMENT);
  return lineTransform((line) => {
    if (!line.subarray(0, marker.length).equals(marker)) return line;
    announced(line.subarray(marker.length).toString().trim());
    return Buffer.alloc(0);
  });
}

/** Runs the job to its end and returns ccjrun's exit code. */
async function runJob(options: JobOptions): Promise<number> {
  const onHosts = options.hosts?.some((host) => !isThisHost(host)) === true;
  const jobEnvironment: Record<string, string | undefined> = {
    ...process.env,
    ...options.environment,
    CCJS_SIZE: String(options.processCount),
    CCJS_JOB_ID: `ccjrun-${randomUUID()}`,
    // A fresh secret per job: every connection of the job proves it knows it (docs/API.md, Security).
    CCJS_SECRET: randomBytes(32).toString('hex'),
    CCJS_SECRET_FILE: undefined,
    // Every rank runs on this host: keep the job's sockets on loopback unless told otherwise.
    CCJS_INTERFACE: process.env.CCJS_INTERFACE ?? (onHosts ? undefined : '127.0.0.1'),
    // Worker threads mark their lines with their endpoint rank, which the prefixer below shows.
    CCJS_OUTPUT_MARKERS: '1',
  };
  // A bad CCJS_* variable or config file is said once, in one line, before any process starts
  // (on other hosts the processes read their own config file).
  if (!onHosts) resolveConfig({}, jobEnvironment);
  let exitCode: number | undefined; // set by the first failure or forwarded signal
  let killTimer: NodeJS.Timeout | undefined;
  const running = new Set<ChildProcess>();

  const stopJob = (signal: NodeJS.Signals): void => {
    for (const child of running) child.kill(signal);
    killTimer ??= setTimeout(() => running.forEach((child) => child.kill('SIGKILL')), KILL_GRACE_MS).unref();
  };

  const { threadCount } = options;
  const processName = (rank: number): string => {
    const name = threadCount === 1 ? `rank ${rank}` : `process ${rank} (endpoints ${rank * threadCount}..${rank * threadCount + threadCount - 1})`;
    return options.hosts === undefined ? name : `${name} on ${options.hosts[rank]}`;
  };
  // A rank stopping because the job was aborted elsewhere is not named: the rank where the failure
  // started exits too (with 1), soon; only if it does not are the others stopped.
  let abortedElsewhere: NodeJS.Timeout | undefined;
  const rankFinished = (rank: number, code: number | null, signal: NodeJS.Signals | null): void => {
    if (exitCode !== undefined || (code === 0 && signal === null)) return;
    if (code === EXIT_ABORTED_ELSEWHERE) {
      abortedElsewhere ??= setTimeout(() => {
        exitCode ??= EXIT_ABORTED_ELSEWHERE;
        stopJob('SIGTERM');
      }, KILL_GRACE_MS).unref();
      return;
    }
    clearTimeout(abortedElsewhere);
    exitCode = signal === null ? (code ?? 1) : signalExitCode(signal);
    const signalNote = signal === null ? '' : ` (signal ${signal})`;
    process.stderr.write(`ccjrun: ${processName(rank)} exited with code ${exitCode}${signalNote}; stopping the job\n`);
    stopJob('SIGTERM');
  };

  const forwardSignal = (signal: NodeJS.Signals): void => {
    exitCode ??= signalExitCode(signal);
    stopJob(signal);
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forwardSignal);
  // Should ccjrun itself fail, leave no rank behind.
  const killLeftovers = (): void => running.forEach((child) => child.kill('SIGKILL'));
  process.on('exit', killLeftovers);

  /** Starts process `rank` with its coordinator setting; resolves once its output is drained. */
  const startProcess = (rank: number, coordinator: string, announced?: (address: string) => void): Promise<void> => {
    const environment = { ...jobEnvironment, CCJS_RANK: String(rank), CCJS_COORDINATOR: coordinator };
    const host = options.hosts?.[rank];
    const local = host === undefined || isThisHost(host);
    const child = local
      ? spawn(process.execPath, [options.script, ...options.scriptArguments], {
          env: environment,
          // Like mpirun, only rank 0 reads ccjrun's stdin.
          stdio: [rank === 0 ? 'inherit' : 'ignore', 'pipe', 'pipe'],
        })
      : spawn(options.launchAgent[0] as string, [...options.launchAgent.slice(1), host, process.execPath, REMOTE_ENTRY, encodeRemoteSpec(remoteSpec(environment))], {
          // A remote process watches its stdin: it ends when this launcher does.
          stdio: ['pipe', 'pipe', 'pipe'],
        });
    running.add(child);
    const stdout = announced === undefined ? child.stdout : child.stdout?.pipe(coordinatorListener(announced));
    // Every rank forwards into each of our output streams: many listeners, but no leak.
    if (stdout) forwardInto(stdout.pipe(endpointPrefixer(rank * threadCount)), process.stdout);
    if (child.stderr) forwardInto(child.stderr.pipe(endpointPrefixer(rank * threadCount)), process.stderr);
    return new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        rankFinished(rank, code, signal);
      });
      // 'close' comes after 'exit' once the output pipes are drained.
      child.once('close', () => resolve());
      child.on('error', (error) => {
        process.stderr.write(`ccjrun: ${processName(rank)}${local ? '' : ` (via ${options.launchAgent.join(' ')} ${host})`}: ${error.message}\n`);
        if (child.pid === undefined) {
          // It never started, so no 'exit' will follow ('close' still does).
          running.delete(child);
          rankFinished(rank, 1, null);
        }
      });
    });
  };
  const remoteSpec = (environment: Record<string, string | undefined>) => ({
    cwd: process.cwd(),
    // What the job needs, not this shell's whole environment: the other host has its own.
    env: Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined && /^(CCJS_|UCX_|NODE_OPTIONS$)/.test(entry[0]))),
    script: options.script,
    args: options.scriptArguments,
  });

  const others = Array.from({ length: options.processCount - 1 }, (_, index) => index + 1);
  let ranksClosed: Promise<void>[];
  if (!onHosts) {
    // Rank 0 listens on a port of the kernel's choosing and publishes it in this file: picking a
    // free port here and handing it over would race with every other program choosing ports.
    const rendezvous = mkdtempSync(path.join(tmpdir(), 'ccjrun-'));
    process.on('exit', () => rmSync(rendezvous, { recursive: true, force: true }));
    const coordinator = `file:${path.join(rendezvous, 'coordinator')}`;
    ranksClosed = [0, ...others].map((rank) => startProcess(rank, coordinator));
  } else {
    // No file system is shared: rank 0 announces its coordinator on stdout, then the others start.
    let announce: (address: string) => void = () => {};
    const address = new Promise<string>((resolve) => (announce = resolve));
    const first = startProcess(0, 'file:-', announce);
    const started = await Promise.race([address, first.then(() => undefined)]);
    ranksClosed = [first, ...(started === undefined || exitCode !== undefined ? [] : others.map((rank) => startProcess(rank, started)))];
  }
  await Promise.all(ranksClosed);

  clearTimeout(killTimer);
  clearTimeout(abortedElsewhere);
  for (const signal of FORWARDED_SIGNALS) process.off(signal, forwardSignal);
  process.off('exit', killLeftovers);
  return exitCode ?? (abortedElsewhere === undefined ? 0 : EXIT_ABORTED_ELSEWHERE);
}

async function main(argv: readonly string[]): Promise<number> {
  let options: JobOptions | null;
  try {
    options = parseArguments(argv);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`ccjrun: ${error.message}\nRun 'ccjrun --help' for usage.\n`);
    return 2;
  }
  if (options === null) {
    process.stdout.write(USAGE);
    return 0;
  }
  return runJob(options);
}

// Setting exitCode instead of calling process.exit() lets piped output drain first.
process.exitCode = await main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`ccjrun: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
