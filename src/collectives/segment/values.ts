/**
 * The shapes of data every shared-memory algorithm moves: each member writes some values (one, or
 * one per rank) as a stream, and reads one part of some members' streams. Reductions combine in
 * rank order (non-commutative ones hold), writing into memory they own (reduceInto), never into
 * the caller's operand.
 */
import { reduceInto } from '../../../reduction/reductions.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import type { CollectiveContext } from '../context.js';
import type { EncodedValue } from '../../engine/messages.js';
import type { SegmentCall } from './call.js';
import { InStream, OutStream, exchange } from './transfer.js';

/**
 * Writes `values` (none: writes nothing) and reads part `part` of the streams of `sources`;
 * returns what each source's part decodes to, by rank (undefined for ranks not read).
 */
export async function writeAndRead<T>(context: CollectiveContext, call: SegmentCall, values: readonly unknown[] | undefined, sources: readonly number[], part: number): Promise<(T | undefined)[]> {
  const out = values === undefined ? undefined : new OutStream(values.map((value) => context.encode(value)));
  const streams: (InStream | undefined)[] = [];
  for (const source of sources) streams[source] = new InStream((index) => index === part);
  await exchange(call, out, sources, streams);
  return streams.map((stream) => (stream === undefined ? undefined : context.decode<T>(stream.parts()[part] as EncodedValue)));
}

/** The ranks 0..size-1 but `except`. */
export function othersThan(size: number, except: number): number[] {
  return Array.from({ length: size }, (_, rank) => rank).filter((rank) => rank !== except);
}

/** `values` (by rank, the caller's own at `own`) combined in rank order; only memory the call owns is written. */
export function combineInOrder<T>(op: ReductionObject<T>, values: readonly T[], own: number): T {
  const callers = values[own] as T;
  let result = values[0] as T;
  for (let rank = 1; rank < values.length; rank += 1) {
    const next = values[rank] as T;
    result = result !== callers ? reduceInto(op, result, next, result) : rank !== own ? reduceInto(op, result, next, next) : op.reduce(result, next);
  }
  return result;
}
