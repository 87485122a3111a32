/**
 * A real Slurm cluster on one machine, for the tests of jobs under Slurm: Debian's slurmctld and
 * slurmd (slurm-wlm 22.05) with a munged of its own, over test hosts (bench/netns.ts): the
 * controller on one host (where users type srun, sbatch and salloc: `command`), a slurmd on each
 * other host, each in its host's network and UTS namespace, so that Slurm sees as many machines.
 * Everything it makes (configuration, key, spool, logs, state) lives in one directory, removed by
 * stop() with the daemons; the hosts are the caller's.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hosts } from '../bench/netns.js';
import { environmentWithoutLaunchers, run } from './harness.js';
import type { Completed } from './harness.js';

/** The Slurm daemons this helper runs, where the machine has them (it says what to install otherwise). */
export function slurmMissing(): string | undefined {
  const missing = ['slurmctld', 'slurmd', 'srun', 'sbatch', 'salloc', 'scancel', 'sinfo', 'munged'].filter((program) => !onPath(program));
  return missing.length === 0 ? undefined : `${missing.join(', ')} not installed (Debian: apt-get install slurmctld slurmd slurm-client munge)`;
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(':').some((directory) => fs.existsSync(path.join(directory, program)));
}

export class SlurmCluster {
  readonly directory: string;
  readonly configuration: string;
  private readonly controllerLog: string;

  private constructor(
    private readonly hosts: Hosts,
    readonly controller: string,
    readonly nodes: readonly string[],
    readonly cpus: number,
  ) {
    this.directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-slurm-'));
    this.configuration = path.join(this.directory, 'slurm.conf');
    this.controllerLog = path.join(this.directory, 'slurmctld.log');
  }

  /** Starts munged, slurmctld on `controller` and a slurmd on each of `nodes`; resolves once every node is idle. */
  static async start(hosts: Hosts, controller: string, nodes: readonly string[], cpus: number, timeoutMs = 30_000): Promise<SlurmCluster> {
    const cluster = new SlurmCluster(hosts, controller, nodes, cpus);
    try {
      await cluster.startDaemons(timeoutMs);
    } catch (error) {
      cluster.stop();
      throw error;
    }
    return cluster;
  }

  /**
   * `command` as a user types it on the controller, in an environment without launcher variables
   * but `env` (SLURM_CONF pointing at this cluster): resolves when it exits, or kills it after
   * `timeoutMs`; `onOutput` sees its standard output so far whenever more comes.
   */
  command(command: readonly string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, onOutput?: (stdout: string) => void): Promise<Completed> {
    return onHost(this.hosts, this.controller, command, { SLURM_CONF: this.configuration, ...env }, timeoutMs, onOutput);
  }

  /** The state of each node as sinfo prints it (idle, alloc, down, ...), by name. */
  async nodeStates(): Promise<Record<string, string>> {
    const { stdout } = await this.command(['sinfo', '--noheader', '--Node', '--format=%N %t']);
    return Object.fromEntries(stdout.trim().split('\n').filter(Boolean).map((line) => line.trim().split(/\s+/) as [string, string]));
  }

  /** Starts node `name`'s slurmd again (after a test killed it) and waits until the controller sees the node idle. */
  async restartNode(name: string, timeoutMs = 30_000): Promise<void> {
    this.startSlurmd(name);
    await this.command(['scontrol', 'update', `nodename=${name}`, 'state=resume']);
    await this.untilIdle([name], timeoutMs);
  }

  /** The controller's log (for the message of a failed test). */
  log(): string {
    try {
      return fs.readFileSync(this.controllerLog, 'utf8').slice(-4000);
    } catch {
      return '';
    }
  }

  /** Stops every daemon it started and removes its directory. */
  stop(): void {
    for (const name of [this.controller, ...this.nodes]) {
      for (const pid of this.daemonPids(name)) killQuietly(pid);
    }
    const munged = this.pidFrom('munged.pid');
    if (munged !== undefined) killQuietly(munged);
    fs.rmSync(this.directory, { recursive: true, force: true });
  }

