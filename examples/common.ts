/**
 * What the application examples (asp, qr, leq) share and what is not about ccjs itself: a
 * deterministic random generator, the command line, block owners, timing, the result
 * line, and the comparisons behind `--check`.
 */
import type { ColGroup, ColMember } from '../src/index.js';
import { blockRange } from '../dividable/index.js';

// ---- random numbers ----

/** mulberry32: a small, fast 32-bit generator; uniform numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The generator for one row or column of a matrix, so that every member can generate just its
 * own part and the sequential check the whole, with the same numbers.
 */
export function randomStream(seed: number, stream: number): () => number {
  // Mix both into one 32-bit state (murmur3's finalizer) so that neighbouring streams differ.
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ (stream + 0x7f4a7c15)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return mulberry32(h ^ (h >>> 16));
}

// ---- command line ----

export interface ExampleArguments {
  /** The matrix order n. */
  readonly size: number;
  readonly seed: number;
  /** Also run the sequential algorithm at rank 0 and compare. */
  readonly check: boolean;
}

/** Parses `<size> [--seed S] [--check]`; throws a usage error for anything else. */
export function parseArguments(example: string, argv: readonly string[]): ExampleArguments {
  const usage = `usage: ccjrun -n <processes> examples/${example} <size> [--seed <integer>] [--check]`;
  let size: number | undefined;
  let seed = 1;
  let check = false;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === '--check') {
      check = true;
    } else if (argument === '--seed') {
      index += 1;
      seed = parseInteger(argv[index], 'the seed', usage);
    } else if (size === undefined && !argument.startsWith('--')) {
      size = parseInteger(argument, 'the size', usage);
    } else {
      throw new Error(`${example}: unexpected argument '${argument}'\n${usage}`);
    }
  }
  if (size === undefined || size < 1) throw new Error(`${example}: a size of at least 1 is required\n${usage}`);
  return { size, seed, check };
}

function parseInteger(text: string | undefined, what: string, usage: string): number {
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isSafeInteger(value)) {
    throw new Error(`${what} must be an integer, not '${String(text)}'\n${usage}`);
  }
  return value;
}

// ---- blocks ----

/** The block (member) that holds `item` when `length` items are cut as DividableArray cuts them. */
export function blockOwner(length: number, blocks: number, item: number): number {
  for (let block = 0; block < blocks; block += 1) {
    if (item < blockRange(length, block, blocks)[1]) return block;
  }
  throw new RangeError(`item ${item} is outside [0, ${length})`);
}

// ---- timing and output ----

/**
 * Runs the parallel computation between two barriers, so that the time covers every member's
 * share from the moment all have started until the last one has finished.
 */
export async function timeBetweenBarriers<T>(member: ColMember, group: ColGroup, computation: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  await member.barrier(group);
  const started = performance.now();
  const result = await computation();
  await member.barrier(group);
  return { result, seconds: (performance.now() - started) / 1000 };
}

export interface ExampleResult {
  readonly example: string;
  readonly size: number;
  readonly members: number;
  /** Further `name=value` fields, printed between members and checksum (e.g. iterations). */
  readonly extra?: Readonly<Record<string, number>>;
  readonly checksum: number;
  readonly seconds: number;
}

/** `asp n=1000 members=4 checksum=123 time=1.234s`: the one line an example prints. */
export function resultLine(result: ExampleResult): string {
  const extra = Object.entries(result.extra ?? {}).map(([name, value]) => ` ${name}=${value}`);
  return `${result.example} n=${result.size} members=${result.members}${extra.join('')} checksum=${result.checksum} time=${result.seconds.toFixed(3)}s`;
}

// ---- checking ----

/** How many differences the FAILED line names; the rest are only counted. */
const DIFFERENCES_SHOWN = 3;

/** Prints `check: ok` when there are no differences; otherwise prints and throws `check: FAILED ...`. */
export function reportCheck(differences: readonly string[]): void {
  if (differences.length === 0) {
    console.log('check: ok');
    return;
  }
  const more = differences.length > DIFFERENCES_SHOWN ? ` (and ${differences.length - DIFFERENCES_SHOWN} more)` : '';
  const message = `check: FAILED ${differences.slice(0, DIFFERENCES_SHOWN).join('; ')}${more}`;
  console.log(message);
  throw new Error(message);
}

type NumericArray = ArrayLike<number>;

/** A description of the first element where `actual` and `expected` differ at all, or none. */
export function exactDifferences(what: string, actual: NumericArray, expected: NumericArray): string[] {
  if (actual.length !== expected.length) return [`${what}: length ${actual.length}, expected ${expected.length}`];
  for (let index = 0; index < actual.length; index += 1) {
    if (actual[index] !== expected[index]) return [`${what}[${index}] is ${actual[index]}, expected ${expected[index]}`];
  }
  return [];
}

/** A description of the first element whose relative difference exceeds `tolerance`, or none. */
export function relativeDifferences(what: string, actual: NumericArray, expected: NumericArray, tolerance: number): string[] {
  if (actual.length !== expected.length) return [`${what}: length ${actual.length}, expected ${expected.length}`];
  for (let index = 0; index < actual.length; index += 1) {
    if (!withinTolerance(actual[index], expected[index], tolerance)) {
      return [`${what}[${index}] is ${actual[index]}, expected ${expected[index]} (relative tolerance ${tolerance})`];
    }
  }
  return [];
}

/** |a - b| <= tolerance * max(|a|, |b|); exact equality for zeros, and NaN never matches. */
function withinTolerance(actual: number, expected: number, tolerance: number): boolean {
  return Math.abs(actual - expected) <= tolerance * Math.max(Math.abs(actual), Math.abs(expected));
}

/** The sum of the elements, in index order. */
export function sum(values: NumericArray): number {
  let total = 0;
  for (let index = 0; index < values.length; index += 1) total += values[index];
  return total;
}
