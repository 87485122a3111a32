/**
 * Large typed arrays under a built-in element-wise reduction, reduced in the segment itself: each
 * member writes its chunk of the array into its slot, reduces its 1/p block of that chunk across
 * every member's slot in place (the native loops, through reduceInto), and the readers copy every
 * block out (a reduce-scatter then an allgather, inside the segment), chunk by chunk: each byte
 * is written once, read p times by the reductions and once by each reader.
 */
import { reduceInto } from '../../../reduction/reductions.js';
import type { TypedArray } from '../../../reduction/reductions.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { freshBytes } from '../../../transport/body-memory.js';
import { PieceLayout, allocateToFill, copyInto } from '../typed-array-pieces.js';
import { CHUNK_CAPACITY } from './segment.js';
import type { SegmentCall } from './call.js';
import { segmentCopy } from './transfer.js';

/** From this many bytes up, a typed array's reduction is cut into blocks (below, reading every member's whole value costs less than a second step: reduceSmall). */
export const BLOCKWISE_BYTES = 16 * 1024;

type TypedArrayType = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => TypedArray;

/** The reduction of every member's `value` (all of one type and length); the result only where `reads`, else null. */
export async function reduceInSegment(call: SegmentCall, value: TypedArray, op: ReductionObject<TypedArray>, reads: boolean): Promise<TypedArray | null> {
  const { segment, size, rank, id } = call;
  const type = Object.getPrototypeOf(value).constructor as TypedArrayType;
  const elementBytes = value.BYTES_PER_ELEMENT;
  const perRound = Math.floor(CHUNK_CAPACITY / elementBytes);
  const rounds = Math.max(1, Math.ceil(value.length / perRound));
  // Receive memory that earlier results gave back (no fresh pages to fault in).
  const result = reads ? new type(freshBytes(value.byteLength).buffer, 0, value.length) : null;
  const over = (member: number, round: number, first: number, length: number) => new type(segment.buffer, segment.chunkOffset(member, id, round) + first * elementBytes, length);
  const base = call.round;
  for (let index = 0; index < rounds; index += 1) {
    const round = base + index;
    const first = index * perRound;
    const length = Math.min(perRound, value.length - first);
    const blocks = new PieceLayout(length, size);
    const claimed = call.claim(round);
    const offset = typeof claimed === 'number' ? claimed : await claimed;
    segmentCopy(segment.bytes, offset, new Uint8Array(value.buffer, value.byteOffset + first * elementBytes, length * elementBytes));
    call.publish(round, 1);
    const start = blocks.start(rank);
    const end = blocks.start(rank + 1);
    if (end > start) {
      const held = over(rank, round, start, end - start);
      for (let member = 0; member < size; member += 1) {
        if (member === rank) continue;
        await call.published(member, round, 1);
        const combined = reduceInto(op, held, over(member, round, start, end - start), held);
        if (combined !== held) copyInto(held, combined, 0);
      }
    }
    call.publish(round, 2);
    if (result !== null) {
      const resultBytes = new Uint8Array(result.buffer, result.byteOffset, result.byteLength);
      for (let member = 0; member < size; member += 1) {
        const from = blocks.start(member);
        const to = blocks.start(member + 1);
        if (to === from) continue;
        if (member !== rank) await call.published(member, round, 2);
        const at = segment.chunkOffset(member, id, round) + from * elementBytes;
        segmentCopy(resultBytes, (first + from) * elementBytes, segment.bytes.subarray(at, at + (to - from) * elementBytes));
      }
    }
    call.consumed(round);
  }
  call.round = base + rounds;
  return result;
}

/**
 * The reduction of every member's small `value` (all of one type and length, below a chunk): each
 * writes its bytes, and each reader reduces every member's in rank order straight from the slots
 * into a new array (no encoding, no copies but its own value's and the result's first operand).
 */
export async function reduceSmall(call: SegmentCall, value: TypedArray, op: ReductionObject<TypedArray>, reads: boolean): Promise<TypedArray | null> {
  const { segment, size, rank, id } = call;
  const type = Object.getPrototypeOf(value).constructor as TypedArrayType;
  const round = call.round;
  const claimed = call.claim(round);
  const offset = typeof claimed === 'number' ? claimed : await claimed;
  segmentCopy(segment.bytes, offset, new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  call.publish(round, 1);
  const result = reads ? allocateToFill(value, value.length) : null;
  for (let member = 0; result !== null && member < size; member += 1) {
    if (member !== rank) await call.published(member, round, 1);
    const operand = member === rank ? value : new type(segment.buffer, segment.chunkOffset(member, id, round), value.length);
    const combined = member === 0 ? operand : reduceInto(op, result, operand, result);
    if (combined !== result) copyInto(result, combined, 0);
  }
  call.consumed(round);
  call.round = round + 1;
  return result;
}
