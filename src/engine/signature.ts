/**
 * A collective call's signature as numbers, made once per call and carried by each of its
 * messages: which collective and algorithm (`operation`), the root, and the reduction. A receiver
 * expecting another signature has found members calling collectives in different orders or with
 * different arguments, and says so, naming both calls, instead of misreading the data.
 */
import { fnv1a } from '../base/hash.js';
import { ALGORITHMS, COLLECTIVES } from '../collectives/algorithms.js';
import type { CollectiveName } from '../collectives/algorithms.js';

/** A collective call's signature, carried by each of its messages. */
export interface Signature {
  readonly operation: number;
  readonly root: number;
  readonly reduction: number;
}

/** `root` of a collective without one. */
export const NO_ROOT = 0xffff_ffff;
/** `reduction` of a collective without one. */
export const NO_REDUCTION = 0;

const ALGORITHM_BITS = 8;
const ALGORITHM_MASK = (1 << ALGORITHM_BITS) - 1;
/** The algorithm index of a member that does not know its algorithm yet (it learns the root's). */
const UNKNOWN_ALGORITHM = ALGORITHM_MASK;

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

/** The operation code of `collective` whose algorithm is not known yet. */
export function unknownAlgorithmCode(collective: CollectiveName): number {
  return ((COLLECTIVES.indexOf(collective) + 1) << ALGORITHM_BITS) | UNKNOWN_ALGORITHM;
}

/** The algorithm an operation code names, or undefined when the sender did not know it. */
export function algorithmNameOf(operation: number): string | undefined {
  const collective = collectiveOf(operation);
  return collective === undefined ? undefined : algorithmNames(collective)[operation & ALGORITHM_MASK];
}

/** False for the code of a member that did not know its algorithm yet. */
export function knowsAlgorithm(operation: number): boolean {
  return (operation & ALGORITHM_MASK) !== UNKNOWN_ALGORITHM;
}

/** Same collective, and the same algorithm unless either side did not know its own yet. */
export function sameOperation(a: number, b: number): boolean {
  if (a === b) return true;
  if ((a >>> ALGORITHM_BITS) !== (b >>> ALGORITHM_BITS)) return false;
  return (a & ALGORITHM_MASK) === UNKNOWN_ALGORITHM || (b & ALGORITHM_MASK) === UNKNOWN_ALGORITHM;
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
  const index = operation & ALGORITHM_MASK;
  const algorithm = index === UNKNOWN_ALGORITHM ? '' : ` ${algorithmNames(collective)[index] ?? 'an unknown algorithm'}`;
  const details = [root === NO_ROOT ? '' : `root ${root}`, reduction === NO_REDUCTION ? '' : reductionNameOf(reduction)].filter((part) => part !== '');
  return `${collective}(${details.join(', ')})${algorithm}`;
}

const reductionNames = new Map<number, string>();

/**
 * A reduction's number: a 32-bit hash of its name, the same in every process. Names seen here are
 * remembered so that a mismatch can name the other side's reduction too.
 */
export function reductionCode(name: string): number {
  const code = fnv1a(name) || 1;
  if (!reductionNames.has(code)) reductionNames.set(code, name);
  return code;
}

function reductionNameOf(code: number): string {
  return reductionNames.get(code) ?? `a reduction unknown here (code ${code})`;
}
