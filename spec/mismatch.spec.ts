import { expect } from 'chai';
import { CollectiveMismatchError, SerializationError } from '../src/index.js';
import { Reductions } from '../reduction/index.js';
import { MsgpackSerializer } from '../src/serialization/index.js';
import { closeAll, createMasters, runGroup } from './harness.js';

/** Each member's error message from one call (empty when it succeeded). */
async function messages(size: number, call: Parameters<typeof runGroup<string>>[3]): Promise<string[]> {
  const masters = await createMasters(1, {});
  try {
    return await runGroup(masters, [size], 'mismatch', call);
  } finally {
    await closeAll(masters);
  }
}

describe('mismatch messages', function () {
  it('name the reduction that differs, with no empty slots and no advice about algorithms', async function () {
    const texts = await messages(3, async (member, group, rank) => {
      try {
        await member.allReduce(group, rank, rank === 0 ? Reductions.MAX : Reductions.SUM);
        return '';
      } catch (error) {
        expect(error).to.be.instanceOf(CollectiveMismatchError);
        return (error as Error).message;
      }
    });
    const detected = texts.filter((text) => text.startsWith('allReduce: receive'));
    expect(detected).to.not.be.empty;
    for (const text of texts.filter((line) => line !== '')) {
      expect(text).to.match(/allReduce\(SUM\).*allReduce\(MAX\)|allReduce\(MAX\).*allReduce\(SUM\)/);
      expect(text).to.contain('every member must pass the same reduction');
      expect(text).to.not.match(/\(,|, \)|algorithm/);
    }
  });

  it('name both roots when members pass different ones', async function () {
    const texts = await messages(2, async (member, group, rank) => {
      try {
        await member.broadcast(group, rank, rank);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(texts).to.have.lengthOf(2);
    for (const text of texts) expect(text).to.match(/expected broadcast\(root \d\).*called broadcast\(root \d\).*every member must pass the same root/);
  });

  it('msgpack refuses at the sender what its receivers would refuse (an own __proto__ key)', function () {
    const value = JSON.parse('{"list": [{"__proto__": {"polluted": true}}]}') as unknown;
    expect(() => new MsgpackSerializer().encode(value)).to.throw(SerializationError, /__proto__.*value\.list\[0\]/);
  });
});
