/**
 * Test hosts for jobs across hosts on one machine: network namespaces (one kernel, several network
 * stacks), each with a veth pair to a bridge and an address of 10.213.77.0/24 that exists only
 * there, removed by remove(). Each host's name resolves to its address in every host (ip's
 * /etc/netns/<host>/hosts). Two ways in:
 *   - `agent HOST command...`, ccjrun's launch agent: runs a command in the namespace with
 *     CCJS_HOST=HOST (the namespaces share a kernel, so the boot id would call them one host);
 *   - `enter HOST command...`: as a daemon or a launcher's remote shell sees a host of its own: its
 *     network, its host name (a UTS namespace) and its /etc/hosts, and the machine's /sys (cgroups,
 *     which `ip netns exec` hides and slurmd needs); `ssh` is the same as a remote agent for
 *     launchers that call ssh (`ssh [options] HOST command line`: mpirun's plm_rsh_agent, hydra's
 *     -launcher-exec).
 * Needs root, iproute2 and util-linux. Used by spec/netns.spec.ts, spec/cluster-managers.spec.ts
 * and bench/hosts.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SUBNET = '10.213.77';
export const INTERFACE = 'ccjs0';

/** Namespaces on a bridge, and a launch agent that runs a command in one of them. */
export class Hosts {
  readonly names: string[];
  readonly agent: string;
  readonly enter: string;
  readonly ssh: string;
  private readonly bridge: string;
  private readonly directory: string;

  constructor(count: number) {
    const tag = String(process.pid % 100_000);
    this.names = Array.from({ length: count }, (_, index) => `ccjs${tag}h${index + 1}`);
    this.bridge = `ccjs${tag}br`;
    this.directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-netns-'));
    this.agent = path.join(this.directory, 'agent');
    fs.writeFileSync(this.agent, '#!/bin/sh\nhost="$1"; shift\nexec ip netns exec "$host" env CCJS_HOST="$host" "$@"\n', { mode: 0o755 });
    this.enter = path.join(this.directory, 'enter');
    fs.writeFileSync(
      this.enter,
      '#!/bin/sh\nhost="$1"; shift\n' +
        'exec nsenter --net="/var/run/netns/$host" unshare --mount --uts sh -c \'mount --bind "/etc/netns/$0/hosts" /etc/hosts && hostname "$0" && exec "$@"\' "$host" "$@"\n',
      { mode: 0o755 },
    );
    this.ssh = path.join(this.directory, 'ssh');
    fs.writeFileSync(this.ssh, `#!/bin/sh\nwhile [ "\${1#-}" != "$1" ]; do shift; done\nhost="$1"; shift\nexec ${this.enter} "$host" sh -c "$*"\n`, { mode: 0o755 });
    const table = ['127.0.0.1 localhost', ...this.names.map((name) => `${this.address(name)} ${name}`)].join('\n');
    try {
      ip('link', 'add', this.bridge, 'type', 'bridge');
      ip('link', 'set', this.bridge, 'up');
      this.names.forEach((name, index) => {
        const outside = `ccjs${tag}v${index + 1}`;
        ip('netns', 'add', name);
        ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', INTERFACE, 'netns', name);
        ip('link', 'set', outside, 'master', this.bridge, 'up');
        ip('-n', name, 'addr', 'add', `${this.address(name)}/24`, 'dev', INTERFACE);
        ip('-n', name, 'link', 'set', INTERFACE, 'up');
        ip('-n', name, 'link', 'set', 'lo', 'up');
        fs.mkdirSync(hostsDirectory(name), { recursive: true });
        fs.writeFileSync(path.join(hostsDirectory(name), 'hosts'), `${table}\n`);
      });
    } catch (error) {
      this.remove();
      throw error;
    }
  }

  /** The address of host `name` (on the bridge). */
  address(name: string): string {
    return `${SUBNET}.${this.names.indexOf(name) + 1}`;
  }

  /** Process ids running in namespace `name`. */
  pids(name: string): number[] {
    return execFileSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  }

  remove(): void {
    for (const name of this.names) {
      for (const pid of this.pidsIfAny(name)) process.kill(pid, 'SIGKILL');
      ipQuietly('netns', 'del', name);
      fs.rmSync(hostsDirectory(name), { recursive: true, force: true });
    }
    ipQuietly('link', 'del', this.bridge);
    fs.rmSync(this.directory, { recursive: true, force: true });
  }

  private pidsIfAny(name: string): number[] {
    try {
      return this.pids(name);
    } catch {
      return [];
    }
  }
}

/** Where ip keeps files that `ip netns exec` binds over /etc for namespace `name` (its hosts). */
function hostsDirectory(name: string): string {
  return path.join('/etc/netns', name);
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function ipQuietly(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // Already gone.
  }
}
