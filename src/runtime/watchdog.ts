/**
 * The watchdog (option `watchdogMs`): every quarter period it ages this endpoint's pending calls;
 * once one has waited a whole period, this endpoint logs its pending calls and the internal state
 * of its devices, and asks every other endpoint of the job to do the same. Each endpoint logs once.
 */
import type { Joined } from './bootstrap.js';

export class Watchdog {
  private readonly timer: NodeJS.Timeout | undefined;
  private dumped = false;

  /** Starts watching, if the configuration has a watchdog. */
  constructor(private readonly job: Joined) {
    const { config, engine, client, rank } = job;
    const watchdogMs = config.watchdogMs;
    if (watchdogMs === undefined) return;
    this.timer = setInterval(() => {
      engine.tick += 1;
      const oldest = engine.oldestPending();
      if (oldest === undefined || engine.tick - oldest.born < 4 || this.dumped) return;
      this.dump(`a call has waited more than ${watchdogMs} ms`);
      client.dump(rank);
    }, watchdogMs / 4);
    this.timer.unref();
  }

  /** Logs this endpoint's pending calls, once (the watchdog, here or elsewhere in the job, fired). */
  dump(reason: string): void {
    if (this.dumped) return;
    this.dumped = true;
    const { config, engine, label } = this.job;
    const period = (config.watchdogMs ?? 0) / 4;
    const calls = engine.pending().map((call) => `\n  - ${call.details()}${period > 0 ? `, waiting ${(((engine.tick - call.born) * period) / 1000).toFixed(1)} s` : ''}`);
    // The devices' own words (rings, bells, queues): for a bug report about a hang, not for reading.
    const devices = engine.deviceStates().map((state) => `\n  internal state of device ${state}`);
    process.stderr.write(`ccjs watchdog: ${label}: ${reason}; ${calls.length} pending call(s)${calls.join('')}${devices.join('')}\n`);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
