/** Payloads every point-to-point call must carry, and a comparison that suits big typed arrays. */
import { expect } from 'chai';
import { registerClass } from '../src/index.js';

export class Point {
  constructor(
    readonly x: number,
    readonly y: number,
    readonly label: string,
  ) {}

  norm(): number {
    return Math.hypot(this.x, this.y);
  }
}
registerClass(Point);

/** Encodes everywhere, but cannot be rebuilt by a receiver (its fromCCJS throws): a decode failure at every non-root. */
export class Unbuildable {
  constructor(readonly note: string) {}

  static fromCCJS(fields: unknown): Unbuildable {
    throw new Error(`Unbuildable cannot be rebuilt from ${JSON.stringify(fields)}`);
  }
}
registerClass(Unbuildable);

export interface Payload {
  readonly name: string;
  readonly make: () => unknown;
  /** Only the v8 serializer keeps these types. */
  readonly v8Only?: boolean;
}

function filled(length: number): Float64Array {
  const array = new Float64Array(length);
  for (let i = 0; i < length; i += 1) array[i] = i * 0.5 - 3;
  return array;
}

export const PAYLOADS: readonly Payload[] = [
  { name: 'a number', make: () => 42.125 },
  { name: 'a string with non-ASCII text', make: () => 'Grüße, 世界 🚀 ∑' },
  { name: 'a nested object', make: () => ({ id: 7, tags: ['a', 'b'], inner: { flag: true, none: null, list: [1, [2, [3]]] } }) },
  { name: 'a Map, a Set and a Date', make: () => ({ map: new Map<string, number>([['one', 1], ['two', 2]]), set: new Set([3, 4]), when: new Date(Date.UTC(2024, 1, 29)) }), v8Only: true },
  { name: 'an instance of a registered class', make: () => new Point(3, 4, 'p') },
  { name: 'a Float64Array of 1 element', make: () => filled(1) },
  { name: 'a Float64Array of 4 MiB', make: () => filled((4 * 1024 * 1024) / 8) },
  { name: 'an empty array', make: () => [] },
  {
    name: 'an object holding large and empty typed arrays (bodies out of band)',
    make: () => ({ label: 'grid', values: filled(40_000), counts: Int32Array.from({ length: 50_000 }, (_, i) => i - 7), none: new Float32Array(0) }),
  },
  {
    name: 'a 1 MiB ArrayBuffer (rendezvous)',
    make: () => Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7) % 253).buffer,
  },
  {
    name: 'a 64 MiB Uint8Array (rendezvous)',
    make: () => {
      const bytes = new Uint8Array(64 * 1024 * 1024);
      for (let i = 0; i < bytes.length; i += 4099) bytes[i] = i % 251;
      return bytes;
    },
  },
];

/**
 * Deep equality of a received value with the one sent; typed arrays are compared by type and bytes
 * (fast for 64 MiB), and must own exactly their bytes (`.buffer` shows nothing else); ArrayBuffers
 * by bytes.
 */
export function expectSame(actual: unknown, expected: unknown): void {
  if (ArrayBuffer.isView(expected)) {
    expect(actual).to.be.instanceOf(expected.constructor);
    const view = actual as ArrayBufferView;
    expect([view.byteOffset, view.buffer.byteLength], 'byteOffset and buffer size of a received typed array').to.deep.equal([0, view.byteLength]);
    const bytes = (of: ArrayBufferView) => Buffer.from(of.buffer, of.byteOffset, of.byteLength);
    expect(bytes(view).equals(bytes(expected)), 'typed array contents').to.equal(true);
    return;
  }
  if (expected instanceof ArrayBuffer) {
    expect(actual).to.be.instanceOf(ArrayBuffer);
    expect(Buffer.from(actual as ArrayBuffer).equals(Buffer.from(expected)), 'ArrayBuffer contents').to.equal(true);
    return;
  }
  expect(actual).to.deep.equal(expected);
  if (expected instanceof Point) {
    expect(actual).to.be.instanceOf(Point);
    expect((actual as Point).norm()).to.equal(expected.norm());
  }
}
