import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { ConfigError } from '../base/errors.js';

/** Which launcher started this process ('single': none, a lone process). */
export type LauncherName = 'ccjrun' | 'mpirun' | 'hydra' | 'slurm' | 'torch' | 'single';

export interface CoordinatorAddress {
  host: string;
  port: number;
}

/** Where this process stands in its job, as told by the environment its launcher set. */
export interface LaunchInfo {
  processRank: number;
  processCount: number;
  /** Where process 0 hosts the coordinator; null when the job has one process and none is needed. */
  coordinator: CoordinatorAddress | null;
  /**
   * `CCJS_COORDINATOR=file:<path>`: process 0 listens on a port of its choice and writes
   * `host:port` to this file, which the others read (a shared file system or one host).
   */
  coordinatorFile?: string;
  /** Names the job; the coordinator refuses processes of another job that reach its port. */
  jobKey: string;
  launcher: LauncherName;
  /** Every process of the job runs on this host. */
  allLocal: boolean;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** What one launcher's variables say, before the coordinator address is settled. */
interface LauncherView {
  launcher: LauncherName;
  processRank: number;
  processCount: number;
  /** An address the launcher's own variables give (torch's MASTER_ADDR/MASTER_PORT). */
  coordinator?: CoordinatorAddress;
  /** The launcher says every process is on this host. */
  sameHost: boolean;
  /** Host of rank 0 as the launcher knows it, for jobs spanning hosts (Slurm's first node, mpirun's own). */
  firstHost?: string;
  /** Why the launcher's variables name no host of rank 0, read only where firstHost is undefined (for the error asking for CCJS_COORDINATOR). */
  noFirstHost?: string;
  /** Shared by all ranks of one job and different between concurrent jobs: seeds the derived port. */
  jobIdentity?: string;
}

const LAUNCHER_DESCRIPTIONS: Record<LauncherName, string> = {
  ccjrun: 'CCJS_RANK/CCJS_SIZE',
  mpirun: 'Open MPI (mpirun)',
  hydra: 'MPICH hydra (mpiexec)',
  slurm: 'Slurm (srun)',
  torch: 'the torch-style launch (RANK/WORLD_SIZE)',
  single: 'a single process',
};

const LOOPBACK_HOST = '127.0.0.1';
// Derived ports stay clear of well-known and most registered low ports.
const DERIVED_PORT_LOWEST = 10000;
const HIGHEST_PORT = 65535;
/** Where the kernel picks its ephemeral ports (connections' local ports). */
const EPHEMERAL_RANGE_FILE = '/proc/sys/net/ipv4/ip_local_port_range';
/** Without /proc: Linux's default range (32768–60999) and IANA's (49152–65535), which BSDs, macOS and Windows use. */
const USUAL_EPHEMERAL_RANGE: PortRange = { lowest: 32768, highest: HIGHEST_PORT };

interface PortRange {
  readonly lowest: number;
  readonly highest: number;
}

/**
 * Reads rank, size and coordinator address from the variables of ccjrun, Open MPI, MPICH hydra,
 * Slurm or a torch-style launcher (checked in that order); without any, this is a single process.
 * `CCJS_COORDINATOR=host:port` overrides the coordinator address for every launcher. Throws
 * ConfigError for malformed values, and for jobs that may span hosts without a coordinator address.
 */
export function detectLaunch(env: Environment = process.env): LaunchInfo {
  const view = readLauncherView(env);
  const override = read(env, 'CCJS_COORDINATOR');
  const jobKey = read(env, 'CCJS_JOB_ID') ?? (view.jobIdentity === undefined ? '' : `${view.launcher}:${view.jobIdentity}`);
  if (override?.startsWith('file:')) {
    const coordinatorFile = override.slice('file:'.length);
    if (coordinatorFile === '') throw new ConfigError('CCJS_COORDINATOR=file: needs a path after "file:"');
    return { processRank: view.processRank, processCount: view.processCount, coordinator: null, coordinatorFile, jobKey, launcher: view.launcher, allLocal: view.sameHost };
  }
  const coordinator =
    override === undefined ? settleCoordinator(view) : parseHostPort('CCJS_COORDINATOR', override);
  return {
    processRank: view.processRank,
    processCount: view.processCount,
    coordinator,
    jobKey,
    launcher: view.launcher,
    allLocal: view.sameHost || (coordinator !== null && isLoopback(coordinator.host)),
  };
}

function readLauncherView(env: Environment): LauncherView {
  if (read(env, 'CCJS_RANK') !== undefined) return readCcjrun(env);
  if (read(env, 'OMPI_COMM_WORLD_RANK') !== undefined) return readOpenMpi(env);
  // srun's PMI-2 plugin sets PMI_RANK too, but only hydra sets MPI_LOCALNRANKS.
  const launchedBySrun = read(env, 'SLURM_PROCID') !== undefined && read(env, 'MPI_LOCALNRANKS') === undefined;
  if (read(env, 'PMI_RANK') !== undefined && !launchedBySrun) return readHydra(env);
  if (read(env, 'SLURM_PROCID') !== undefined) return readSlurm(env);
  if (read(env, 'RANK') !== undefined && read(env, 'WORLD_SIZE') !== undefined) return readTorch(env);
  return { launcher: 'single', processRank: 0, processCount: 1, sameHost: true };
}

function readCcjrun(env: Environment): LauncherView {
  // Its address is CCJS_COORDINATOR, read as the override; hand-set CCJS_* may describe several hosts.
  return { launcher: 'ccjrun', ...readRankAndSize(env, 'CCJS_RANK', 'CCJS_SIZE'), sameHost: false };
}

function readOpenMpi(env: Environment): LauncherView {
  const rankAndSize = readRankAndSize(env, 'OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE');
  // Open MPI 4 sets all three; Open MPI 5 (PRRTE) keeps only PMIX_NAMESPACE.
  return {
    launcher: 'mpirun',
    ...rankAndSize,
    sameHost: readOptionalInteger(env, 'OMPI_COMM_WORLD_LOCAL_SIZE', 1) === rankAndSize.processCount,
    ...openMpiFirstHost(env),
    jobIdentity: firstSet(env, ['OMPI_MCA_ess_base_jobid', 'PMIX_NAMESPACE', 'OMPI_MCA_orte_hnp_uri'])?.value,
  };
}

/**
 * The node of process 0 under Open MPI 4's mpirun, where its variables tell it for sure. Process 0
 * runs on mpirun's own node whenever that node runs processes at all (mpirun puts its node first).
 * A process started by mpirun itself (its local daemon is mpirun: OMPI_MCA_orte_local_daemon_uri
 * is OMPI_MCA_orte_hnp_uri) is on that node. The others read the node list their daemon got
 * (OMPI_MCA_orte_node_regex: mpirun's node first, then every node it started a daemon on): when
 * every listed node runs processes (OMPI_MCA_orte_num_nodes), mpirun's node does, and it is the
 * first. Otherwise (mpirun on a login node, or nodes left without processes) the list does not say
 * which: undefined, as under Open MPI 5, whose mpirun sets none of these variables.
 */
function openMpiFirstHost(env: Environment): Pick<LauncherView, 'firstHost' | 'noFirstHost'> {
  const daemon = read(env, 'OMPI_MCA_orte_local_daemon_uri');
  if (daemon !== undefined && daemon === read(env, 'OMPI_MCA_orte_hnp_uri')) return { firstHost: read(env, 'PMIX_HOSTNAME') ?? os.hostname() };
  const regex = read(env, 'OMPI_MCA_orte_node_regex');
  const withProcesses = readOptionalInteger(env, 'OMPI_MCA_orte_num_nodes', 1);
  if (regex === undefined || withProcesses === undefined) return { noFirstHost: 'OMPI_MCA_orte_node_regex and OMPI_MCA_orte_num_nodes are not both set (Open MPI 5 sets neither)' };
  const nodes = openMpiNodes(regex);
  if (nodes.length === withProcesses) return { firstHost: nodes[0] };
  return { noFirstHost: `OMPI_MCA_orte_node_regex names ${nodes.length} nodes (mpirun's ${nodes[0]} first) and OMPI_MCA_orte_num_nodes=${withProcesses} of them run processes, which does not say which one runs process 0 (mpirun runs outside its host list, or a node runs no process)` };
}

/**
 * The node names of Open MPI 4's node regex, `sxctl,node[2:1-3,7]@0(5)`: patterns as in a Slurm
 * node list, but each bracket gives the digits' width before a colon (node[2:1-3] is node01 to
 * node03), and the daemons' ids follow the @.
 */
export function openMpiNodes(regex: string): string[] {
  const [names = ''] = regex.split('@');
  const slurmStyle = names.replace(/\[(\d+):([^\]]*)\]/g, (_, width: string, ranges: string) => `[${ranges.replace(/\d+/g, (number) => number.padStart(Number(width), '0'))}]`);
  return expandNodeList(slurmStyle, 'OMPI_MCA_orte_node_regex');
}

