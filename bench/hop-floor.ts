/**
 * The floor of ccjs's hop between two processes (issue 31, item 5): the 8 B hop of the same API
 * shape — an awaited send, a receive that returns a promise, a fresh Float64Array per message —
 * with nothing else: a minimal message ring in shared memory (the addon maps it), an 8-word
 * envelope checked against the one posted receive, and no matching queues, flow control, ordering
 * or failure handling. Two variants:
 *   - 'javascript': ring and envelope in JavaScript;
 *   - 'addon call': the same plus one empty addon call per message sent and per message received,
 *     the least a fast path in the addon could cost (its ring write and its read of the expected
 *     message are a call each at least, and the value and the promise stay JavaScript's).
 * Each pair of fresh processes times its first 1,000 hops (after one round trip) and then
 * repetitions of round trips, as bench/hopping.ts times ccjs.
 *
 *   node dist/bench/hop-floor.js <javascript|addon call> <trips> <repetitions> <warm-up>
 * prints {"first 1,000 hops": [µs per hop], "hop 8 B": [µs per hop, ...]}.
 */
import { fileURLToPath } from 'node:url';
import { typeCodeOf } from '../src/base/typed-arrays.js';
import { memoryAddon } from '../transport/body-memory.js';
import type { ShmNative } from '../transport/shm/native.js';
import type { Repeats, Samples } from './hopping.js';
import { runScript } from './job.js';

const SCRIPT = fileURLToPath(import.meta.url);
export type FloorVariant = 'javascript' | 'addon call';
export const FLOOR_VARIANTS: readonly FloorVariant[] = ['javascript', 'addon call'];
/** The cold start bench/manycore bounds: the first hops of a job, its figure's name. */
export const COLD_HOPS = 1000;
export const COLD_HOP = 'first 1,000 hops';

/** Per direction: a header (the messages written, HEAD, and read, TAIL, each on its own cache line), then the slots. */
const HEADER_BYTES = 256;
const HEAD = 0;
const TAIL = 16;
const CAPACITY = 64 * 1024;
const RING_BYTES = HEADER_BYTES + CAPACITY;
/** A message: 8 envelope words and a body of at most 32 bytes. */
const SLOT_BYTES = 64;
const SLOTS = CAPACITY / SLOT_BYTES;
const ENVELOPE_WORDS = 8;
const CONTEXT = 7;
/** The body's format, as ccjs's frames give it: a typed array's type code. */
const FLOAT64 = typeCodeOf(Float64Array.of(0)) as number;
/** The consumer publishes its tail every quarter ring, as ccjs's rings do: a store per message costs a cache line's trip. */
const RELEASE_SLOTS = SLOTS / 4;

function addon(): ShmNative {
  const native = memoryAddon();
  if (typeof native === 'string') throw new Error(native);
  return native as ShmNative;
}

/** One side of the floor's ping-pong over `buffer`: rank 0 times, rank 1 echoes. */
class FloorEndpoint {
  private readonly out: Int32Array;
  private readonly outWords: Uint32Array;
  private readonly outDoubles: Float64Array;
  private readonly inWords: Uint32Array;
  private readonly inDoubles: Float64Array;
  private readonly inHeader: Int32Array;
  private sent = 0;
  private read = 0;
  /** The tail this producer last saw. */
  private tail = 0;
  private waiter: ((value: Float64Array) => void) | undefined;

  constructor(
    buffer: SharedArrayBuffer,
    private readonly rank: number,
    private readonly call: (() => number) | undefined,
  ) {
    const ring = (index: number) => index * RING_BYTES;
    this.out = new Int32Array(buffer, ring(1 - rank), HEADER_BYTES / 4);
    this.outWords = new Uint32Array(buffer, ring(1 - rank) + HEADER_BYTES, CAPACITY / 4);
    this.outDoubles = new Float64Array(buffer, ring(1 - rank) + HEADER_BYTES, CAPACITY / 8);
    this.inHeader = new Int32Array(buffer, ring(rank), HEADER_BYTES / 4);
    this.inWords = new Uint32Array(buffer, ring(rank) + HEADER_BYTES, CAPACITY / 4);
    this.inDoubles = new Float64Array(buffer, ring(rank) + HEADER_BYTES, CAPACITY / 8);
  }

  /** An awaited send of `value` (at most 32 bytes): envelope and body into the next slot, then the head. */
  async send(value: Float64Array): Promise<void> {
    this.call?.();
    while (this.sent - this.tail >= SLOTS) this.tail = Atomics.load(this.out, TAIL);
    const at = (this.sent % SLOTS) * (SLOT_BYTES / 4);
    const words = this.outWords;
    words[at] = 1;
    words[at + 1] = 0;
    words[at + 2] = CONTEXT;
    words[at + 3] = this.rank;
    words[at + 4] = 1 - this.rank;
    words[at + 5] = 0;
    words[at + 6] = FLOAT64;
    words[at + 7] = value.byteLength;
    this.outDoubles.set(value, (at + ENVELOPE_WORDS) / 2);
    this.sent += 1;
    Atomics.store(this.out, HEAD, this.sent);
  }

