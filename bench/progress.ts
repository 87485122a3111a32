/**
 * A progress bar on stderr with the time elapsed and an estimate of the time left: redrawn in
 * place on a terminal; in a log (CI, a pipe) one line per 5% of the work, so long runs show that
 * they move without flooding the log. Steps may weigh differently (a 16 MiB point takes longer
 * than a 0 B one), and the estimate is the time so far scaled by the weight still to come.
 */
import os from 'node:os';
import { formatDuration } from './units.js';

const LOG_STEPS = 20;
const BAR_WIDTH = 30;

export class Progress {
  private done = 0;
  private lastLogged = -1;
  private readonly started = Date.now();

  constructor(
    private readonly title: string,
    /** The weight of all the steps. */
    private readonly total: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {}

  /** One step done, named `step`, of `weight` (1 unless given). */
  tick(step: string, weight = 1): void {
    this.done += weight;
    // The weights may add up in another order than the total did, and differ from it in the last bits.
    const share = this.done >= this.total * (1 - 1e-9) ? 1 : this.done / this.total;
    const seconds = (Date.now() - this.started) / 1000;
    const left = share < 1 ? `, ETA ${formatDuration((seconds * (1 - share)) / share)}` : '';
    const filled = Math.round(share * BAR_WIDTH);
    const line = `${this.title} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${Math.floor(100 * share)}% ${formatDuration(seconds)}${left}  ${step}`;
    if (this.out.isTTY) {
      // Cut to the terminal's width: a wrapped line could not be redrawn in place.
      const columns = (this.out.columns || 100) - 1;
      this.out.write(`\r${line.slice(0, columns).padEnd(columns)}`);
      return;
    }
    const logStep = Math.floor(share * LOG_STEPS);
    if (logStep > this.lastLogged) {
      this.lastLogged = logStep;
      this.out.write(`${line}\n`);
    }
  }

  finish(): void {
    if (this.out.isTTY) this.out.write('\n');
  }
}

/** The warning to print before measuring when the machine is busier than its cores, or undefined when it is not. */
export function loadWarning(loadAverage: number, cores: number): string | undefined {
  if (loadAverage <= cores) return undefined;
  return `warning: the load average (${loadAverage.toFixed(2)} over the last minute) is above the ${cores} core${cores === 1 ? '' : 's'} of this machine: other processes compete for them, so these measurements will be mostly noise; measure on an idle machine`;
}

/** Prints loadWarning's warning for this machine, if any, on stderr. */
export function warnIfLoaded(): void {
  const warning = loadWarning(os.loadavg()[0], os.availableParallelism());
  if (warning !== undefined) process.stderr.write(`${warning}\n`);
}
