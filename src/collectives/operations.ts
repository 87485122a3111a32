/**
 * The collective operations as members call them (CCJ 2.3 plus allToAll, reduceScatter, scan):
 * check the arguments before any message moves, take the group's next operation tag, choose the
 * algorithm, and turn DividableData objects into per-rank elements and back.
 */
import { reductionName, toReductionObject } from '../../reduction/reduction-object.js';
import { NO_REDUCTION, NO_ROOT, algorithmNameOf, collectiveOf, operationCode, reductionCode, unknownAlgorithmCode } from '../engine/signature.js';
import type { ReductionLike, ReductionObject } from '../../reduction/reduction-object.js';
import { checkDividable, isDividable } from '../../dividable/dividable-data.js';
import type { DividableData } from '../../dividable/dividable-data.js';
import { progressEngine } from '../engine/progress.js';
import { CollectiveContext } from './context.js';
import type { CollectiveName, Selection } from './algorithm.js';
import type { AlgorithmName } from './algorithms.js';
import type { CollectiveGroup, CollectiveMember } from './participants.js';
import { estimatedBytes } from './message-size.js';
import { topologyOf } from './hierarchy.js';
import { sharesMemory } from './segment/sharing.js';

/** Per-call choices of collective `C`: `{ algorithm: 'mst' }` runs that algorithm whatever the tables say. */
export interface CollectiveOptions<C extends CollectiveName = CollectiveName> {
  /**
   * One of `C`'s algorithms (`npx ccjbench --list-algorithms`); every member must pass the same.
   * A non-commutative reduction replaces one that does not combine in rank order.
   */
  readonly algorithm?: AlgorithmName<C>;
}

interface Call<C extends CollectiveName> {
  readonly context: CollectiveContext;
  readonly selection: Selection<C>;
}

interface CallShape<T> {
  readonly bytes: number;
  readonly op?: ReductionObject<T>;
  readonly options?: CollectiveOptions;
}

/** Rooted collectives whose non-roots may pass null, and so may not know the size the table keys on. */
const LEARNS_FROM_ROOT: ReadonlySet<CollectiveName> = new Set(['broadcast', 'scatter']);

/**
 * `opLike` as a ReductionObject of the data's own type `T`. Its declared type `D` may be wider
 * only in what TypeScript cannot tell apart at run time (a `ReductionObject<Float64Array>` combining
 * `Float64Array<ArrayBuffer>` data), so its results are taken as `T`, as the caller's data is.
 */
function reductionOf<T extends D, D>(opLike: ReductionLike<D>, operation: string): ReductionObject<T> {
  return toReductionObject(opLike, operation) as ReductionObject<T>;
}

/**
 * Runs one collective call: takes the group's next operation tag, chooses the algorithm from the
 * call's shape (bytes per member, member count, commutativity, overrides), and makes the
 * signature, as numbers, that names the operation, algorithm, root and reduction, so a member
 * that called something else is caught at the first message it exchanges. Rooted calls check
 * their root with their neighbours; a non-root that cannot know the size a size-dependent table
 * keys on takes the root's algorithm from the first message that names it. A call that fails
 * here is aborted at every member, so none of them waits for it forever.
 */
