/** A one-line progress bar on stderr (a plain log line per step when stderr is not a terminal). */
export class Progress {
  private done = 0;
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
    if (process.stderr.isTTY) process.stderr.write(`\r${line.padEnd(100)}`);
    else process.stderr.write(`${line}\n`);
  }

  finish(): void {
    if (process.stderr.isTTY) process.stderr.write('\n');
  }
}
