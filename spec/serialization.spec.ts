import { expect } from 'chai';
import { Frame, FrameType, bodiesSize, copyBodies } from '../transport/frame.js';
import { serializedFormat } from '../src/serialization/message.js';
import { decodeCarried, overTheWire, type Carried } from './wire.js';
import { SerializationError } from '../src/base/errors.js';
import {
  MsgpackSerializer,
  V8Serializer,
  createSerializer,
  decodeMessage,
  encodeMessage,
  fromBytes,
  isRegistered,
  registerClass,
  typeCodeOf,
  viewBytes,
  type BinaryValue,
  type Serializer,
} from '../src/serialization/index.js';

class Vector {
  constructor(
    public x: number,
    public y: number,
  ) {}

  length(): number {
    return Math.hypot(this.x, this.y);
  }
}

class Body {
  constructor(
    public position: Vector,
    public samples: Float64Array,
    public label: string,
  ) {}

  describe(): string {
    return `${this.label} at (${this.position.x}, ${this.position.y}) with ${this.samples.length} samples`;
  }
}

/** Sends a private detail it can rebuild from, through the hooks. */
class Temperature {
  private constructor(private readonly kelvin: number) {}

  static celsius(value: number): Temperature {
    return new Temperature(value + 273.15);
  }

  static fromCCJS(fields: unknown): Temperature {
    return new Temperature((fields as { k: number }).k);
  }

  toCCJS(): unknown {
    return { k: this.kelvin };
  }

  inCelsius(): number {
    return this.kelvin - 273.15;
  }
}

class Link {
  next: Link | undefined;
  constructor(public id: number) {}
}

class Unregistered {
  field = 1;
}

/** Registered under a name the tests replace in encoded bytes, to play a class the receiver lacks. */
class Renamed {
  field = 1;
}

registerClass(Vector);
registerClass(Body);
registerClass(Temperature);
registerClass(Link);
registerClass(Renamed, 'spec-known');

const TYPED_ARRAYS = [
  Int8Array.of(-128, 0, 127),
  Uint8Array.of(0, 255),
  Uint8ClampedArray.of(0, 200, 255),
  Int16Array.of(-32768, 32767),
  Uint16Array.of(65535, 1),
  Int32Array.of(-(2 ** 31), 2 ** 31 - 1),
  Uint32Array.of(2 ** 32 - 1, 7),
  Float32Array.of(1.5, -0.25),
  Float64Array.of(Math.PI, -0, NaN),
  BigInt64Array.of(-(2n ** 63n), 2n ** 63n - 1n),
  BigUint64Array.of(2n ** 64n - 1n, 0n),
];

/** Same type (a Buffer stays a Buffer) and same bytes. */
function expectSameBinary(actual: unknown, expected: BinaryValue): void {
  expect(actual, expected.constructor.name).to.be.instanceOf(expected.constructor);
  expect(Buffer.compare(viewBytes(actual as BinaryValue), viewBytes(expected)), expected.constructor.name).to.equal(0);
}

/** Through the wire as a device moves it: every body copied into its own ArrayBuffer. */
function roundTrip(value: unknown, serializer: Serializer): unknown {
  return decodeCarried(overTheWire(encodeMessage(value, serializer)), serializer);
}

function encodingError(value: unknown, serializer: Serializer): SerializationError {
  try {
    encodeMessage(value, serializer);
  } catch (error) {
    expect(error).to.be.instanceOf(SerializationError);
    return error as SerializationError;
  }
  throw new Error('expected encoding to fail');
}

function decodingError(carried: Carried, serializer: Serializer): SerializationError {
  try {
    decodeCarried(carried, serializer);
  } catch (error) {
    expect(error).to.be.instanceOf(SerializationError);
    return error as SerializationError;
  }
  throw new Error('expected decoding to fail');
}

/** The packet with `from` replaced by `to` (same length) in its graph. */
function withReplacedText(carried: Carried, from: string, to: string): Carried {
  const graph = Buffer.from(carried.bodies[0] as Uint8Array);
  const at = graph.indexOf(from, 0, 'latin1');
  expect(at).to.be.greaterThan(-1);
  graph.write(to, at, 'latin1');
  return { format: carried.format, bodies: [new Uint8Array(graph), ...carried.bodies.slice(1)] };
}