async function perform<G extends CollectiveGroup, C extends CollectiveName, T, R>(
  member: CollectiveMember<G>,
  group: G,
  collective: C,
  root: number,
  shape: CallShape<T>,
  body: (call: Call<C>) => Promise<R>,
): Promise<R> {
  const rank = member.rankIn(group, collective);
  const { engine, selector, traceFile } = member.endpoint(collective);
  const requested = shape.options?.algorithm ?? group.algorithmFor(collective);
  const members = group.size();
  const commutative = shape.op?.commutative !== false;
  const { layout } = topologyOf(group);
  const sharedMemory = sharesMemory(group, undefined, engine);
  const learns = root >= 0 && rank !== root && LEARNS_FROM_ROOT.has(collective) && selector.dependsOnSize(collective, members, layout, requested, sharedMemory);
  let selection = learns ? undefined : selector.select(collective, { bytes: shape.bytes, members, commutative, requested, layout, sharedMemory });
  const tag = member.nextCollectiveTag(group);
  const signature = {
    operation: selection === undefined ? unknownAlgorithmCode(collective) : operationCode(collective, selection.name),
    root: root < 0 ? NO_ROOT : root,
    reduction: shape.op ? reductionCode(reductionName(shape.op)) : NO_REDUCTION,
  };
  // The levels of a hierarchical call choose by size only where every member knows the size.
  const levelShape = { bytes: LEARNS_FROM_ROOT.has(collective) ? undefined : shape.bytes, commutative, layout };
  let context = new CollectiveContext(member, group, rank, collective, tag, signature, levelShape);
  // An algorithm through a collective segment checks every member's call itself, root included.
  const rootChecked = root >= 0 && members > 1 && selection?.algorithm.sharedMemory !== true ? context.checkRoot() : undefined;
  try {
    if (selection === undefined) {
      const learned = engine.probeAlgorithm(group.route, member, rank, tag, collective);
      // Waits for the algorithm, but fails as soon as the root check does: with roots mismatched,
      // no message naming an algorithm may ever come.
      const operation = await (rootChecked === undefined ? learned : Promise.race([learned, rootChecked.then(() => learned)]));
      selection = selector.learned(collective, collectiveOf(operation) === collective ? algorithmNameOf(operation) : undefined);
      context = new CollectiveContext(member, group, rank, collective, tag, { ...signature, operation }, levelShape);
    }
    if (selector.trace) {
      const details = [root < 0 ? '' : `root ${root}`, shape.op ? reductionName(shape.op) : ''].filter((part) => part !== '').join(', ');
      const how = learns ? ', the root\'s choice' : '';
      const hosts = layout.hosts > 1 ? ` on ${layout.hosts} hosts (at most ${layout.perHost} on one)` : '';
      const refused = selection.refused === undefined ? '' : `; ${selection.refused}`;
      selector.trace(`ccjs trace: group '${group.name}' rank ${rank}: ${collective}(${details}) ${selection.name}, ${shape.bytes} bytes, ${members} members${hosts}${how}${refused}`);
    }
    const traced = traceFile === undefined ? selection : traceFile.collective(selection, { collective, group: group.name, rank, root, reduction: shape.op && reductionName(shape.op), bytes: shape.bytes, members });
    const result = body({ context, selection: traced });
    if (rootChecked !== undefined) await Promise.all([result, rootChecked]);
    const value = await result;
    progressEngine.stats.collectives += 1;
    return value;
  } catch (error) {
    context.abort(error as Error);
    throw error;
  }
}

function elementsOf<E>(data: DividableData<E>, size: number): E[] {
  return Array.from({ length: size }, (_, index) => data.elementAt(index, size));
}

function storeElements<E>(target: DividableData<E>, elements: readonly E[]): void {
  elements.forEach((element, index) => target.setElementAt(index, elements.length, element));
}

export function barrier<G extends CollectiveGroup>(member: CollectiveMember<G>, group: G, options?: CollectiveOptions): Promise<void> {
  return perform(member, group, 'barrier', -1, { bytes: 0, options }, ({ context, selection }) => selection.algorithm.run(context));
}

/**
 * Non-roots key the selection on what they pass (MPI's convention: a same-sized placeholder, or
 * null for small), unless the table depends on the size: then they take the root's choice.
 */
export async function broadcast<G extends CollectiveGroup, T>(member: CollectiveMember<G>, group: G, value: T, root: number, options?: CollectiveOptions): Promise<T> {
  group.checkRank(root, 'broadcast root');
  return perform(member, group, 'broadcast', root, { bytes: estimatedBytes(value), options }, async ({ context, selection }) => {
    const result = await selection.algorithm.run(context, value, root);
    return context.rank === root ? value : result;
  });
}

export async function reduce<G extends CollectiveGroup, T extends D, D = T>(member: CollectiveMember<G>, group: G, value: T, opLike: ReductionLike<D>, root: number, options?: CollectiveOptions): Promise<T | null> {
  const op = reductionOf<T, D>(opLike, 'reduce');
  group.checkRank(root, 'reduce root');
  return perform(member, group, 'reduce', root, { bytes: estimatedBytes(value), op, options }, async ({ context, selection }) => {
    const result = await selection.algorithm.run(context, value, op, root);
    return context.rank === root ? result : null;
  });
}

