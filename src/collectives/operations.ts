/**
 * The collective operations as members call them (CCJ 2.3 plus allToAll, reduceScatter, scan):
 * check the arguments before any message moves, take the group's next operation tag, choose the
 * algorithm, and turn DividableData objects into per-rank elements and back.
 */
import type { ColGroup } from '../../groups/col-group.js';
import type { MemberCore } from '../member.js';
import { signatureBytes } from '../messaging.js';
import { reductionName, toReductionObject } from '../../reduction/reduction-object.js';
import type { ReductionLike, ReductionObject } from '../../reduction/reduction-object.js';
import { checkDividable } from '../../dividable/dividable-data.js';
import type { DividableData } from '../../dividable/dividable-data.js';
import { CollectiveContext } from './context.js';
import { selectAlgorithm } from './selection.js';
import type { Selection } from './selection.js';
import type { CollectiveName } from './algorithms.js';

interface Call<C extends CollectiveName> {
  readonly context: CollectiveContext;
  readonly selection: Selection<C>;
}

/**
 * Opens one collective call: the signature names the operation, root, reduction and algorithm,
 * so a member that called something else is caught at the first message it exchanges.
 */
function open<C extends CollectiveName, T>(core: MemberCore, group: ColGroup, collective: C, details: string, op?: ReductionObject<T>): Call<C> {
  const rank = core.rankIn(group, collective);
  const selection = selectAlgorithm(collective, op?.commutative !== false);
  const reduction = op ? `, ${reductionName(op)}` : '';
  const signature = signatureBytes(`${collective}(${details}${reduction}) ${selection.name}`);
  return { context: new CollectiveContext(core, group, rank, collective, core.nextCollectiveTag(group), signature), selection };
}

function elementsOf<E>(data: DividableData<E>, size: number): E[] {
  return Array.from({ length: size }, (_, index) => data.elementAt(index, size));
}

function storeElements<E>(target: DividableData<E>, elements: readonly E[]): void {
  elements.forEach((element, index) => target.setElementAt(index, elements.length, element));
}

export async function barrier(core: MemberCore, group: ColGroup): Promise<void> {
  const { context, selection } = open(core, group, 'barrier', '');
  await selection.algorithm.run(context);
}

export async function broadcast<T>(core: MemberCore, group: ColGroup, value: T, root: number): Promise<T> {
  group.checkRank(root, 'broadcast root');
  const { context, selection } = open(core, group, 'broadcast', `root ${root}`);
  const result = await selection.algorithm.run(context, value, root);
  return context.rank === root ? value : result;
}

export async function reduce<T>(core: MemberCore, group: ColGroup, value: T, opLike: ReductionLike<NoInfer<T>>, root: number): Promise<T | null> {
  const op = toReductionObject(opLike, 'reduce');
  group.checkRank(root, 'reduce root');
  const { context, selection } = open(core, group, 'reduce', `root ${root}`, op);
  const result = await selection.algorithm.run(context, value, op, root);
  return context.rank === root ? result : null;
}

export async function allReduce<T>(core: MemberCore, group: ColGroup, value: T, opLike: ReductionLike<NoInfer<T>>): Promise<T> {
  const op = toReductionObject(opLike, 'allReduce');
  const { context, selection } = open(core, group, 'allReduce', '', op);
  return selection.algorithm.run(context, value, op);
}

export async function scatter<E>(core: MemberCore, group: ColGroup, rootObject: DividableData<E> | null, root: number): Promise<E> {
  group.checkRank(root, 'scatter root');
  const isRoot = core.rankIn(group, 'scatter') === root;
  if (isRoot) checkDividable(rootObject, 'scatter: the root object');
  const { context, selection } = open(core, group, 'scatter', `root ${root}`);
  const elements = isRoot ? elementsOf(rootObject as DividableData<E>, context.size) : null;
  return selection.algorithm.run(context, elements, root);
}

export async function gather<D extends DividableData>(core: MemberCore, group: ColGroup, rootObject: D | null, data: unknown, root: number): Promise<D | null> {
  group.checkRank(root, 'gather root');
  const isRoot = core.rankIn(group, 'gather') === root;
  if (isRoot) checkDividable(rootObject, 'gather: the root object');
  const { context, selection } = open(core, group, 'gather', `root ${root}`);
  const elements = await selection.algorithm.run(context, data, root);
  if (!isRoot) return null;
  storeElements(rootObject as D, elements as unknown[]);
  return rootObject;
}

export async function allGather<D extends DividableData>(core: MemberCore, group: ColGroup, resultObject: D, data: unknown): Promise<D> {
  checkDividable(resultObject, 'allGather: the result object');
  const { context, selection } = open(core, group, 'allGather', '');
  storeElements(resultObject, await selection.algorithm.run(context, data));
  return resultObject;
}

export async function allToAll<D extends DividableData>(core: MemberCore, group: ColGroup, sendObject: DividableData, resultObject: D): Promise<D> {
  checkDividable(sendObject, 'allToAll: the send object');
  checkDividable(resultObject, 'allToAll: the result object');
  const { context, selection } = open(core, group, 'allToAll', '');
  storeElements(resultObject, await selection.algorithm.run(context, elementsOf(sendObject, context.size)));
  return resultObject;
}

export async function reduceScatter<E>(core: MemberCore, group: ColGroup, data: DividableData<E>, opLike: ReductionLike<NoInfer<E>>): Promise<E> {
  const op = toReductionObject(opLike, 'reduceScatter');
  checkDividable(data, 'reduceScatter: the data');
  const { context, selection } = open(core, group, 'reduceScatter', '', op);
  return selection.algorithm.run(context, elementsOf(data, context.size), op);
}

export async function scan<T>(core: MemberCore, group: ColGroup, value: T, opLike: ReductionLike<NoInfer<T>>): Promise<T> {
  const op = toReductionObject(opLike, 'scan');
  const { context, selection } = open(core, group, 'scan', '', op);
  return selection.algorithm.run(context, value, op);
}
