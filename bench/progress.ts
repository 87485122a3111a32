/**
 * A progress bar on stderr: redrawn in place on a terminal; in a log (CI, a pipe) one line per
 * 5% of the work, so long runs show that they move without flooding the log.
 */
const LOG_STEPS = 20;

export class Progress {
  private done = 0;
  private lastLogged = -1;
  private readonly started = Date.now();

  constructor(
    private readonly title: string,
    private readonly total: number,
  ) {}

  tick(step: string): void {
    this.done += 1;
    const width = 30;
    const filled = Math.round((this.done / this.total) * width);
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    const line = `${this.title} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} ${seconds}s ${step}`;
    if (process.stderr.isTTY) {
      process.stderr.write(`\r${line.padEnd(100)}`);
      return;
    }
    const logStep = Math.floor((this.done / this.total) * LOG_STEPS);
    if (logStep > this.lastLogged || this.done === this.total) {
      this.lastLogged = logStep;
      process.stderr.write(`${line}\n`);
    }
  }

  finish(): void {
    if (process.stderr.isTTY) process.stderr.write('\n');
  }
}
