/**
 * Point-to-point bodies shared by the in-process suite and the jobs over threads and processes:
 * every payload through every call, ordering per (sender, receiver, tag), and tags with
 * wildcards (a task farm on ANY_SOURCE/ANY_TAG with probe).
 */
import { expect } from 'chai';
import { ANY_SOURCE, ANY_TAG, ReceiveBufferError } from '../../src/index.js';
import type { ColGroup, ColMember } from '../../src/index.js';
import { PAYLOADS, expectSame } from '../payloads.js';
import { failureOf } from '../collective-checks.js';
import type { Payload } from '../payloads.js';

export type Body<T = unknown> = (member: ColMember, group: ColGroup, rank: number) => Promise<T>;

/** The payloads a serializer keeps (only v8 keeps Map, Set and Date). */
export function payloadsFor(v8: boolean): Payload[] {
  return PAYLOADS.filter((candidate) => v8 || !candidate.v8Only);
}

/** Pairs (0, 1), (2, 3), ...: each payload both ways through sendSync, sendAsync, sendReceive and rendezvous. */
export function payloadExchange(payloads: readonly Payload[]): Body {
  return async (member, group, rank) => {
    const peer = rank ^ 1;
    if (peer >= group.size()) return;
    for (const payload of payloads) {
      const expected = payload.make();
      if (rank < peer) {
        await member.sendSync(group, payload.make(), peer);
        expectSame(await member.receive(group, peer), expected);
      } else {
        expectSame(await member.receive(group, peer), expected);
        await member.sendAsync(group, payload.make(), peer);
      }
      expectSame(await member.sendReceive(group, payload.make(), peer, peer), expected);
      expectSame(await member.rendezvous(group, payload.make(), peer), expected);
    }
  };
}

/**
 * Each member streams `count` messages to the next rank with tags 0, 1, 2 in turn, and takes those
 * of the previous rank with specific tags and ANY_TAG interleaved: a receive must always take the
 * earliest-sent message that fits.
 */
export function orderedStream(count: number): Body<number> {
  return async (member, group, rank) => {
    const size = group.size();
    const next = (rank + 1) % size;
    const previous = (rank + size - 1) % size;
    const sending = (async () => {
      for (let i = 0; i < count; i += 1) await member.sendAsync(group, { i }, next, { tag: i % 3 });
    })();
    // The model: messages not yet taken, in the order they were sent.
    const pending = Array.from({ length: count }, (_, i) => i);
    for (let step = 0; step < count; step += 1) {
      const wanted = step % 4 === 3 ? ANY_TAG : (step * 7) % 3;
      const index = wanted === ANY_TAG ? 0 : pending.findIndex((i) => i % 3 === wanted);
      const expected = pending.splice(index === -1 ? 0 : index, 1)[0] as number;
      const tag = index === -1 ? ANY_TAG : wanted;
      const message = await member.receiveMessage<{ i: number }>(group, previous, { tag });
      expect(message.value.i, `step ${step}, tag ${tag}`).to.equal(expected);
      expect(message.source).to.equal(previous);
      expect(message.tag).to.equal(expected % 3);
    }
    await sending;
    return count;
  };
}

const TASK = 1;
const STOP = 2;
const RESULT_BASE = 100;

/**
 * A task farm: rank 0 hands out `tasks` tasks, taking each result with ANY_SOURCE and ANY_TAG
 * (the tag says which task) after a probe that must announce the same message; workers take
 * their orders with ANY_TAG. Returns, at rank 0, how many tasks each rank did.
 */
export function taskFarm(tasks: number): Body<number[] | null> {
  const square = (task: number) => task * task + 1;
  return async (member, group, rank) => {
    const size = group.size();
    if (rank !== 0) {
      for (;;) {
        const order = await member.receiveMessage<number>(group, 0, { tag: ANY_TAG });
        if (order.tag === STOP) return null;
        expect(order.tag).to.equal(TASK);
        await member.sendAsync(group, square(order.value), 0, { tag: RESULT_BASE + order.value });
      }
    }
    const done = new Array<number>(size).fill(0);
    if (size === 1) return done;
    let handedOut = 0;
    for (let worker = 1; worker < size && handedOut < tasks; worker += 1) await member.sendAsync(group, handedOut++, worker, { tag: TASK });
    for (let received = 0; received < handedOut; received += 1) {
      const announced = await member.probe(group, ANY_SOURCE, { tag: ANY_TAG });
      const result = await member.receiveMessage<number>(group, announced.source, { tag: announced.tag });
      expect(result.source).to.equal(announced.source);
      expect(result.tag).to.equal(announced.tag);
      expect(result.value).to.equal(square(result.tag - RESULT_BASE));
      done[result.source] = (done[result.source] as number) + 1;
      if (handedOut < tasks) await member.sendAsync(group, handedOut++, result.source, { tag: TASK });
    }
    for (let worker = 1; worker < size; worker += 1) await member.sendAsync(group, 0, worker, { tag: STOP });
    return done;
  };
}

