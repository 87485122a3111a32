/**
 * Where this endpoint is in the job: its process and thread (from the options, the launcher's
 * environment, or the main thread), where the coordinator is, the identity of its host, and the
 * network interface it listens on.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { ConfigError } from '../base/errors.js';
import type { Config, MasterOptions } from './config.js';
import { detectLaunch, isLoopback, parseHostPort } from './launch.js';
import { coordinatorOfThisThread, threadRankOfThisThread } from './threads.js';

export interface Address {
  readonly host: string;
  readonly port: number;
}

export interface Placement {
  readonly processRank: number;
  readonly processCount: number;
  readonly threadRank: number;
  readonly threadCount: number;
  /** Where endpoint 0's coordinator listens, or the file in which it publishes its address. */
  readonly coordinator: Address | { readonly file: string };
  readonly allLocal: boolean;
  readonly jobKey: string;
  /** No launcher started this process and no option names other processes: the job is this process alone. */
  readonly unlaunched: boolean;
}

/** This endpoint's process and thread, and where its job's coordinator is. */
export function place(options: MasterOptions, config: Config): Placement {
  const threadCount = config.threads;
  const threadRank = threadRankOfThisThread();
  if (threadRank >= threadCount) throw new ConfigError(`this is thread ${threadRank}, but the job has ${threadCount} threads per process`);
  if (options.processRank !== undefined || options.processCount !== undefined) {
    if (threadCount > 1) throw new ConfigError(`option 'threads' ${threadCount} needs a launcher (ccjrun, mpirun, ...): with explicit processRank/processCount every endpoint is created by hand`);
    const processRank = options.processRank ?? 0;
    const processCount = options.processCount ?? 1;
    if (!Number.isInteger(processCount) || processCount < 1 || !Number.isInteger(processRank) || processRank < 0 || processRank >= processCount) {
      throw new ConfigError(`options processRank ${processRank} and processCount ${processCount} do not describe a process of a job`);
    }
    if (options.coordinator === undefined && processCount > 1) {
      throw new ConfigError(`option 'coordinator' (host:port of process 0's coordinator) is needed with processCount ${processCount}`);
    }
    const coordinator = options.coordinator === undefined ? { host: '127.0.0.1', port: 0 } : parseHostPort("option 'coordinator'", options.coordinator);
    return { processRank, processCount, threadRank, threadCount, coordinator, allLocal: isLoopback(coordinator.host), jobKey: '', unlaunched: false };
  }
  const launch = detectLaunch(process.env);
  const inherited = coordinatorOfThisThread();
  const coordinator =
    inherited !== undefined
      ? parseHostPort('the main thread\'s coordinator', inherited)
      : options.coordinator !== undefined
      ? parseHostPort("option 'coordinator'", options.coordinator)
      : launch.coordinatorFile !== undefined
        ? { file: launch.coordinatorFile }
        : (launch.coordinator ?? { host: '127.0.0.1', port: 0 });
  return { processRank: launch.processRank, processCount: launch.processCount, threadRank, threadCount, coordinator, allLocal: launch.allLocal, jobKey: launch.jobKey, unlaunched: launch.launcher === 'single' };
}

export interface HostIdentity {
  /** Endpoints of one host share memory. */
  readonly id: string;
  /** For people. */
  readonly name: string;
  /** The kernel, whose cores the endpoints of every host on it share. */
  readonly machine: string;
}

/**
 * Host identity: CCJS_HOST, else the host name and the kernel's boot id (containers may share a
 * name); and the machine (the kernel), whose cores the endpoints of every host on it share.
 */
export function hostIdentity(config: Config): HostIdentity {
  let bootId = '';
  try {
    bootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // Not Linux: the host name alone.
  }
  const named = `${os.hostname()}/${bootId}`;
  const machine = bootId === '' ? named : bootId;
  return config.host === undefined ? { id: named, name: os.hostname(), machine } : { id: config.host, name: config.host, machine };
}

/**
 * The coordinator listens only where its address points: that address when it is one (of this
 * host; listening fails otherwise), else, for a host name, the job's chosen interface.
 */
export function bindHost(host: string, chosenInterface: string): string {
  return net.isIP(host) !== 0 || isLoopback(host) ? host : chosenInterface;
}

/** CCJS_INTERFACE may be an address or an interface name; otherwise loopback or the first external IPv4. */
export function listenHost(config: Config, allLocal: boolean): string {
  const wanted = config.interface;
  const interfaces = os.networkInterfaces();
  if (wanted !== undefined) {
    const named = interfaces[wanted]?.find((entry) => entry.family === 'IPv4') ?? interfaces[wanted]?.[0];
    return named?.address ?? wanted;
  }
  if (allLocal) return '127.0.0.1';
  for (const entries of Object.values(interfaces)) {
    const external = entries?.find((entry) => entry.family === 'IPv4' && !entry.internal);
    if (external) return external.address;
  }
  return '127.0.0.1';
}
