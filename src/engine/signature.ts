/**
 * A collective call's signature as numbers, made once per call and carried by each of its
 * messages: which collective and algorithm (`operation`), the root, and the reduction. A receiver
 * expecting another signature has found members calling collectives in different orders or with
 * different arguments, and says so, naming both calls, instead of misreading the data.
 */
import { ALGORITHMS, COLLECTIVES } from '../collectives/algorithms.js';
import type { CollectiveName } from '../collectives/algorithms.js';

/** `root` of a collective without one. */
export const NO_ROOT = 0xffff_ffff;
/** `reduction` of a collective without one. */
export const NO_REDUCTION = 0;

const ALGORITHM_BITS = 8;

let names: Readonly<Record<CollectiveName, readonly string[]>> | undefined;

/** Algorithm names by collective, in a fixed order that every process shares (made on first use: the tables import modules that import this one). */
function algorithmNames(collective: CollectiveName): readonly string[] {
  names ??= Object.fromEntries(COLLECTIVES.map((name) => [name, Object.keys(ALGORITHMS[name])])) as Record<CollectiveName, string[]>;
  return names[collective];
}

/** 1 + collective index above the algorithm's index: never 0, which marks point-to-point traffic. */
export function operationCode(collective: CollectiveName, algorithm: string): number {
  return ((COLLECTIVES.indexOf(collective) + 1) << ALGORITHM_BITS) | algorithmNames(collective).indexOf(algorithm);
}

/** The collective behind an operation code (undefined for codes that name none). */
export function collectiveOf(operation: number): CollectiveName | undefined {
  return COLLECTIVES[(operation >>> ALGORITHM_BITS) - 1];
}

/** "broadcast(root 2) binomial" for a signature's numbers, for error messages. */
export function describeSignature(operation: number, root: number, reduction: number): string {
  if (operation === 0) return 'a point-to-point message';
  const collective = collectiveOf(operation);
  if (collective === undefined) return `an unknown operation (code ${operation})`;
  const algorithm = algorithmNames(collective)[operation & ((1 << ALGORITHM_BITS) - 1)] ?? 'an unknown algorithm';
  const details = [root === NO_ROOT ? '' : `root ${root}`, reduction === NO_REDUCTION ? '' : reductionNameOf(reduction)].filter((part) => part !== '');
  return `${collective}(${details.join(', ')}) ${algorithm}`;
}

const reductionNames = new Map<number, string>();

/**
 * A reduction's number: a 32-bit hash of its name, the same in every process. Names seen here are
 * remembered so that a mismatch can name the other side's reduction too.
 */
export function reductionCode(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  const code = hash >>> 0 || 1;
  if (!reductionNames.has(code)) reductionNames.set(code, name);
  return code;
}

function reductionNameOf(code: number): string {
  return reductionNames.get(code) ?? `a reduction unknown here (code ${code})`;
}
