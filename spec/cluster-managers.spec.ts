/**
 * Issue 32: jobs under the cluster managers people already run, for real, on hosts made of network
 * and UTS namespaces (bench/netns.ts): four hosts, the last a login node. A Slurm cluster
 * (slurm-cluster.ts: slurmctld on the login node, a slurmd on each of the three others) runs
 * srun, sbatch and salloc as a user types them, a job scancel stops, and a job whose node dies;
 * Open MPI's mpirun and MPICH's mpiexec.hydra start jobs on the three nodes through their remote
 * shell (the hosts' ssh agent). Each job (fixtures/cluster-job.ts) exchanges every payload and
 * passes the collectives suite, and says where it ran and how its endpoints reach each other.
 * Skipped only where namespaces cannot be made; a missing Slurm or MPI fails, naming what to install.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { INTERFACE } from '../bench/netns.js';
import type { Hosts } from '../bench/netns.js';
import { COLLECTIVE_CHECKS } from './collective-checks.js';
import { fixture, hostsOrSkip } from './harness.js';
import type { Completed } from './harness.js';
import { SlurmCluster, isSlurmDaemon, onHost, processName, slurmMissing } from './slurm-cluster.js';

/** What fixtures/cluster-job.ts prints for each endpoint. */
interface EndpointReport {
  readonly endpoint: number;
  readonly size: number;
  readonly process: number;
  readonly thread: number;
  readonly host: string;
  readonly interfaces: string[];
  readonly sameHost: number;
  readonly otherHost: number;
  readonly payloads: number;
  readonly collectives: number;
  readonly sum: number;
  readonly chosen: Record<string, string>;
}

/** The endpoints' reports in a command's output, by endpoint; fails with the output where a line is missing. */
function reports(result: Completed, endpoints: number): EndpointReport[] {
  const found = [...result.stdout.matchAll(/CLUSTER (\{.*\})$/gm)].map((match) => JSON.parse(match[1] as string) as EndpointReport);
  const context = `exit ${result.code}\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-3000)}`;
  expect(found.map((report) => report.endpoint).sort((a, b) => a - b), context).to.deep.equal(Array.from({ length: endpoints }, (_, endpoint) => endpoint));
  expect(result.code, context).to.equal(0);
  return found.sort((a, b) => a.endpoint - b.endpoint);
}

/**
 * Checks a job of `processes` processes of `threads` threads each on `hosts` (process p on
 * hostOf(p)): it ran there, reached the endpoints of its host through memory and the others only
 * over the namespace network, passed every check, and its whole-job calls went hierarchical.
 */
function expectJob(found: readonly EndpointReport[], hostOf: (process: number) => string, threads: number): void {
  const size = found.length;
  const perHost = size / new Set(found.map((report) => report.host)).size;
  for (const report of found) {
    const where = `endpoint ${report.endpoint}`;
    expect(report.size, where).to.equal(size);
    expect(report.thread, where).to.equal(report.endpoint % threads);
    expect(report.host, where).to.equal(hostOf(report.process));
    // The namespace has no other network than the bridge: whatever crosses hosts goes over it.
    expect(report.interfaces, where).to.deep.equal([INTERFACE, 'lo']);
    expect([report.sameHost, report.otherHost], where).to.deep.equal([perHost, size - perHost]);
    expect(report.payloads, where).to.be.at.least(1);
    expect(report.collectives, where).to.equal(9 * COLLECTIVE_CHECKS.length);
    expect(report.sum, where).to.equal((size * (size - 1)) / 2);
    expect(report.chosen, where).to.deep.equal({ broadcast: 'hierarchical', allReduce: 'hierarchical' });
  }
}

/** ccjs segments and doorbells in /dev/shm. */
function sharedMemoryFiles(): string[] {
  return fs.readdirSync('/dev/shm').filter((name) => name.startsWith('ccjs'));
}

