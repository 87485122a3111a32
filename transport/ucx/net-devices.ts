/**
 * Which network devices UCX may use (its NET_DEVICES): the job's interface, and the ports of this
 * host's RDMA devices (InfiniBand, RoCE). UCX's TCP transport listens on every network interface
 * it is given, for anyone; given only the job's interface, it listens where the job's other sockets
 * do. RDMA ports open no socket, so they stay UCX's to use.
 */
import fs from 'node:fs';
import os from 'node:os';
import { ConfigError } from '../../src/base/errors.js';

const RDMA_DEVICES = '/sys/class/infiniband';

/** The ports of this host's RDMA devices, as UCX names them ("mlx5_0:1"). */
function rdmaPorts(): string[] {
  let devices: string[];
  try {
    devices = fs.readdirSync(RDMA_DEVICES);
  } catch {
    return [];
  }
  return devices.flatMap((device) => {
    try {
      return fs.readdirSync(`${RDMA_DEVICES}/${device}/ports`).map((port) => `${device}:${port}`);
    } catch {
      return [];
    }
  });
}

/**
 * UCX's NET_DEVICES for a job that listens on `listenHost` (an address): the name of the interface
 * that has it, and every RDMA port; undefined for a wildcard address (every interface, as asked).
 * ConfigError if no interface of this host has the address.
 */
export function netDevicesFor(listenHost: string): string | undefined {
  if (listenHost === '0.0.0.0' || listenHost === '::') return undefined;
  const address = listenHost === 'localhost' ? '127.0.0.1' : listenHost;
  const named = Object.entries(os.networkInterfaces()).find(([, entries]) => entries?.some((entry) => entry.address === address));
  if (named === undefined) throw new ConfigError(`the ucx device cannot listen on ${listenHost}: no network interface of this host has that address`);
  return [named[0], ...rdmaPorts()].join(',');
}