function readHydra(env: Environment): LauncherView {
  const rankAndSize = readRankAndSize(env, 'PMI_RANK', 'PMI_SIZE');
  const localCount = readOptionalInteger(env, 'MPI_LOCALNRANKS', 1);
  const sameHost = localCount === undefined || localCount === rankAndSize.processCount;
  // Plain MPICH hydra exports no job identity; its proxy is the common parent of all ranks on a
  // host, which names the job there only (across hosts the job has none: CCJS_JOB_ID may give one).
  const jobIdentity = firstSet(env, ['PMI_KVSNAME', 'PMI_JOBID', 'PMI_PORT'])?.value ?? (sameHost ? `proxy-${process.ppid}` : undefined);
  return {
    launcher: 'hydra',
    ...rankAndSize,
    sameHost,
    noFirstHost: `MPI_LOCALNRANKS=${localCount ?? ''} of PMI_SIZE=${rankAndSize.processCount} run on this host, and hydra names no host of process 0`,
    jobIdentity,
  };
}

function readSlurm(env: Environment): LauncherView {
  const rankAndSize = readRankAndSize(env, 'SLURM_PROCID', 'SLURM_NTASKS');
  const nodeList = firstSet(env, ['SLURM_STEP_NODELIST', 'SLURM_JOB_NODELIST']);
  const nodes = nodeList === undefined ? [] : expandNodeList(nodeList.value, nodeList.variable);
  const nodeCount =
    readOptionalInteger(env, 'SLURM_STEP_NUM_NODES', 1) ??
    readOptionalInteger(env, 'SLURM_NNODES', 1) ??
    Math.max(nodes.length, 1); // srun always sets the counts; a bare nodelist (or nothing) is a best guess
  const jobId = read(env, 'SLURM_JOB_ID');
  const stepId = read(env, 'SLURM_STEP_ID') ?? read(env, 'SLURM_STEPID') ?? '';
  return {
    launcher: 'slurm',
    ...rankAndSize,
    sameHost: nodeCount === 1,
    // With Slurm's default block distribution, task 0 runs on the first node of the step.
    firstHost: nodes[0],
    noFirstHost: 'neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST is set',
    jobIdentity: jobId === undefined ? undefined : `${jobId}.${stepId}`,
  };
}

