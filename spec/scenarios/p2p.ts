/**
 * Point-to-point bodies shared by the in-process suite and the jobs over threads and processes:
 * every payload through every call, ordering per (sender, receiver, tag), and tags with
 * wildcards (a task farm on ANY_SOURCE/ANY_TAG with probe).
 */
import { expect } from 'chai';
import { ANY_SOURCE, ANY_TAG } from '../../src/index.js';
import type { ColGroup, ColMember } from '../../src/index.js';
import { PAYLOADS, expectSame } from '../payloads.js';
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
