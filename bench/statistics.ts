/** What the benchmarks and ccjtune make of repeated measurements on a noisy machine. */

/** Best (least), median (the upper one of an even count) and spread (most ÷ least) of some times. */
export function stats(values: readonly number[]): { best: number; median: number; spread: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const best = sorted[0] as number;
  return { best, median: sorted[Math.floor(sorted.length / 2)] as number, spread: (sorted[sorted.length - 1] as number) / best };
}

/** One-sided sign test: is `count` of `trials` fair coin tosses coming up one way unlikely (p < 5%)? */
export function significant(count: number, trials: number): boolean {
  let ways = 0;
  let choose = 1;
  for (let k = 0; k <= trials; k += 1) {
    if (k >= count) ways += choose;
    choose = (choose * (trials - k)) / (k + 1);
  }
  return ways / 2 ** trials < 0.05;
}
