/**
 * Issue 30, item 10: an instance of a class nobody registered is refused at the sender, naming the
 * class, where it sits in the value and how to register it, instead of arriving as a plain object
 * that fails later at the receiver (`v.energy is not a function`). strictSerialization: false
 * keeps the old behaviour. Two processes' masters, one member each, over TCP, with each serializer.
 */
import { expect } from 'chai';
import { SerializationError, registerClass } from '../src/index.js';
import type { ColGroup, ColMember, SerializerName } from '../src/index.js';
import { closeAll, createMasters, runGroup } from './harness.js';

class Particle {
  constructor(readonly mass: number) {}

  energy(): number {
    return this.mass * 299_792_458 ** 2;
  }
}

class RegisteredParticle extends Particle {}
registerClass(RegisteredParticle, 'spec.unregistered.RegisteredParticle');

/** Rank 0's failed and successful sends, and what rank 1 received. */
interface Outcome {
  readonly refused?: unknown;
  readonly received?: unknown[];
}

/** Rank 0 sends `{ particle: new Particle(2) }`, then a registered instance and a plain Error; rank 1 receives what arrives. */
async function exchange(member: ColMember, group: ColGroup, rank: number): Promise<Outcome> {
  if (rank === 1) {
    const received: unknown[] = [];
    for (let i = 0; i < 2; i += 1) received.push(await member.receive(group, 0));
    return { received };
  }
  let refused: unknown;
  try {
    await member.sendAsync(group, { particle: new Particle(2) }, 1);
  } catch (error) {
    refused = error;
  }
  await member.sendAsync(group, new RegisteredParticle(3), 1);
  await member.sendAsync(group, new RangeError('out of range'), 1);
  return { refused };
}

for (const serializer of ['msgpack', 'v8'] as const satisfies readonly SerializerName[]) {
  describe(`instances of unregistered classes (${serializer} serializer)`, function () {
    it('are refused at the sender by default, with a SerializationError naming the class, its path and registerClass', async function () {
      const masters = await createMasters(2, { serializer });
      try {
        const [sender, receiver] = await runGroup(masters, [1, 1], 'unregistered', exchange);
        const refused = sender?.refused;
        expect(refused).to.be.instanceOf(SerializationError);
        const error = refused as SerializationError;
        expect(error.message).to.contain('unregistered class Particle').and.contain('registerClass(Particle)').and.contain('strictSerialization: false');
        expect(error.path).to.equal('value.particle');
        // Nothing of the refused message arrived: the next one is the registered instance.
        const [registered, thrown] = receiver?.received ?? [];
        expect(registered).to.be.instanceOf(RegisteredParticle);
        expect((registered as RegisteredParticle).energy()).to.equal(3 * 299_792_458 ** 2);
        // Errors are built-ins, not user classes: they still travel as each serializer carries them
        // (v8: as errors; msgpack: as plain objects of their own enumerable fields, none here).
        if (serializer === 'v8') expect(thrown).to.be.instanceOf(RangeError).and.have.property('message', 'out of range');
        else expect(thrown).to.deep.equal({});
      } finally {
        await closeAll(masters);
      }
    });

    it('arrive as plain objects with strictSerialization: false, as before', async function () {
      const masters = await createMasters(2, { serializer, strictSerialization: false });
      try {
        const results = await runGroup(masters, [1, 1], 'lenient', async (member, group, rank) => {
          if (rank === 0) {
            await member.sendAsync(group, { particle: new Particle(2) }, 1);
            await member.sendAsync(group, new RegisteredParticle(3), 1);
            return [];
          }
          return [await member.receive(group, 0), await member.receive(group, 0)];
        });
        const [plain, registered] = results[1] as [{ particle: unknown }, unknown];
        expect(Object.getPrototypeOf(plain.particle)).to.equal(Object.prototype);
        expect(plain.particle).to.deep.equal({ mass: 2 });
        expect(registered).to.be.instanceOf(RegisteredParticle);
      } finally {
        await closeAll(masters);
      }
    });
  });
}