for (const makeSerializer of [() => new MsgpackSerializer(), () => new V8Serializer()]) {
  const serializer = makeSerializer();

  describe(`serialization with the ${serializer.name} serializer`, () => {
    describe('round trips', () => {
      it('keeps numbers, including NaN, -0, infinities and 2^53', () => {
        const numbers = [0, -0, 1, -1, 1.5, 255, 65536, -(2 ** 31), 2 ** 32, 2 ** 53, -(2 ** 53), 2 ** 53 + 2, NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE];
        expect(roundTrip(numbers, serializer)).to.deep.equal(numbers);
        expect(Object.is(roundTrip(-0, serializer), -0)).to.equal(true);
        expect(roundTrip(NaN, serializer)).to.be.NaN;
        expect(roundTrip(2 ** 53, serializer)).to.equal(2 ** 53);
      });

      it('keeps strings with non-ASCII text', () => {
        const strings = ['Grüße, 世界 🚀', '', 'x'.repeat(100_000), '\u0000\uffff'];
        expect(roundTrip(strings, serializer)).to.deep.equal(strings);
        expect(roundTrip('Grüße, 世界 🚀', serializer)).to.equal('Grüße, 世界 🚀');
      });

      it('keeps nested objects and arrays', () => {
        const value = { a: 1, b: 'hello', c: [1, 2, [3, [4, { d: true, e: false }]]], f: { g: { h: { i: [] } } }, 'odd key': 2 };
        expect(roundTrip(value, serializer)).to.deep.equal(value);
        expect(roundTrip([], serializer)).to.deep.equal([]);
        expect(roundTrip({}, serializer)).to.deep.equal({});
      });

      it('keeps null and undefined, at the top and inside arrays and objects', () => {
        expect(roundTrip(null, serializer)).to.equal(null);
        expect(roundTrip(undefined, serializer)).to.equal(undefined);
        const decoded = roundTrip({ a: undefined, b: null, c: [undefined, null, 1] }, serializer) as Record<string, unknown>;
        expect(decoded).to.have.property('a', undefined);
        expect(decoded).to.have.property('b', null);
        expect(decoded['c']).to.deep.equal([undefined, null, 1]);
      });

      it('keeps bigints of any size', () => {
        const bigints = [0n, 1n, -1n, 2n ** 63n, -(2n ** 63n) - 1n, 2n ** 64n, -(2n ** 200n) + 12345n];
        expect(roundTrip(bigints, serializer)).to.deep.equal(bigints);
      });

      it('keeps Map, Set and Date', () => {
        const value = {
          map: new Map<unknown, unknown>([
            ['k', 1],
            [2, { nested: new Set([1, 'two']) }],
            [3n, new Date(0)],
          ]),
          set: new Set([1, 'a', null]),
          date: new Date('2024-02-29T12:34:56.789Z'),
        };
        const decoded = roundTrip(value, serializer) as typeof value;
        expect(decoded.map).to.be.instanceOf(Map);
        expect(decoded.set).to.be.instanceOf(Set);
        expect(decoded.date).to.be.instanceOf(Date);
        expect(decoded).to.deep.equal(value);
        expect([...decoded.map.keys()]).to.deep.equal(['k', 2, 3n]);
        expect(Number.isNaN((roundTrip(new Date(NaN), serializer) as Date).getTime())).to.equal(true);
      });

      it('rebuilds a registered class instance whose methods work', () => {
        const decoded = roundTrip(new Vector(3, 4), serializer);
        expect(decoded).to.be.instanceOf(Vector);
        expect((decoded as Vector).length()).to.equal(5);
        expect(decoded).to.deep.equal(new Vector(3, 4));
      });

      it('rebuilds a registered class holding another registered class and a Float64Array', () => {
        const body = new Body(new Vector(1, 2), Float64Array.of(0.5, 1.5, 2.5), 'probe');
        const decoded = roundTrip([body, { inside: body }], serializer) as [Body, { inside: Body }];
        expect(decoded[0]).to.be.instanceOf(Body);
        expect(decoded[0].position).to.be.instanceOf(Vector);
        expect(decoded[0].samples).to.be.instanceOf(Float64Array);
        expect(decoded[0].describe()).to.equal('probe at (1, 2) with 3 samples');
        expect(decoded[1].inside.describe()).to.equal('probe at (1, 2) with 3 samples');
        expect(decoded[0]).to.deep.equal(body);
      });

      it('uses the toCCJS and fromCCJS hooks of a registered class', () => {
        const decoded = roundTrip({ outside: Temperature.celsius(21) }, serializer) as { outside: Temperature };
        expect(decoded.outside).to.be.instanceOf(Temperature);
        expect(decoded.outside.inCelsius()).to.be.closeTo(21, 1e-9);
      });

      it('sends an instance of an unregistered class as a plain object when not strict', () => {
        const lenient = createSerializer(serializer.name as 'msgpack' | 'v8', { strict: false });
        const decoded = roundTrip({ u: new Unregistered() }, lenient) as { u: object };
        expect(Object.getPrototypeOf(decoded.u)).to.equal(Object.prototype);
        expect(decoded.u).to.deep.equal({ field: 1 });
      });

      it('sends every typed array type raw, keeping its type and values', () => {
        for (const array of TYPED_ARRAYS) {
          const packet = encodeMessage(array, serializer);
          expect(packet.bodies, array.constructor.name).to.have.lengthOf(1);
          expectSameBinary(decodeCarried(overTheWire(packet), serializer), array);
        }
      });

      it('keeps every typed array type inside a value', () => {
        const decoded = roundTrip({ arrays: TYPED_ARRAYS }, serializer) as { arrays: unknown[] };
        expect(decoded.arrays).to.have.lengthOf(TYPED_ARRAYS.length);
        decoded.arrays.forEach((array, index) => expectSameBinary(array, TYPED_ARRAYS[index] as BinaryValue));
      });

      it('sends a Float64Array of 1 element and of 4 MiB, decoding over the received body without copying', () => {
        expect(roundTrip(Float64Array.of(42.5), serializer)).to.deep.equal(Float64Array.of(42.5));
        const large = new Float64Array((4 * 1024 * 1024) / 8).map((_, index) => index * 0.5);
        const received = overTheWire(encodeMessage(large, serializer));
        const decoded = decodeCarried(received, serializer) as Float64Array;
        expect(decoded).to.be.instanceOf(Float64Array);
        expect(decoded.buffer).to.equal((received.bodies[0] as Uint8Array).buffer);
        expect(decoded).to.deep.equal(large);
      });

      it('sends empty arrays and an empty Float64Array', () => {
        expect(roundTrip([], serializer)).to.deep.equal([]);
        expect(roundTrip(new Float64Array(0), serializer)).to.deep.equal(new Float64Array(0));
        expect(roundTrip({ empty: new Float64Array(0) }, serializer)).to.deep.equal({ empty: new Float64Array(0) });
      });

      it('keeps Buffer, DataView and ArrayBuffer, at the top and inside a value', () => {
        const buffer = Buffer.from('Grüße, 世界 🚀');
        const view = new DataView(Uint8Array.of(1, 2, 3, 4).buffer, 1, 2);
        const arrayBuffer = Uint8Array.of(9, 8, 7).buffer;
        for (const value of [buffer, view, arrayBuffer]) expectSameBinary(roundTrip(value, serializer), value);
        const decoded = roundTrip({ buffer, view, arrayBuffer }, serializer) as Record<string, unknown>;
        expectSameBinary(decoded['buffer'], buffer);
        expectSameBinary(decoded['view'], view);
        expectSameBinary(decoded['arrayBuffer'], arrayBuffer);
        expect(Buffer.isBuffer(roundTrip(buffer, serializer))).to.equal(true);
      });

      it('sends a large typed array inside a value out of band, without copying it on either side', () => {
        const samples = new Float64Array(10_000).map((_, index) => index);
        const packet = encodeMessage({ name: 'run', samples }, serializer);
        expect(packet.bodies.length).to.be.greaterThan(1);
        expect((packet.bodies[0] as Uint8Array).byteLength).to.be.lessThan(64);
        expect((packet.bodies[1] as Uint8Array).buffer).to.equal(samples.buffer);
        const received = overTheWire(packet);
        const decoded = decodeCarried(received, serializer) as { name: string; samples: Float64Array };
        expect(decoded.samples.buffer).to.equal((received.bodies[1] as Uint8Array).buffer);
        expect(decoded).to.deep.equal({ name: 'run', samples });
      });

      it('sends a small typed array inside a value inline', () => {
        const packet = encodeMessage({ samples: Float64Array.of(1, 2, 3) }, serializer);
        expect(packet.bodies).to.have.lengthOf(1);
        expect(decodeCarried(overTheWire(packet), serializer)).to.deep.equal({ samples: Float64Array.of(1, 2, 3) });
      });

      it('honours outOfBandThreshold', () => {
        const eager = createSerializer(serializer.name as 'msgpack' | 'v8', { outOfBandThreshold: 8 });
        const packet = encodeMessage({ one: Float64Array.of(1), none: new Uint8Array(7) }, eager);
        expect(packet.bodies).to.have.lengthOf(2);
        expect(decodeCarried(overTheWire(packet), eager)).to.deep.equal({ one: Float64Array.of(1), none: new Uint8Array(7) });
      });

      it('describes a message by one number: the type code of a binary value, the serializer otherwise', () => {
        expect(encodeMessage(Float64Array.of(1), serializer).format).to.equal(typeCodeOf(Float64Array.of(1)));
        expect(encodeMessage({ a: 1 }, serializer).format).to.equal(serializedFormat(serializer)).and.to.be.at.least(256);
      });

      it('leaves the sent value unchanged', () => {
        const value = { body: new Body(new Vector(1, 1), Float64Array.of(1), 'b'), list: [new Vector(0, 0)] };
        roundTrip(value, serializer);
        expect(value.body).to.be.instanceOf(Body);
        expect(value.list[0]).to.be.instanceOf(Vector);
      });
    });

    describe('errors', () => {
      it('names the path of a function', () => {
        const error = encodingError({ a: { b: [1, function onClick() {}] } }, serializer);
        expect(error.path).to.equal('value.a.b[1]');
        expect(error.message).to.contain('value.a.b[1]').and.contain('function (onClick)');
      });

      it('names the path of a symbol', () => {
        const error = encodingError({ list: [0, 1, { tag: Symbol('marker') }] }, serializer);
        expect(error.path).to.equal('value.list[2].tag');
        expect(error.message).to.contain('Symbol(marker)');
      });

      it('names a Map entry in the path', () => {
        const error = encodingError({ handlers: new Map([['click', () => 1]]) }, serializer);
        expect(error.path).to.equal('value.handlers.<click>');
      });

      it('rejects an instance of an unregistered class by default (strict mode)', () => {
        const strict = createSerializer(serializer.name as 'msgpack' | 'v8', {});
        const error = encodingError({ ok: new Vector(1, 1), items: [new Unregistered()] }, strict);
        expect(error.path).to.equal('value.items[0]');
        expect(error.message).to.contain('unregistered class Unregistered').and.contain('registerClass(Unregistered)').and.contain('strictSerialization: false');
        expect(roundTrip({ ok: new Vector(1, 1), map: new Map([[1, new Date(0)]]) }, strict)).to.deep.equal({
          ok: new Vector(1, 1),
          map: new Map([[1, new Date(0)]]),
        });
      });

      it('detects a message made by another serializer', () => {
        const other = serializer.name === 'v8' ? new MsgpackSerializer() : new V8Serializer();
        const error = decodingError(overTheWire(encodeMessage({ a: 1 }, other)), serializer);
        expect(error.message).to.contain(`'${other.name}'`).and.contain(`'${serializer.name}'`);
      });

      it('rejects garbage', () => {
        decodingError({ format: serializedFormat(serializer), bodies: [Uint8Array.of(0xc1, 0xff, 0x00, 0x13)] }, serializer);
        decodingError({ format: 99, bodies: [new Uint8Array(1)] }, serializer);
      });

      it('names an unknown class when decoding', () => {
        const packet = withReplacedText(overTheWire(encodeMessage({ r: new Renamed() }, serializer)), 'spec-known', 'spec-other');
        const error = decodingError(packet, serializer);
        expect(error.message).to.contain("'spec-other'");
      });
    });
  });
}

