/**
 * The collective operations as members call them (CCJ 2.3 plus allToAll, reduceScatter, scan):
 * check the arguments before any message moves, take the group's next operation tag, choose the
 * algorithm, and turn DividableData objects into per-rank elements and back.
 */
import type { ColGroup } from '../../groups/col-group.js';
import type { MemberCore } from '../member.js';
import { reductionName, toReductionObject } from '../../reduction/reduction-object.js';
import { NO_REDUCTION, NO_ROOT, operationCode, reductionCode } from '../engine/signature.js';
import type { ReductionLike, ReductionObject } from '../../reduction/reduction-object.js';
import { checkDividable, isDividable } from '../../dividable/dividable-data.js';
import type { DividableData } from '../../dividable/dividable-data.js';
import { CollectiveContext } from './context.js';
import type { Selection } from './selection.js';
import type { CollectiveName } from './algorithms.js';
import { messageBytes } from './message-size.js';

/** Per-call choices: `{ algorithm: 'mst' }` runs that algorithm whatever the tables say. */
export interface CollectiveOptions {
  readonly algorithm?: string;
}

interface Call<C extends CollectiveName> {
  readonly context: CollectiveContext;
  readonly selection: Selection<C>;
}

/**
 * Opens one collective call: chooses the algorithm from the call's shape (bytes per member,
 * member count, commutativity, overrides), and makes the signature, as numbers, that names the
 * operation, algorithm, root and reduction, so a member that called something else is caught at
 * the first message it exchanges. All of it once per call, none of it per message.
 */
function open<C extends CollectiveName, T>(
  core: MemberCore,
  group: ColGroup,
  collective: C,
  root: number,
  shape: { readonly bytes: number; readonly op?: ReductionObject<T>; readonly options?: CollectiveOptions },
): Call<C> {
  const rank = core.rankIn(group, collective);
  const selector = core.master(collective).selector;
  const requested = shape.options?.algorithm ?? group.algorithmFor(collective);
  const selection = selector.select(collective, { bytes: shape.bytes, members: group.size(), commutative: shape.op?.commutative !== false, requested });
  const signature = {
    operation: operationCode(collective, selection.name),
    root: root < 0 ? NO_ROOT : root,
    reduction: shape.op ? reductionCode(reductionName(shape.op)) : NO_REDUCTION,
  };
  if (selector.trace) {
    const details = [root < 0 ? '' : `root ${root}`, shape.op ? reductionName(shape.op) : ''].filter((part) => part !== '').join(', ');
    selector.trace(`ccjs trace: group '${group.name}' rank ${rank}: ${collective}(${details}) ${selection.name}, ${shape.bytes} bytes, ${group.size()} members`);
  }
  return { context: new CollectiveContext(core, group, rank, collective, core.nextCollectiveTag(group), signature), selection };
}

function elementsOf<E>(data: DividableData<E>, size: number): E[] {
  return Array.from({ length: size }, (_, index) => data.elementAt(index, size));
}

function storeElements<E>(target: DividableData<E>, elements: readonly E[]): void {
  elements.forEach((element, index) => target.setElementAt(index, elements.length, element));
}

export async function barrier(core: MemberCore, group: ColGroup, options?: CollectiveOptions): Promise<void> {
  const { context, selection } = open(core, group, 'barrier', -1, { bytes: 0, options });
  await selection.algorithm.run(context);
}

/** Non-roots key the selection on what they pass (MPI's convention: a same-sized placeholder, or null for small). */
export async function broadcast<T>(core: MemberCore, group: ColGroup, value: T, root: number, options?: CollectiveOptions): Promise<T> {
  group.checkRank(root, 'broadcast root');
  const { context, selection } = open(core, group, 'broadcast', root, { bytes: messageBytes(value), options });
  const result = await selection.algorithm.run(context, value, root);
  return context.rank === root ? value : result;
}

