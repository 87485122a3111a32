/**
 * A collective call's signature as numbers, made once per call and carried by each of its
 * messages: which collective and algorithm (`operation`), the root, and the reduction. A receiver
 * expecting another signature has found members calling collectives in different orders or with
 * different arguments, and says so, naming both calls, instead of misreading the data.
 */
import { fnv1a } from '../base/hash.js';

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
/** The algorithm id of a member that does not know its algorithm yet (it learns the root's). */
const UNKNOWN_ALGORITHM = ALGORITHM_MASK;

/** A collective's wire id (1 to 255: 0 marks point-to-point traffic) and its algorithms' (0 to 254: 255 is UNKNOWN_ALGORITHM), by name. */
export interface CollectiveIds {
  readonly id: number;
  readonly algorithms: Readonly<Record<string, number>>;
}

/** Every collective's ids, by name: the collectives register theirs (src/collectives/algorithms.ts), which the engine does not import. */
export type OperationIds = Readonly<Record<string, CollectiveIds>>;

interface CollectiveNumbers {
  readonly name: string;
  readonly id: number;
  readonly algorithmIds: ReadonlyMap<string, number>;
  readonly algorithmNames: ReadonlyMap<number, string>;
}

let byName = new Map<string, CollectiveNumbers>();
let byId = new Map<number, CollectiveNumbers>();

/** Makes `ids` the names behind operation codes; throws where two collectives, or two algorithms of one, share an id, or an id does not fit its bits. */
export function registerOperations(ids: OperationIds): void {
  const names = new Map<string, CollectiveNumbers>();
  const numbers = new Map<number, CollectiveNumbers>();
  for (const [name, { id, algorithms }] of Object.entries(ids)) {
    if (!Number.isInteger(id) || id < 1 || id > 0xff || numbers.has(id)) throw new Error(`collective ${name}: wire id ${id} is not free`);
    const algorithmIds = new Map(Object.entries(algorithms));
    const algorithmNames = new Map<number, string>();
    for (const [algorithm, algorithmId] of algorithmIds) {
      if (!Number.isInteger(algorithmId) || algorithmId < 0 || algorithmId >= UNKNOWN_ALGORITHM || algorithmNames.has(algorithmId)) {
        throw new Error(`${name} algorithm ${algorithm}: wire id ${algorithmId} is not free`);
      }
      algorithmNames.set(algorithmId, algorithm);
    }
    const collective = { name, id, algorithmIds, algorithmNames };
    names.set(name, collective);
    numbers.set(id, collective);
  }
  byName = names;
  byId = numbers;
}

function registered(collective: string): CollectiveNumbers {
  const numbers = byName.get(collective);
  if (numbers === undefined) throw new Error(`no wire id registered for collective ${collective}`);
  return numbers;
}

/** The collective id above the algorithm id: never 0, which marks point-to-point traffic. */
export function operationCode(collective: string, algorithm: string): number {
  const numbers = registered(collective);
  const id = numbers.algorithmIds.get(algorithm);
  if (id === undefined) throw new Error(`no wire id registered for ${collective} algorithm ${algorithm}`);
  return (numbers.id << ALGORITHM_BITS) | id;
}

/** The operation code of `collective` whose algorithm is not known yet. */
export function unknownAlgorithmCode(collective: string): number {
  return (registered(collective).id << ALGORITHM_BITS) | UNKNOWN_ALGORITHM;
}

/** The algorithm an operation code names, or undefined when the sender did not know it. */
export function algorithmNameOf(operation: number): string | undefined {
  return byId.get(operation >>> ALGORITHM_BITS)?.algorithmNames.get(operation & ALGORITHM_MASK);
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
export function collectiveOf(operation: number): string | undefined {
  return byId.get(operation >>> ALGORITHM_BITS)?.name;
}

/** "broadcast(root 2) binomial" for a signature's numbers, for error messages. */
export function describeSignature(operation: number, root: number, reduction: number): string {
  if (operation === 0) return 'a point-to-point message';
  const collective = collectiveOf(operation);
  if (collective === undefined) return `an unknown operation (code ${operation})`;
  const algorithm = knowsAlgorithm(operation) ? ` ${algorithmNameOf(operation) ?? 'an unknown algorithm'}` : '';
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
