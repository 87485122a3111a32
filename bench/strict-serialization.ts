/**
 * What refusing unregistered classes at the sender (strictSerialization, on by default) costs the
 * v8 serializer, which must look through a value for class instances before encoding it: encode
 * time of a small object and of 1000 nested objects, strict off (the reference) and on, in one run,
 * best of 7 repetitions. (msgpack meets instances while it encodes: nothing extra.)
 *
 *   node dist/bench/strict-serialization.js
 */
import { V8Serializer } from '../src/serialization/v8.js';

const VALUES: [string, unknown, number][] = [
  ['small object', { id: 7, name: 'pivot', value: 3.25, flags: [true, false] }, 200_000],
  ['1000 nested objects', { rows: Array.from({ length: 1000 }, (_, i) => ({ i, name: `r${i}`, v: [i, i + 1] })) }, 300],
];

/** µs per encode of `value`, best of 7 repetitions of `count` encodes. */
function encodeTime(serializer: V8Serializer, value: unknown, count: number): number {
  for (let i = 0; i < count / 10; i += 1) serializer.encode(value);
  let best = Infinity;
  for (let repetition = 0; repetition < 7; repetition += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < count; i += 1) serializer.encode(value);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / count / 1000);
  }
  return best;
}

console.log('| value | strict off µs | strict on µs | on / off |');
console.log('|---|---:|---:|---:|');
for (const [label, value, count] of VALUES) {
  const [off, on] = [false, true].map((strict) => encodeTime(new V8Serializer({ strict }), value, count)) as [number, number];
  console.log(`| ${label} | ${off.toFixed(3)} | ${on.toFixed(3)} | ${(on / off).toFixed(2)} |`);
}