export async function reduce<T>(core: MemberCore, group: ColGroup, value: T, opLike: ReductionLike<NoInfer<T>>, root: number, options?: CollectiveOptions): Promise<T | null> {
  const op = toReductionObject(opLike, 'reduce');
  group.checkRank(root, 'reduce root');
  const { context, selection } = open(core, group, 'reduce', root, { bytes: messageBytes(value), op, options });
  const result = await selection.algorithm.run(context, value, op, root);
  return context.rank === root ? result : null;
}

export async function allReduce<T>(core: MemberCore, group: ColGroup, value: T, opLike: ReductionLike<NoInfer<T>>, options?: CollectiveOptions): Promise<T> {
  const op = toReductionObject(opLike, 'allReduce');
  const { context, selection } = open(core, group, 'allReduce', -1, { bytes: messageBytes(value), op, options });
  return selection.algorithm.run(context, value, op);
}

export async function scatter<E>(core: MemberCore, group: ColGroup, rootObject: DividableData<E> | null, root: number, options?: CollectiveOptions): Promise<E> {
  group.checkRank(root, 'scatter root');
  const rank = core.rankIn(group, 'scatter');
  if (rank === root) checkDividable(rootObject, 'scatter: the root object');
  const elements = rank === root ? elementsOf(rootObject as DividableData<E>, group.size()) : null;
  // Every member keys on its own block of the object it passes (the root's, or a placeholder).
  const ownBlock = elements ? elements[rank] : isDividable(rootObject) ? rootObject.elementAt(rank, group.size()) : undefined;
  const bytes = messageBytes(ownBlock);
  const { context, selection } = open(core, group, 'scatter', root, { bytes, options });
  return selection.algorithm.run(context, elements, root);
}

export async function gather<D extends DividableData>(core: MemberCore, group: ColGroup, rootObject: D | null, data: unknown, root: number, options?: CollectiveOptions): Promise<D | null> {
  group.checkRank(root, 'gather root');
  const isRoot = core.rankIn(group, 'gather') === root;
  if (isRoot) checkDividable(rootObject, 'gather: the root object');
  const { context, selection } = open(core, group, 'gather', root, { bytes: messageBytes(data), options });
  const elements = await selection.algorithm.run(context, data, root);
  if (!isRoot) return null;
  storeElements(rootObject as D, elements as unknown[]);
  return rootObject;
}

export async function allGather<D extends DividableData>(core: MemberCore, group: ColGroup, resultObject: D, data: unknown, options?: CollectiveOptions): Promise<D> {
  checkDividable(resultObject, 'allGather: the result object');
  const { context, selection } = open(core, group, 'allGather', -1, { bytes: messageBytes(data), options });
  storeElements(resultObject, await selection.algorithm.run(context, data));
  return resultObject;
}

export async function allToAll<D extends DividableData>(core: MemberCore, group: ColGroup, sendObject: DividableData, resultObject: D, options?: CollectiveOptions): Promise<D> {
  checkDividable(sendObject, 'allToAll: the send object');
  checkDividable(resultObject, 'allToAll: the result object');
  const outgoing = elementsOf(sendObject, group.size());
  const { context, selection } = open(core, group, 'allToAll', -1, { bytes: messageBytes(outgoing[0]), options });
  storeElements(resultObject, await selection.algorithm.run(context, outgoing));
  return resultObject;
}

export async function reduceScatter<E>(core: MemberCore, group: ColGroup, data: DividableData<E>, opLike: ReductionLike<NoInfer<E>>, options?: CollectiveOptions): Promise<E> {
  const op = toReductionObject(opLike, 'reduceScatter');
  checkDividable(data, 'reduceScatter: the data');
  const elements = elementsOf(data, group.size());
  const { context, selection } = open(core, group, 'reduceScatter', -1, { bytes: messageBytes(elements), op, options });
  return selection.algorithm.run(context, elements, op);
}

export async function scan<T>(core: MemberCore, group: ColGroup, value: T, opLike: ReductionLike<NoInfer<T>>, options?: CollectiveOptions): Promise<T> {
  const op = toReductionObject(opLike, 'scan');
  const { context, selection } = open(core, group, 'scan', -1, { bytes: messageBytes(value), op, options });
  return selection.algorithm.run(context, value, op);
}