function readTorch(env: Environment): LauncherView {
  const rankAndSize = readRankAndSize(env, 'RANK', 'WORLD_SIZE');
  const masterHost = read(env, 'MASTER_ADDR');
  const masterPort = read(env, 'MASTER_PORT');
  if ((masterHost === undefined) !== (masterPort === undefined)) {
    throw new ConfigError(
      `MASTER_ADDR=${JSON.stringify(masterHost ?? '')} and MASTER_PORT=${JSON.stringify(masterPort ?? '')} ` +
        'must be set together; set both, or CCJS_COORDINATOR=host:port',
    );
  }
  return {
    launcher: 'torch',
    ...rankAndSize,
    coordinator:
      masterHost === undefined || masterPort === undefined
        ? undefined
        : { host: masterHost, port: parsePort('MASTER_PORT', masterPort) },
    sameHost: readOptionalInteger(env, 'LOCAL_WORLD_SIZE', 1) === rankAndSize.processCount,
    jobIdentity: read(env, 'TORCHELASTIC_RUN_ID'),
  };
}

/** The launcher's address, or loopback / its first host with a port derived from the job identity. */
function settleCoordinator(view: LauncherView): CoordinatorAddress | null {
  if (view.coordinator !== undefined) return view.coordinator;
  if (view.processCount === 1) return null;
  const description = LAUNCHER_DESCRIPTIONS[view.launcher];
  const host = view.sameHost ? LOOPBACK_HOST : view.firstHost;
  if (host === undefined) {
    throw new ConfigError(
      `${description} gives no coordinator address and does not say that all ${view.processCount} processes ` +
        `run on this host${view.noFirstHost === undefined ? '' : ` (${view.noFirstHost})`}; set CCJS_COORDINATOR=host:port ` +
        'to an address of the host of process 0 that every process can reach',
    );
  }
  if (view.jobIdentity === undefined) {
    throw new ConfigError(
      `${description} gives no coordinator address and no job identity to derive a port from; ` +
        'set CCJS_COORDINATOR=host:port',
    );
  }
  return { host, port: derivePort(view.launcher, view.jobIdentity) };
}

/**
 * Same port in every rank of one job, almost surely different between concurrent jobs, and outside
 * the kernel's ephemeral range: a port in it may be any connection's local port at any moment
 * (process 0 could not listen there), and a process connecting to it may even meet itself.
 */
function derivePort(launcher: LauncherName, jobIdentity: string): number {
  const digest = createHash('sha256').update(`${launcher}\0${jobIdentity}`).digest();
  const { lowest, highest } = ephemeralPorts();
  // Candidates: DERIVED_PORT_LOWEST up to the range, and above it up to HIGHEST_PORT.
  const below = Math.max(0, Math.min(lowest, HIGHEST_PORT + 1) - DERIVED_PORT_LOWEST);
  const firstAbove = Math.max(highest + 1, DERIVED_PORT_LOWEST);
  const above = Math.max(0, HIGHEST_PORT + 1 - firstAbove);
  // A kernel that makes every such port ephemeral leaves no choice: the whole span.
  if (below + above === 0) return DERIVED_PORT_LOWEST + (digest.readUInt32BE(0) % (HIGHEST_PORT + 1 - DERIVED_PORT_LOWEST));
  const index = digest.readUInt32BE(0) % (below + above);
  return index < below ? DERIVED_PORT_LOWEST + index : firstAbove + (index - below);
}