describe('serialization specifics', () => {
  it('keeps shared references and cycles with the v8 serializer, through registered classes too', () => {
    const v8 = new V8Serializer();
    const shared = { n: 1 };
    const first = new Link(1);
    const second = new Link(2);
    first.next = second;
    second.next = first;
    const value = { a: shared, b: shared, ring: first, self: undefined as unknown };
    value.self = value;
    const decoded = roundTrip(value, v8) as typeof value;
    expect(decoded.a).to.equal(decoded.b);
    expect(decoded.self).to.equal(decoded);
    expect(decoded.ring).to.be.instanceOf(Link);
    expect(decoded.ring.next).to.be.instanceOf(Link);
    expect(decoded.ring.next?.next).to.equal(decoded.ring);
  });

  it('rejects cycles with the msgpack serializer, naming the path', () => {
    const value = { a: { b: {} as Record<string, unknown> } };
    value.a.b['back'] = value.a;
    const error = encodingError(value, new MsgpackSerializer());
    expect(error.path).to.equal('value.a.b.back');
    expect(error.message).to.contain('value.a');
  });

  it('sends shared references with the msgpack serializer as copies', () => {
    const shared = { n: 1 };
    const decoded = roundTrip({ a: shared, b: shared }, new MsgpackSerializer()) as { a: object; b: object };
    expect(decoded.a).to.deep.equal(shared);
    expect(decoded.b).to.deep.equal(shared);
  });

  it('rebuilds binary values over misaligned bytes by copying them', () => {
    const bytes = new Uint8Array(17).subarray(1);
    bytes.set(new Uint8Array(Float64Array.of(1.5, -2).buffer));
    const decoded = fromBytes(typeCodeOf(new Float64Array(0)) as number, bytes);
    expect(decoded).to.deep.equal(Float64Array.of(1.5, -2));
    expect((decoded as Float64Array).byteOffset % 8).to.equal(0);
  });

  it('copies every body of a captured message into its own buffer, keeping binary values of their type', () => {
    const samples = new Float64Array(1000);
    const message = encodeMessage({ samples, small: Uint8Array.of(1) }, new MsgpackSerializer());
    const frame = new Frame(FrameType.Eager, 0, 0, 0, 0, 0, 0, 0, 0, message.format, [...message.bodies], bodiesSize(message.bodies), 0, 0, message.ownsFirstBody);
    copyBodies(frame);
    const captured = frame.bodies;
    captured.forEach((body, index) => {
      const bytes = viewBytes(body);
      expect(bytes.byteOffset).to.equal(0);
      expect(bytes.buffer.byteLength).to.equal(bytes.byteLength);
      if (index > 0) expect(bytes.buffer).to.not.equal((message.bodies[index] as Uint8Array).buffer);
    });
    samples[0] = 7;
    expect((decodeMessage(message.format, captured, new MsgpackSerializer()) as { samples: Float64Array }).samples[0]).to.equal(0);
    const raw = Float64Array.of(1.5);
    const rawFrame = new Frame(FrameType.Eager, 0, 0, 0, 0, 0, 0, 0, 0, typeCodeOf(raw) as number, [raw], 8);
    copyBodies(rawFrame);
    const copy = rawFrame.bodies[0];
    expect(copy).to.be.instanceOf(Float64Array).and.not.equal(raw);
    expect(copy).to.deep.equal(raw);
  });

  it('adds message lengths beyond 2^32 exactly', () => {
    const mebibyte = new ArrayBuffer(2 ** 20);
    const bodies = Array.from({ length: 2 ** 12 + 1 }, () => new Uint8Array(mebibyte));
    expect(bodiesSize([new Uint8Array(3), ...bodies])).to.equal(2 ** 32 + 2 ** 20 + 3);
  });

  it('registers classes by name', () => {
    expect(isRegistered(Vector)).to.equal(true);
    expect(isRegistered(class Fresh {})).to.equal(false);
    expect(() => registerClass(Vector)).to.not.throw();
    expect(() => registerClass(class Vector {})).to.throw(TypeError, 'Vector');
  });

  it('creates serializers by name or passes one through', () => {
    expect(createSerializer('msgpack', {}).name).to.equal('msgpack');
    expect(createSerializer('v8', { strict: true }).name).to.equal('v8');
    const own = new V8Serializer();
    expect(createSerializer(own, {})).to.equal(own);
  });
});
