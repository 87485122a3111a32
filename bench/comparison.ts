/**
 * The table and the chart of a side-by-side benchmark (bench/shm.ts, bench/ucx.ts): each row is a
 * measurement's samples, optionally against a reference row and a target; the table gives best,
 * median, spread and ratios, the chart how many times slower than its reference each targeted row
 * is. Written to bench/results/<name>.{md,json,svg}.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stats } from './statistics.js';
import type { Samples } from './hopping.js';
import { barChart } from './svg.js';
import type { Bar } from './svg.js';

export type Unit = 'µs' | 'MB/s' | 's' | 'ms';

export interface Row {
  readonly name: string;
  /** The key of its samples (µs per hop for MB/s rows, else values in `unit`). */
  readonly samples: string;
  readonly unit: Unit;
  /** For MB/s rows: bytes per hop. */
  readonly bytes?: number;
  /** The samples key of the row it is compared with. */
  readonly reference?: string;
  readonly target?: string;
  /** Its label in the chart (default: the name). */
  readonly label?: string;
}

export interface Comparison {
  /** Results file name: bench/results/<name>.{md,json,svg}. */
  readonly name: string;
  readonly title: string;
  readonly rows: readonly Row[];
  /** Notes under the table (what was not measured, how the reference ran). */
  readonly notes: readonly string[];
}

/** Writes the table, the samples and the chart; returns the table as text. */
export function writeComparison(directory: string, comparison: Comparison, all: Samples, subtitle: string): string {
  const summary = (row: Row) => {
    const values = all[row.samples];
    if (values === undefined || values.length === 0) return undefined;
    const own = stats(values);
    // Bandwidth rows turn µs per hop into MB/s: the best is then the highest.
    return row.bytes === undefined ? own : { best: row.bytes / own.best, median: row.bytes / own.median, spread: own.spread };
  };
  const byName = new Map(comparison.rows.map((row) => [row.samples, row]));
  const lines = ['| measurement | best | median | spread (max/min) | best ÷ reference (median ÷ median) | target |', '|---|---:|---:|---:|---|---|'];
  const bars: Bar[] = [];
  for (const row of comparison.rows) {
    const own = summary(row);
    if (own === undefined) {
      lines.push(`| ${row.name} | n/a | | | | ${row.target ?? ''} |`);
      continue;
    }
    const referenceRow = row.reference === undefined ? undefined : byName.get(row.reference);
    const reference = referenceRow === undefined ? undefined : summary(referenceRow);
    const versus = reference === undefined ? (row.reference === undefined ? '' : 'n/a') : `${(own.best / reference.best).toFixed(2)}× (${(own.median / reference.median).toFixed(2)}×)`;
    const digits = row.unit === 'MB/s' ? 0 : 3;
    lines.push(`| ${row.name} | ${own.best.toFixed(digits)} ${row.unit} | ${own.median.toFixed(digits)} ${row.unit} | ${own.spread.toFixed(2)} | ${versus} | ${row.target ?? ''} |`);
    // Only relative targets ("≤ 2×") are charted.
    if (row.target?.endsWith('×') === true && reference !== undefined) {
      const bandwidth = row.unit === 'MB/s';
      const target = Number(/[\d.]+/.exec(row.target)?.[0]);
      bars.push({ label: row.label ?? row.name, value: bandwidth ? reference.best / own.best : own.best / reference.best, target: bandwidth ? 1 / target : target });
    }
  }
  const heading = `${comparison.title}, ${subtitle}, ${os.cpus().length} cores (Node ${process.version}, ${new Date().toISOString()})`;
  const notes = comparison.notes.length > 0 ? `\n${comparison.notes.join('\n')}\n` : '';
  const text = `${heading}\n\n${lines.join('\n')}\n${notes}`;
  fs.mkdirSync(directory, { recursive: true });
  fs.writeFileSync(path.join(directory, `${comparison.name}.json`), `${JSON.stringify(all, null, 2)}\n`);
  fs.writeFileSync(path.join(directory, `${comparison.name}.md`), text);
  fs.writeFileSync(path.join(directory, `${comparison.name}.svg`), barChart(`${comparison.title}: times slower than the reference (best of the run)`, 'times slower (log scale); black mark: the target', bars));
  return text;
}