  private async startDaemons(timeoutMs: number): Promise<void> {
    const file = (name: string) => path.join(this.directory, name);
    fs.writeFileSync(file('munge.key'), randomBytes(1024), { mode: 0o600 });
    // Its own munged, socket and key: nothing of the machine's Slurm or munge is used or changed.
    execFileSync('munged', [`--socket=${file('munge.socket')}`, `--key-file=${file('munge.key')}`, `--pid-file=${file('munged.pid')}`, `--log-file=${file('munged.log')}`, `--seed-file=${file('munge.seed')}`, '--force']);
    fs.mkdirSync(file('state'));
    for (const node of this.nodes) fs.mkdirSync(file(`spool-${node}`));
    fs.writeFileSync(this.configuration, this.slurmConf());
    this.daemon(this.controller, ['slurmctld', '-i', '-f', this.configuration]);
    for (const node of this.nodes) this.startSlurmd(node);
    await this.untilIdle(this.nodes, timeoutMs);
  }

  private startSlurmd(node: string): void {
    this.daemon(node, ['slurmd', '-N', node, '-f', this.configuration]);
  }

  /** Runs a daemon (which forks into the background) on `host`, as root does on a machine of its own. */
  private daemon(host: string, command: readonly string[]): void {
    execFileSync(this.hosts.enter, [host, ...command], { env: { ...process.env, SLURM_CONF: this.configuration }, stdio: ['ignore', 'ignore', 'pipe'] });
  }

  private async untilIdle(nodes: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let states: Record<string, string> = {};
    while (Date.now() < deadline) {
      states = await this.nodeStates();
      if (nodes.every((node) => states[node] === 'idle')) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`Slurm nodes not idle within ${timeoutMs} ms: ${JSON.stringify(states)}\n${this.log()}`);
  }

  /** Processes of `host`'s namespace that are Slurm's daemons. */
  private daemonPids(host: string): number[] {
    return this.hosts.pids(host).filter(isSlurmDaemon);
  }

  private pidFrom(name: string): number | undefined {
    try {
      return Number(fs.readFileSync(path.join(this.directory, name), 'utf8').trim());
    } catch {
      return undefined;
    }
  }

  /**
   * One partition of every node, each with `cpus` CPUs; root runs everything; no cgroups (the
   * processes of a step are tracked by their parents), no accounting; a node that comes back is
   * used again (ReturnToService=2); short timeouts, so that a dead node and a cancelled job end quickly.
   */
  private slurmConf(): string {
    const file = (name: string) => path.join(this.directory, name);
    return [
      'ClusterName=ccjs',
      `SlurmctldHost=${this.controller}(${this.hosts.address(this.controller)})`,
      'SlurmUser=root',
      'SlurmdUser=root',
      'AuthType=auth/munge',
      `AuthInfo=socket=${file('munge.socket')}`,
      'CredType=cred/munge',
      `StateSaveLocation=${file('state')}`,
      `SlurmdSpoolDir=${file('spool-%n')}`,
      `SlurmctldPidFile=${file('slurmctld.pid')}`,
      `SlurmdPidFile=${file('slurmd-%n.pid')}`,
      `SlurmctldLogFile=${this.controllerLog}`,
      `SlurmdLogFile=${file('slurmd-%n.log')}`,
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SwitchType=switch/none',
      'MpiDefault=none',
      'ReturnToService=2',
      'SchedulerType=sched/builtin',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_CPU',
      'JobCompType=jobcomp/none',
      'AccountingStorageType=accounting_storage/none',
      'JobAcctGatherType=jobacct_gather/none',
      'SlurmctldTimeout=10',
      'SlurmdTimeout=10',
      'KillWait=2',
      'MinJobAge=2',
      ...this.nodes.map((node) => `NodeName=${node} NodeAddr=${this.hosts.address(node)} CPUs=${this.cpus} State=UNKNOWN`),
      'PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n');
  }
}

/**
 * `command` as a user types it on test host `host` (its network, host name and /etc/hosts), in an
 * environment without launcher variables but `env`: resolves when it exits, or kills it after
 * `timeoutMs`; `onOutput` sees its standard output so far whenever more comes.
 */
export function onHost(hosts: Hosts, host: string, command: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number, onOutput?: (stdout: string) => void): Promise<Completed> {
  return run(hosts.enter, [host, ...command], env, timeoutMs, { base: environmentWithoutLaunchers(), onOutput });
}

/** Whether process `pid` is one of Slurm's daemons (slurmctld, slurmd, slurmstepd, slurmscriptd): a node's, not a job's; a process gone by now counts as one. */
export function isSlurmDaemon(pid: number): boolean {
  return processName(pid)?.startsWith('slurm') ?? true;
}

/** The name of process `pid` (/proc/<pid>/comm), or undefined once it is gone. */
export function processName(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
