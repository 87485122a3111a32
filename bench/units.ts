/** How the benchmarks write sizes, times and bandwidths: in tables, progress lines and chart ticks. */
const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

/** "0 B", "512 B", "4 KiB", "16 MiB": binary units where the size is a whole number of them. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [['GiB', GIB], ['MiB', MIB], ['KiB', KIB]] as const) if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} B`;
}

/** At most three significant digits, without trailing zeros: 0.25, 12.5, 340. */
const short = (value: number) => String(Number(value.toPrecision(3)));

/** "250 µs", "1.5 ms", "2 s". */
export function formatMicroseconds(microseconds: number): string {
  if (microseconds >= 1e6) return `${short(microseconds / 1e6)} s`;
  if (microseconds >= 1e3) return `${short(microseconds / 1e3)} ms`;
  return `${short(microseconds)} µs`;
}

/** "0", "800 MB/s", "1.2 GB/s" in `unit` (decimal units: MB/s is bytes per µs). */
export function formatBandwidth(megabytesPerSecond: number, unit: 'MB/s' | 'GB/s'): string {
  if (megabytesPerSecond === 0) return '0';
  return unit === 'GB/s' ? `${short(megabytesPerSecond / 1000)} GB/s` : `${short(megabytesPerSecond)} MB/s`;
}

/** "45s", "3m05s", "1h02m": how long until a run ends. */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