/** Doubles 0.5, 1.5, ... from `first`: a pattern each message has of its own. */
function doubles(length: number, first: number): Float64Array {
  return Float64Array.from({ length }, (_, i) => first + i + 0.5);
}

/** Message sizes (doubles) around the eager limit and the shared-memory single-copy and shared-copy sizes. */
const INTO_LENGTHS = [0, 1, 1000, 25_600, 131_072, 524_288];

/**
 * Pairs (0, 1), (2, 3), ...: the lower rank sends doubles by sendSync and sendAsync; the higher
 * receives them into buffers of its own (a larger Float64Array, a Uint8Array, a DataView at an
 * offset), and gets a view over those buffers' first bytes holding the message. Then the errors:
 * an object, a message too large and one of a length that is no whole number of elements each
 * fail with ReceiveBufferError, taking their message, while an `into` that is no view fails
 * before taking any. Each returns how many messages it received into a buffer.
 */
export function receiveInto(): Body<number> {
  return async (member, group, rank) => {
    const peer = rank ^ 1;
    if (peer >= group.size()) return 0;
    if (rank < peer) {
      for (const [index, length] of INTO_LENGTHS.entries()) {
        await member.sendSync(group, doubles(length, index), peer);
        await member.sendAsync(group, doubles(length, index + 100), peer);
        await member.sendSync(group, doubles(length, index + 200), peer);
        await member.sendAsync(group, doubles(length, index + 300), peer, { tag: 5 });
      }
      await member.sendSync(group, { not: 'binary' }, peer);
      await member.sendSync(group, new Float64Array(16), peer);
      await member.sendSync(group, new Uint8Array(12), peer);
      await member.sendSync(group, 'after the errors', peer);
      return 0;
    }
    let received = 0;
    for (const [index, length] of INTO_LENGTHS.entries()) {
      const buffer = new Float64Array(length + 3).fill(-1);
      for (const first of [index, index + 100]) {
        const value = await member.receive<Float64Array>(group, peer, { into: buffer });
        expect(value).to.be.instanceOf(Float64Array);
        expect(value.buffer).to.equal(buffer.buffer);
        expect(value.byteOffset).to.equal(buffer.byteOffset);
        expect([...value], `${length} doubles received into a Float64Array`).to.deep.equal([...doubles(length, first)]);
        expect([...buffer.subarray(length)], 'the buffer past the message').to.deep.equal([-1, -1, -1]);
        received += 1;
      }
      const bytes = new Uint8Array(length * 8);
      const asBytes = await member.receive<Uint8Array>(group, peer, { into: bytes });
      expect(asBytes).to.be.instanceOf(Uint8Array);
      expect(asBytes.buffer).to.equal(bytes.buffer);
      expect([...new Float64Array(asBytes.buffer, asBytes.byteOffset, length)]).to.deep.equal([...doubles(length, index + 200)]);
      const memory = new ArrayBuffer(length * 8 + 16);
      const { value, source, tag } = await member.receiveMessage<DataView>(group, peer, { tag: 5, into: new DataView(memory, 8) });
      expect([source, tag]).to.deep.equal([peer, 5]);
      expect(value).to.be.instanceOf(DataView);
      expect([value.buffer, value.byteOffset, value.byteLength]).to.deep.equal([memory, 8, length * 8]);
      expect([...new Float64Array(memory, 8, length)]).to.deep.equal([...doubles(length, index + 300)]);
      received += 2;
    }
    const small = new Float64Array(8);
    await expectRejection(member.receive(group, peer, { into: small }), ReceiveBufferError, /not binary data/);
    await expectRejection(member.receive(group, peer, { into: small }), ReceiveBufferError, /128 bytes do not fit in the buffer's 64/);
    await expectRejection(member.receive(group, peer, { into: small }), ReceiveBufferError, /12 bytes are not a whole number of the buffer's 8-byte elements/);
    await expectRejection(member.receive(group, peer, { into: [0, 0] as unknown as ArrayBufferView }), TypeError, /options\.into must be a typed array, Buffer or DataView, not object/);
    expect(await member.receive(group, peer)).to.equal('after the errors');
    return received;
  };
}

async function expectRejection(promise: Promise<unknown>, type: new (...args: never[]) => Error, message: RegExp): Promise<void> {
  const error = await failureOf(promise);
  expect(error).to.be.instanceOf(type);
  expect((error as Error).message).to.match(message);
}