/** The kernel's ephemeral port range (Linux's /proc), or the usual ranges where it does not say. */
function ephemeralPorts(): PortRange {
  try {
    const [lowest, highest] = fs.readFileSync(EPHEMERAL_RANGE_FILE, 'utf8').trim().split(/\s+/).map(Number);
    if (lowest !== undefined && highest !== undefined && Number.isInteger(lowest) && Number.isInteger(highest) && lowest <= highest) return { lowest, highest };
  } catch {
    // Not Linux.
  }
  return USUAL_EPHEMERAL_RANGE;
}

/**
 * Expands a Slurm host list such as `node[01-04,07],login1` into host names (zero padding kept);
 * `variable` names the list's source in error messages.
 */
export function expandNodeList(nodeList: string, variable: string): string[] {
  const malformed = (reason: string): ConfigError =>
    new ConfigError(`${variable}=${JSON.stringify(nodeList)} is not a Slurm node list: ${reason}`);

  const expandRanges = (ranges: string): string[] =>
    ranges.split(',').flatMap((range) => {
      const bounds = /^(\d+)(?:-(\d+))?$/.exec(range);
      if (bounds === null) throw malformed(`bad range ${JSON.stringify(range)}`);
      const [, first = '', last = first] = bounds;
      const start = Number(first);
      const end = Number(last);
      if (end < start) throw malformed(`descending range ${JSON.stringify(range)}`);
      return Array.from({ length: end - start + 1 }, (_, offset) => String(start + offset).padStart(first.length, '0'));
    });

  // A pattern may hold several bracket groups (rack[1-2]-node[1-4]): expand left to right.
  const expandPattern = (pattern: string): string[] => {
    const open = pattern.indexOf('[');
    if (open === -1) return [pattern];
    const close = pattern.indexOf(']', open);
    if (close === -1) throw malformed(`unclosed '[' in ${JSON.stringify(pattern)}`);
    const prefix = pattern.slice(0, open);
    const suffixes = expandPattern(pattern.slice(close + 1));
    return expandRanges(pattern.slice(open + 1, close)).flatMap((index) =>
      suffixes.map((suffix) => `${prefix}${index}${suffix}`),
    );
  };

  // Commas inside brackets separate ranges, outside they separate patterns.
  const patterns = nodeList.match(/(?:[^,[]|\[[^\]]*\]?)+/g) ?? [];
  return patterns.flatMap(expandPattern);
}

function readRankAndSize(
  env: Environment,
  rankVariable: string,
  sizeVariable: string,
): { processRank: number; processCount: number } {
  const processRank = readInteger(env, rankVariable, 0);
  const processCount = readInteger(env, sizeVariable, 1);
  if (processRank >= processCount) {
    throw new ConfigError(`${rankVariable}=${processRank} is not below ${sizeVariable}=${processCount}`);
  }
  return { processRank, processCount };
}

function readInteger(env: Environment, variable: string, minimum: number): number {
  const value = readOptionalInteger(env, variable, minimum);
  if (value === undefined) throw new ConfigError(`${variable} is not set`);
  return value;
}

function readOptionalInteger(env: Environment, variable: string, minimum: number): number | undefined {
  const text = read(env, variable);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < minimum) {
    throw new ConfigError(`${variable}=${JSON.stringify(text)} is not an integer >= ${minimum}`);
  }
  return value;
}

/** `host:port`, or `[address]:port` for IPv6; the brackets are dropped from `host`. */
export function parseHostPort(variable: string, text: string): CoordinatorAddress {
  const parts = /^(?:\[([^\]\s]+)\]|([^:[\]\s]+)):([^:]*)$/.exec(text);
  const host = parts?.[1] ?? parts?.[2];
  if (parts === null || host === undefined) {
    throw new ConfigError(`${variable}=${JSON.stringify(text)} is not host:port (write IPv6 as [address]:port)`);
  }
  return { host, port: parsePort(variable, parts[3] ?? '') };
}

function parsePort(variable: string, text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) {
    throw new ConfigError(`${variable} has port ${JSON.stringify(text)}, which is not an integer in 1..65535`);
  }
  return port;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function firstSet(env: Environment, variables: readonly string[]): { variable: string; value: string } | undefined {
  for (const variable of variables) {
    const value = read(env, variable);
    if (value !== undefined) return { variable, value };
  }
  return undefined;
}

/** An empty variable counts as unset, as shells make `VAR=` easy to leave behind. */
function read(env: Environment, variable: string): string | undefined {
  const value = env[variable];
  return value === '' ? undefined : value;
}