  /** A receive from the peer: spins until its message is there, checks the envelope, returns a copy of the body. */
  receive(): Promise<Float64Array> {
    const promise = new Promise<Float64Array>((resolve) => {
      this.waiter = resolve;
    });
    while (!this.poll());
    return promise;
  }

  private poll(): boolean {
    if (Atomics.load(this.inHeader, HEAD) === this.read) return false;
    this.call?.();
    const at = (this.read % SLOTS) * (SLOT_BYTES / 4);
    const words = this.inWords;
    if (words[at + 2] !== CONTEXT || words[at + 3] !== 1 - this.rank || words[at + 5] !== 0 || words[at + 6] !== FLOAT64) throw new Error('hop floor: a message the receive did not expect');
    const start = (at + ENVELOPE_WORDS) / 2;
    const value = this.inDoubles.slice(start, start + (words[at + 7] as number) / 8);
    this.read += 1;
    if (this.read % RELEASE_SLOTS === 0) Atomics.store(this.inHeader, TAIL, this.read);
    const waiter = this.waiter as (value: Float64Array) => void;
    this.waiter = undefined;
    waiter(value);
    return true;
  }
}

/** µs per hop of `trips` round trips, timed by rank 0 (rank 1 echoes). */
async function trips(endpoint: FloorEndpoint, rank: number, count: number, value: Float64Array): Promise<number> {
  const start = process.hrtime.bigint();
  if (rank === 0) {
    for (let i = 0; i < count; i += 1) {
      await endpoint.send(value);
      await endpoint.receive();
    }
  } else {
    for (let i = 0; i < count; i += 1) await endpoint.send(await endpoint.receive());
  }
  return Number(process.hrtime.bigint() - start) / 1000 / count / 2;
}

/** One endpoint of the floor's pair (a fresh process). */
async function floorEndpoint(segment: string, rank: number, variant: FloorVariant, repeats: Repeats): Promise<void> {
  const native = addon();
  const endpoint = new FloorEndpoint(native.open(segment, 2 * RING_BYTES, false), rank, variant === 'addon call' ? () => native.probeAddress() : undefined);
  const value = Float64Array.of(1.5);
  // The first round trip waits for the other process to start: timed apart from the cold start.
  await trips(endpoint, rank, 1, value);
  const samples: Samples = { [COLD_HOP]: [await trips(endpoint, rank, COLD_HOPS / 2, value)] };
  await trips(endpoint, rank, repeats.warmUp, value);
  const steady: number[] = [];
  for (let i = 0; i < repeats.repetitions; i += 1) steady.push(await trips(endpoint, rank, repeats.trips, value));
  samples['hop 8 B'] = steady;
  if (rank === 0) process.stdout.write(`${JSON.stringify(samples)}\n`);
}

/** Runs the floor's pair of processes for `variant`; rank 0's samples. */
export async function floorSamples(variant: FloorVariant, repeats: Repeats): Promise<Samples> {
  const native = addon();
  const segment = `/ccjs-hop-floor-${process.pid}`;
  native.open(segment, 2 * RING_BYTES, true);
  try {
    const args = (rank: number) => ['endpoint', segment, String(rank), variant, JSON.stringify(repeats)];
    const [output] = await Promise.all([runScript(SCRIPT, args(0)), runScript(SCRIPT, args(1))]);
    return JSON.parse(output) as Samples;
  } finally {
    native.unlink(segment);
  }
}

if (process.argv[1] === SCRIPT && process.argv[2] === 'endpoint') {
  const [segment, rank, variant, repeats] = process.argv.slice(3) as [string, string, FloorVariant, string];
  await floorEndpoint(segment, Number(rank), variant, JSON.parse(repeats) as Repeats);
} else if (process.argv[1] === SCRIPT) {
  const [variant = 'javascript', trips = '20000', repetitions = '7', warmUp = '20000'] = process.argv.slice(2);
  if (!FLOOR_VARIANTS.includes(variant as FloorVariant)) throw new Error(`usage: node dist/bench/hop-floor.js [${FLOOR_VARIANTS.join('|')}] [trips] [repetitions] [warm-up]`);
  process.stdout.write(`${JSON.stringify(await floorSamples(variant as FloorVariant, { trips: Number(trips), repetitions: Number(repetitions), warmUp: Number(warmUp) }))}\n`);
}
