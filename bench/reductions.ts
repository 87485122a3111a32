/**
 * Cost of the built-in element-wise reductions on typed arrays, after every operator has run on
 * every typed-array type (as in a long job, where a shared loop would have gone megamorphic):
 * the native loops (native/reduce.cc) into a new array and in place (what the collectives do with
 * an operand they received), beside the JavaScript loops, run in a child process with the addon
 * switched off (CCJS_NO_NATIVE_REDUCE=1).
 *
 *   node dist/bench/reductions.js [--elements 1048576]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Reductions } from '../reduction/index.js';
import type { ReductionObject } from '../reduction/index.js';
import { reduceInto } from '../reduction/reductions.js';
import { reduceNative } from '../reduction/native.js';

const index = process.argv.indexOf('--elements');
const length = index >= 0 ? Number(process.argv[index + 1]) : 1 << 20;
const childMode = process.argv.includes('--child');
const TYPES = [Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array] as const;
const RUNS = 40;

interface Row {
  readonly operation: string;
  readonly loop: string;
  readonly best: number;
  readonly median: number;
}

/** Best and median ms of `RUNS` calls of `call`. */
function time(call: () => void): { best: number; median: number } {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const start = process.hrtime.bigint();
    call();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((x, y) => x - y);
  return { best: times[0] as number, median: times[RUNS / 2] as number };
}

function measure(loop: string): Row[] {
  for (const Type of TYPES) {
    for (const op of [Reductions.SUM, Reductions.PROD, Reductions.MIN, Reductions.MAX]) op.reduce(new Type(256).fill(1), new Type(256).fill(2));
  }
  const a = Float64Array.from({ length }, (_, i) => i / 3);
  const b = Float64Array.from({ length }, (_, i) => length - i);
  const into = a.slice();
  const rows: Row[] = [];
  for (const op of [Reductions.SUM, Reductions.MAX, Reductions.PROD] as ReductionObject<Float64Array>[]) {
    const name = (op as { name: string }).name;
    rows.push({ operation: `${name} Float64Array`, loop: `${loop}, new result`, ...time(() => op.reduce(a, b)) });
    rows.push({ operation: `${name} Float64Array`, loop: `${loop}, in place`, ...time(() => reduceInto(op, into, b, into)) });
  }
  return rows;
}

if (childMode) {
  process.stdout.write(JSON.stringify(measure('JavaScript')));
} else {
  const native = reduceNative === undefined ? [] : measure('native');
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--elements', String(length)], {
    env: { ...process.env, CCJS_NO_NATIVE_REDUCE: '1' },
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`the JavaScript-loop run failed:\n${child.stderr}`);
  const javascript = JSON.parse(child.stdout) as Row[];
  const lines = ['| operation | loop | elements | best ms | median ms | GB/s (read+write, best) | JavaScript ÷ this (best) |', '|---|---|---:|---:|---:|---:|---:|'];
  for (const row of [...native, ...javascript]) {
    const counterpart = javascript.find((other) => other.operation === row.operation && other.loop.endsWith(row.loop.split(', ')[1] as string)) as Row;
    lines.push(`| ${row.operation} | ${row.loop} | ${length} | ${row.best.toFixed(3)} | ${row.median.toFixed(3)} | ${((3 * 8 * length) / row.best / 1e6).toFixed(2)} | ${(counterpart.best / row.best).toFixed(2)}× |`);
  }
  if (native.length === 0) lines.push('', 'The reductions addon is not built (or CCJS_NO_NATIVE_REDUCE=1): JavaScript loops only.');
  process.stdout.write(`${lines.join('\n')}\n`);
}
