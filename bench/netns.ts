/**
 * Test hosts for jobs across hosts on one machine: network namespaces (one kernel, several network
 * stacks), each with a veth pair to a bridge and an address of 10.213.77.0/24 that exists only
 * there, removed by remove(). A launch agent runs a command in the namespace named by HOST with
 * CCJS_HOST=HOST (the namespaces share a kernel, so the boot id would call them one host). Needs
 * root and iproute2. Used by spec/netns.spec.ts and bench/hosts.ts.
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
  private readonly bridge: string;
  private readonly directory: string;

  constructor(count: number) {
    const tag = String(process.pid % 100_000);
    this.names = Array.from({ length: count }, (_, index) => `ccjs${tag}h${index + 1}`);
    this.bridge = `ccjs${tag}br`;
    this.directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-netns-'));
    this.agent = path.join(this.directory, 'agent');
    fs.writeFileSync(this.agent, '#!/bin/sh\nhost="$1"; shift\nexec ip netns exec "$host" env CCJS_HOST="$host" "$@"\n', { mode: 0o755 });
    try {
      ip('link', 'add', this.bridge, 'type', 'bridge');
      ip('link', 'set', this.bridge, 'up');
      this.names.forEach((name, index) => {
        const outside = `ccjs${tag}v${index + 1}`;
        ip('netns', 'add', name);
        ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', INTERFACE, 'netns', name);
        ip('link', 'set', outside, 'master', this.bridge, 'up');
        ip('-n', name, 'addr', 'add', `${SUBNET}.${index + 1}/24`, 'dev', INTERFACE);
        ip('-n', name, 'link', 'set', INTERFACE, 'up');
        ip('-n', name, 'link', 'set', 'lo', 'up');
      });
    } catch (error) {
      this.remove();
      throw error;
    }
  }

  /** Process ids running in namespace `name`. */
  pids(name: string): number[] {
    return execFileSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  }

  remove(): void {
    for (const name of this.names) {
      for (const pid of this.pidsIfAny(name)) process.kill(pid, 'SIGKILL');
      ipQuietly('netns', 'del', name);
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
