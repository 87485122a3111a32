/**
 * Cost of the built-in element-wise reductions on typed arrays, after every operator has run on
 * every typed-array type (as in a long job, where a shared loop would have gone megamorphic).
 *
 *   node dist/bench/reductions.js [--elements 1048576]
 */
import { Reductions } from '../reduction/index.js';

const index = process.argv.indexOf('--elements');
const length = index >= 0 ? Number(process.argv[index + 1]) : 1 << 20;
const TYPES = [Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array] as const;

for (const Type of TYPES) {
  for (const op of [Reductions.SUM, Reductions.PROD, Reductions.MIN, Reductions.MAX]) op.reduce(new Type(64).fill(1), new Type(64).fill(2));
}
const a = Float64Array.from({ length }, (_, i) => i / 3);
const b = Float64Array.from({ length }, (_, i) => length - i);
const lines = ['| operation | elements | best ms | median ms | GB/s (read+write) |', '|---|---:|---:|---:|---:|'];
for (const op of [Reductions.SUM, Reductions.MAX, Reductions.PROD]) {
  const times: number[] = [];
  for (let run = 0; run < 40; run += 1) {
    const start = process.hrtime.bigint();
    op.reduce(a, b);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((x, y) => x - y);
  lines.push(`| ${op.name} Float64Array | ${length} | ${times[0].toFixed(2)} | ${times[20].toFixed(2)} | ${((3 * 8 * length) / times[0] / 1e6).toFixed(2)} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