describe('jobs under the cluster managers (a login node and three nodes in network namespaces)', function () {
  this.timeout(180_000);
  let hosts: Hosts;
  let nodes: string[];
  let login: string;
  const secret = randomBytes(32).toString('hex');
  const job = ['node', fixture('cluster-job')];
  // TCP between hosts (UCX would take the namespaces for one machine: issue 9), a job secret in the environment.
  const environment = { CCJS_SECRET: secret, CCJS_NO_UCX: '1' };

  before(function () {
    hosts = hostsOrSkip(this, 4);
    nodes = hosts.names.slice(0, 3);
    login = hosts.names[3] as string;
  });

  after(() => hosts?.remove());

  describe('Slurm (slurmctld on the login node, slurmd on each node)', function () {
    let cluster: SlurmCluster;
    let shmBefore: string[] = [];

    before(async function () {
      shmBefore = sharedMemoryFiles();
      const missing = slurmMissing();
      if (missing !== undefined) throw new Error(`Slurm is needed for these tests: ${missing}`);
      cluster = await SlurmCluster.start(hosts, login, nodes, 2);
    });

    after(() => cluster?.stop());

    it('srun -N 3 -n 6 node job.js: two tasks per node, the coordinator on the first node', async function () {
      const result = await cluster.command(['srun', '-N', '3', '-n', '6', ...job], environment);
      expectJob(reports(result, 6), (process) => nodes[Math.floor(process / 2)] as string, 1);
    });

    it('srun -N 3 -n 3 --cpus-per-task 2 with CCJS_THREADS=2: a process of two threads per node', async function () {
      const result = await cluster.command(['srun', '-N', '3', '-n', '3', '--cpus-per-task', '2', ...job], { ...environment, CCJS_THREADS: '2' });
      expectJob(reports(result, 6), (process) => nodes[process] as string, 2);
    });

    it('sbatch of a script with srun inside: the batch runs on the first node, its output in the file it names', async function () {
      const script = path.join(cluster.directory, 'job.sh');
      const output = path.join(cluster.directory, 'job-%j.out');
      fs.writeFileSync(script, ['#!/bin/sh', '#SBATCH --nodes=3', '#SBATCH --ntasks-per-node=2', `#SBATCH --output=${output}`, `srun ${job.join(' ')}`, ''].join('\n'));
      const submitted = await cluster.command(['sbatch', '--wait', script], environment);
      expect(submitted.code, submitted.stderr).to.equal(0);
      const jobId = /Submitted batch job (\d+)/.exec(submitted.stdout)?.[1];
      expect(jobId, submitted.stdout).to.be.a('string');
      const printed = fs.readFileSync(output.replace('%j', jobId as string), 'utf8');
      expectJob(reports({ code: 0, signal: null, stdout: printed, stderr: '' }, 6), (process) => nodes[Math.floor(process / 2)] as string, 1);
    });

    it('salloc -N 2 -n 4, then srun in the allocation: the job on the two allocated nodes', async function () {
      const result = await cluster.command(['salloc', '-N', '2', '-n', '4', 'srun', ...job], environment);
      expectJob(reports(result, 4), (process) => nodes[Math.floor(process / 2)] as string, 1);
    });

    it('scancel of a running job ends every process of it, and leaves no process or shared memory behind', async function () {
      const name = `ccjs-cancel-${process.pid}`;
      const { running } = await waitingJob(cluster, [`--job-name=${name}`], environment);
      const cancelledAt = Date.now();
      const cancel = await cluster.command(['scancel', `--name=${name}`]);
      expect(cancel.code, cancel.stderr).to.equal(0);
      const result = await running;
      expect(Date.now() - cancelledAt, result.stderr).to.be.below(15_000);
      expect(result.code, result.stderr).to.not.equal(0);
      expect(result.stderr).to.match(/CANCELLED|cancelled/);
      expect(await leftBehind(hosts, nodes, shmBefore)).to.deep.equal({ processes: [], sharedMemory: [] });
    });

    it("a node that dies mid-job (its slurmd, step daemon and task killed): the other tasks' pending calls fail with PeerLostError within the timeout", async function () {
      const timeoutMs = 5000;
      const { running } = await waitingJob(cluster, [], { ...environment, CCJS_TIMEOUT_MS: String(timeoutMs) });
      const dead = nodes[1] as string;
      const killedAt = Date.now();
      for (const pid of hosts.pids(dead)) process.kill(pid, 'SIGKILL');
      const result = await running;
      const found = result.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { rank: number; target: number; results: { call: string; error: string; message: string; at: number }[] });
      expect(found.map((report) => report.rank).sort(), result.stdout + result.stderr).to.deep.equal([0, 2]);
      for (const report of found) {
        for (const call of report.results) {
          expect(call.error, call.call).to.equal('PeerLostError');
          expect(call.message, JSON.stringify(call)).to.match(/process 1 was lost/);
          expect(call.at - killedAt).to.be.below(timeoutMs);
        }
      }
      // Slurm ends the job once it finds the node dead (SlurmdTimeout).
      expect(result.stderr).to.match(new RegExp(`Node failure on ${dead}`));
      expect(await leftBehind(hosts, [nodes[0], nodes[2]] as string[], shmBefore)).to.deep.equal({ processes: [], sharedMemory: [] });
      await cluster.restartNode(dead);
    });

    it('a node whose slurmd alone is killed mid-job: Slurm finds the node dead and ends every task of the job, its own too (through its step daemon); nothing of the job is left', async function () {
      const { running } = await waitingJob(cluster, [], { ...environment, CCJS_TIMEOUT_MS: '5000' });
      const silent = nodes[0] as string;
      for (const pid of hosts.pids(silent)) if (processName(pid) === 'slurmd') process.kill(pid, 'SIGKILL');
      const result = await running;
      expect(result.code, result.stderr).to.not.equal(0);
      expect(result.stderr).to.match(new RegExp(`Node failure on ${silent}`));
      expect(await leftBehind(hosts, nodes, shmBefore)).to.deep.equal({ processes: [], sharedMemory: [] });
      await cluster.restartNode(silent);
    });
  });

  describe("Open MPI's mpirun --host, its remote shell entering the nodes", function () {
    const mpirun = (extra: readonly string[] = []) => [
      'mpirun', '--allow-run-as-root', '--host', nodes.map((node) => `${node}:2`).join(','), '--mca', 'plm_rsh_agent', hosts.ssh,
      '--mca', 'oob_tcp_if_include', INTERFACE, '-x', 'CCJS_SECRET', '-x', 'CCJS_NO_UCX', ...extra, ...job,
    ];

    it('typed on the first node: the coordinator on that node (process 0), found from the variables mpirun sets', async function () {
      const result = await onHost(hosts, nodes[0] as string, mpirun(), environment, 120_000);
      expectJob(reports(result, 6), (process) => nodes[Math.floor(process / 2)] as string, 1);
    });

    it('typed on the login node: without CCJS_COORDINATOR every process says which variable leaves process 0 unknown; with it the job runs', async function () {
      const refused = await onHost(hosts, login, mpirun(), environment, 60_000);
      expect(refused.code).to.not.equal(0);
      expect(refused.stdout + refused.stderr).to.match(/Open MPI \(mpirun\) gives no coordinator address .*OMPI_MCA_orte_node_regex names 4 nodes \(mpirun's .*\) and OMPI_MCA_orte_num_nodes=3 .*set CCJS_COORDINATOR=host:port/);
      const result = await onHost(hosts, login, mpirun(['-x', 'CCJS_COORDINATOR']), { ...environment, CCJS_COORDINATOR: `${nodes[0]}:7011` }, 120_000);
      expectJob(reports(result, 6), (process) => nodes[Math.floor(process / 2)] as string, 1);
    });
  });

  describe("MPICH's mpiexec.hydra -hosts, its launcher entering the nodes", function () {
    it('runs the job with CCJS_COORDINATOR on the first host (hydra names no host to its processes), and refuses without it', async function () {
      const hydra = ['mpiexec.hydra', '-hosts', nodes.map((node) => `${node}:2`).join(','), '-n', '6', '-launcher', 'ssh', '-launcher-exec', hosts.ssh, '-iface', INTERFACE, ...job];
      const refused = await onHost(hosts, login, hydra, environment, 60_000);
      expect(refused.code).to.not.equal(0);
      expect(refused.stdout + refused.stderr).to.match(/MPICH hydra \(mpiexec\) gives no coordinator address .*MPI_LOCALNRANKS=2 of PMI_SIZE=6.*set CCJS_COORDINATOR=host:port/);
      const result = await onHost(hosts, login, hydra, { ...environment, CCJS_COORDINATOR: `${nodes[0]}:7012` }, 120_000);
      expectJob(reports(result, 6), (process) => nodes[Math.floor(process / 2)] as string, 1);
    });
  });
});

/**
 * srun of fixtures/peer-loss on the three nodes, `args` added (process 1 waits to be killed, the
 * others for process 1): the running command, once every process said it waits (or it ended).
 */
async function waitingJob(cluster: SlurmCluster, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ readonly running: Promise<Completed> }> {
  let started = (): void => undefined;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const running = cluster.command(['srun', '-N', '3', '-n', '3', ...args, 'node', fixture('peer-loss')], env, 90_000, (stdout) => {
    if ((stdout.match(/^(ready|waiting)$/gm) ?? []).length === 3) started();
  });
  await Promise.race([ready, running]);
  // Wrapped: an async function's promise would take on the command's (and wait for its end).
  return { running };
}

/**
 * What a job left on `nodes` once it ended: processes other than Slurm's daemons, and files in
 * /dev/shm that were not there before. srun may return before the last of a cancelled job's
 * processes is gone: a few seconds are given for that.
 */
async function leftBehind(hosts: Hosts, nodes: readonly string[], shmBefore: readonly string[]): Promise<{ processes: string[]; sharedMemory: string[] }> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const processes = nodes.flatMap((node) => hosts.pids(node).filter((pid) => !isSlurmDaemon(pid)).map((pid) => `${node}: ${commandLine(pid)}`));
    const sharedMemory = sharedMemoryFiles().filter((name) => !shmBefore.includes(name));
    if ((processes.length === 0 && sharedMemory.length === 0) || Date.now() > deadline) return { processes, sharedMemory };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function commandLine(pid: number): string {
  try {
    return `${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()}`;
  } catch {
    return `${pid} (gone)`;
  }
}