export async function allReduce<G extends CollectiveGroup, T extends D, D = T>(member: CollectiveMember<G>, group: G, value: T, opLike: ReductionLike<D>, options?: CollectiveOptions): Promise<T> {
  const op = reductionOf<T, D>(opLike, 'allReduce');
  return perform(member, group, 'allReduce', -1, { bytes: estimatedBytes(value), op, options }, ({ context, selection }) => selection.algorithm.run(context, value, op));
}

export async function scatter<G extends CollectiveGroup, E>(member: CollectiveMember<G>, group: G, rootObject: DividableData<E> | null, root: number, options?: CollectiveOptions): Promise<E> {
  group.checkRank(root, 'scatter root');
  const rank = member.rankIn(group, 'scatter');
  if (rank === root) checkDividable(rootObject, 'scatter: the root object');
  const elements = rank === root ? elementsOf(rootObject as DividableData<E>, group.size()) : null;
  // Every member keys on its own block of the object it passes (the root's, or a placeholder).
  const ownBlock = elements ? elements[rank] : isDividable(rootObject) ? rootObject.elementAt(rank, group.size()) : undefined;
  return perform(member, group, 'scatter', root, { bytes: estimatedBytes(ownBlock), options }, ({ context, selection }) => selection.algorithm.run(context, elements, root));
}

export async function gather<G extends CollectiveGroup, D extends DividableData>(member: CollectiveMember<G>, group: G, rootObject: D | null, data: unknown, root: number, options?: CollectiveOptions): Promise<D | null> {
  group.checkRank(root, 'gather root');
  const isRoot = member.rankIn(group, 'gather') === root;
  if (isRoot) checkDividable(rootObject, 'gather: the root object');
  const elements = await perform(member, group, 'gather', root, { bytes: estimatedBytes(data), options }, ({ context, selection }) => selection.algorithm.run(context, data, root));
  if (!isRoot) return null;
  storeElements(rootObject as D, elements as unknown[]);
  return rootObject;
}

export async function allGather<G extends CollectiveGroup, D extends DividableData>(member: CollectiveMember<G>, group: G, resultObject: D, data: unknown, options?: CollectiveOptions): Promise<D> {
  checkDividable(resultObject, 'allGather: the result object');
  storeElements(resultObject, await perform(member, group, 'allGather', -1, { bytes: estimatedBytes(data), options }, ({ context, selection }) => selection.algorithm.run(context, data)));
  return resultObject;
}

export async function allToAll<G extends CollectiveGroup, D extends DividableData>(member: CollectiveMember<G>, group: G, sendObject: DividableData, resultObject: D, options?: CollectiveOptions): Promise<D> {
  checkDividable(sendObject, 'allToAll: the send object');
  checkDividable(resultObject, 'allToAll: the result object');
  const outgoing = elementsOf(sendObject, group.size());
  storeElements(resultObject, await perform(member, group, 'allToAll', -1, { bytes: estimatedBytes(outgoing[0]), options }, ({ context, selection }) => selection.algorithm.run(context, outgoing)));
  return resultObject;
}

export async function reduceScatter<G extends CollectiveGroup, E extends D, D = E>(member: CollectiveMember<G>, group: G, data: DividableData<E>, opLike: ReductionLike<D>, options?: CollectiveOptions): Promise<E> {
  const op = reductionOf<E, D>(opLike, 'reduceScatter');
  checkDividable(data, 'reduceScatter: the data');
  const elements = elementsOf(data, group.size());
  return perform(member, group, 'reduceScatter', -1, { bytes: estimatedBytes(elements), op, options }, ({ context, selection }) => selection.algorithm.run(context, elements, op));
}

export async function scan<G extends CollectiveGroup, T extends D, D = T>(member: CollectiveMember<G>, group: G, value: T, opLike: ReductionLike<D>, options?: CollectiveOptions): Promise<T> {
  const op = reductionOf<T, D>(opLike, 'scan');
  return perform(member, group, 'scan', -1, { bytes: estimatedBytes(value), op, options }, ({ context, selection }) => selection.algorithm.run(context, value, op));
}
