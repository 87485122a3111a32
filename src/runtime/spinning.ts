/**
 * How long a waiting call spins on polling devices before it sleeps (option `spinMicroseconds`),
 * and whether it may spin at all: not where the endpoints of this machine outnumber its cores.
 */
import os from 'node:os';
import type { World } from '../engine/endpoints.js';
import { progressEngine } from '../engine/progress.js';
import type { Config } from './config.js';

/** Sets this thread's spin budget; returns what lifts the veto on spinning, where there is one. */
export function startSpinning(config: Config, world: World, rank: number): (() => void) | undefined {
  progressEngine.setBudget(config.spinMicroseconds);
  const self = world.endpoints[rank] as World['endpoints'][number];
  // Cores are the kernel's: hosts that share one (CCJS_HOST, containers) share them.
  const onMachine = world.endpoints.filter((endpoint) => endpoint.machine === self.machine).length;
  return onMachine > os.availableParallelism() ? progressEngine.forbidSpinning() : undefined;
}
