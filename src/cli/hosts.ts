/**
 * Where ccjrun places a job's processes: hosts with slots, given as mpirun's `-H` list
 * (`a:2,b:2`) or as a hostfile (`a slots=2` per line, `#` comments), filled in order (by slot).
 */
import os from 'node:os';
import { ConfigError } from '../base/errors.js';

export interface HostSlots {
  readonly host: string;
  readonly slots: number;
}

/** A host name or address, without characters that a shell or a launch agent would read. */
const HOST_NAME = /^[A-Za-z0-9._:[\]-]+$/;

function hostSlots(host: string, slots: string | undefined, where: string): HostSlots {
  if (!HOST_NAME.test(host)) throw new ConfigError(`${where}: ${JSON.stringify(host)} is not a host name or address`);
  const count = slots === undefined ? 1 : Number(slots);
  if (!/^\d+$/.test(slots ?? '1') || count < 1) throw new ConfigError(`${where}: host ${host} needs a positive number of slots, got ${JSON.stringify(slots)}`);
  return { host, slots: count };
}

/** `a:2,b,c:4` (a host without a count has one slot). */
export function parseHostList(text: string): HostSlots[] {
  const hosts = text
    .split(',')
    .filter((entry) => entry.trim() !== '')
    .map((entry) => {
      const match = /^(.*?)(?::(\d*))?$/.exec(entry.trim()) as RegExpExecArray;
      return hostSlots(match[1] as string, match[2], `--hosts ${text}`);
    });
  if (hosts.length === 0) throw new ConfigError('--hosts needs at least one host');
  return hosts;
}

/** One host per line: `name`, `name slots=N` or `name:N`; blank lines and `#` comments are skipped. */
export function parseHostfile(text: string, file: string): HostSlots[] {
  const hosts: HostSlots[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') return;
    const where = `hostfile ${file}, line ${index + 1}`;
    const spaced = /^(\S+)(?:\s+slots\s*=\s*(\S+))?$/.exec(line);
    if (spaced === null) throw new ConfigError(`${where}: expected "host" or "host slots=N", got ${JSON.stringify(line)}`);
    const [, name, slots] = spaced as unknown as [string, string, string | undefined];
    const colon = slots === undefined ? /^(.*?):(\d+)$/.exec(name) : null;
    hosts.push(colon === null ? hostSlots(name, slots, where) : hostSlots(colon[1] as string, colon[2], where));
  });
  if (hosts.length === 0) throw new ConfigError(`hostfile ${file} names no host`);
  return hosts;
}

/** The host of each of `processCount` processes, filling each host's slots in turn (mpirun's default). */
export function placeProcesses(hosts: readonly HostSlots[], processCount: number): string[] {
  const slots = hosts.flatMap(({ host, slots }) => new Array<string>(slots).fill(host));
  if (processCount > slots.length) {
    throw new ConfigError(`-n ${processCount} needs more slots than the ${slots.length} of ${hosts.map(({ host, slots }) => `${host}:${slots}`).join(',')}`);
  }
  return slots.slice(0, processCount);
}

/** Names that mean this machine: processes there start directly, without the launch agent. */
export function isThisHost(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '::1' || host === os.hostname();
}
