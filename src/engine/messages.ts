/**
 * Between members and the engine: values become message frames, and the receives members post
 * turn frames back into values, checking a collective message's signature against the call that
 * receives it. A receive settles one promise, made only if the message was not already there.
 */
import { Frame, FrameType, bodiesSize, carriesOneBinary } from '../../transport/frame.js';
import { ANY_TAG, Receive, rejected } from './calls.js';
import type { CallOwner, Route } from './calls.js';
import { collectiveOf, describeSignature, sameOperation } from './signature.js';
import type { Signature } from './signature.js';
import { progressEngine } from './progress.js';
import { encodeMessage, decodeMessage } from '../serialization/message.js';
import { MAX_BYTE_VIEW, copyBinaryInto, fromBytes, typeCodeOf, isBinaryFormat } from '../base/typed-arrays.js';
import type { BinaryValue } from '../base/typed-arrays.js';
import type { Serializer } from '../serialization/serializer.js';
import { CollectiveMismatchError, ReceiveBufferError } from '../base/errors.js';

/** Largest user tag (MPI_TAG_UB is at least 32767; ours is 2^31 − 1). */
export const MAX_TAG = 0x7fff_ffff;

export const POINT_TO_POINT: Signature = { operation: 0, root: 0, reduction: 0 };

/**
 * A value as it travels, encoded once by encodeValue (or taken as it was received): its format,
 * bodies and size. Sent to several members or forwarded, it is not encoded again (and an inner
 * node of a tree forwards bytes it could not decode itself, so its subtree fails as it does
 * instead of waiting). Not the serializer's EncodedMessage (src/serialization/message.ts), which
 * it is made from.
 */
export class EncodedValue {
  constructor(
    readonly format: number,
    readonly bodies: readonly BinaryValue[],
    readonly size: number,
  ) {}
}

/** `value` as a message (a binary value is its own body, as encodeMessage makes it). */
export function encodeValue(serializer: Serializer, value: unknown): EncodedValue {
  const message = encodeMessage(value, serializer);
  return new EncodedValue(message.format, message.bodies, bodiesSize(message.bodies));
}

/**
 * The value a message carries. `owned`: the first body is a copy that owns exactly its bytes (a
 * frame's `ownsFirstBody` after copyBodies, as the in-process device delivers them).
 */
export function decodeValue(serializer: Serializer, format: number, bodies: readonly BinaryValue[], owned = false): unknown {
  return isBinaryFormat(format) && bodies.length === 1 ? fromBytes(format, bodies[0] as BinaryValue, owned) : decodeMessage(format, bodies, serializer);
}

/**
 * A received message, to forward: a binary value's body becomes a value of its type again (it
 * arrived as bytes), as the sender's encodeValue made it.
 */
function encodedAsSent(frame: Frame): EncodedValue {
  const bodies = carriesOneBinary(frame) ? [fromBytes(frame.format, frame.bodies[0] as BinaryValue, frame.ownsFirstBody)] : frame.bodies;
  return new EncodedValue(frame.format, bodies, frame.size);
}

/** The frame of a message carrying `value`, or an encoded message (a binary value is its own body: the common case, kept short). */
export function messageFrame(serializer: Serializer, value: unknown, flags: number, context: number, source: number, destination: number, tag: number, signature: Signature): Frame {
  if (value instanceof EncodedValue) {
    return new Frame(FrameType.Eager, flags, context, source, destination, tag, signature.operation, signature.root, signature.reduction, value.format, value.bodies.slice(), value.size);
  }
  const code = typeCodeOf(value);
  if (code !== undefined) {
    const binary = value as BinaryValue;
    return new Frame(FrameType.Eager, flags, context, source, destination, tag, signature.operation, signature.root, signature.reduction, code, [binary], binary.byteLength);
  }
  const message = encodeMessage(value, serializer);
  return new Frame(FrameType.Eager, flags, context, source, destination, tag, signature.operation, signature.root, signature.reduction, message.format, message.bodies, bodiesSize(message.bodies), 0, 0, message.ownsFirstBody);
}

/** The tag of a send: `options.tag`, 0 by default; RangeError for anything else than 0..2^31−1. */
export function sendTag(options: { readonly tag?: number } | undefined, operation: string): number {
  const tag = options?.tag ?? 0;
  if (!Number.isInteger(tag) || tag < 0 || tag > MAX_TAG) throw new RangeError(`${operation}: tag ${String(tag)} is not an integer in 0..${MAX_TAG}`);
  return tag;
}

/** The tag of a receive or probe: as for sends, or ANY_TAG. */
export function receiveTag(options: { readonly tag?: number } | undefined, operation: string): number {
  return options?.tag === ANY_TAG ? ANY_TAG : sendTag(options, operation);
}

/** The buffer a receive fills (`options.into`), if any; TypeError for anything else than an ArrayBufferView. */
export function receiveBuffer(options: { readonly into?: unknown } | undefined, operation: string): ArrayBufferView | undefined {
  const into = options?.into;
  if (into === undefined || ArrayBuffer.isView(into)) return into;
  throw new TypeError(`${operation}: options.into must be a typed array, Buffer or DataView, not ${into === null ? 'null' : typeof into}`);
}

/** What a receive hands back. */
export const enum Delivery {
  /** The value. */
  Value,
  /** { value, source, tag }. */
  Envelope,
  /** The EncodedValue, not decoded (to forward it, then decode). */
  Encoded,
}

/** Bytes per element of a typed array (1 for a DataView). */
function elementBytes(view: ArrayBufferView): number {
  return (view as Partial<Uint8Array>).BYTES_PER_ELEMENT ?? 1;
}

/** Why a message (`binary` or not, `length` bytes) cannot be received into `into`; undefined when it can. */
function unfitFor(into: ArrayBufferView, binary: boolean, length: number): string | undefined {
  if (!binary) return 'the message is not binary data (a typed array, Buffer, DataView or ArrayBuffer), so it cannot be received into a buffer';
  if (length > into.byteLength) return `the message's ${length} bytes do not fit in the buffer's ${into.byteLength}`;
  const size = elementBytes(into);
  if (length % size !== 0) return `the message's ${length} bytes are not a whole number of the buffer's ${size}-byte elements`;
  return undefined;
}

/** A member's receive: decodes the message and settles the caller's promise. */
export class MemberReceive extends Receive {
  private state: 'waiting' | 'done' | 'failed';
  private outcome: unknown;
  private resolve: ((value: unknown) => void) | undefined;
  private reject: ((error: unknown) => void) | undefined;
  /** The caller's promise, once made (result()). */
  private promise: Promise<unknown> | undefined;

  constructor(
    route: Route,
    operation: string,
    owner: CallOwner | undefined,
    destination: number,
    source: number,
    tag: number,
    private readonly serializer: Serializer,
    private readonly delivery: Delivery,
    /** The receiving collective call's signature; undefined for point-to-point receives. */
    private readonly signature: Signature | undefined,
    /** Where a binary message goes (`options.into`). */
    private readonly into: ArrayBufferView | undefined = undefined,
  ) {
    super(route, operation, owner, destination, source, tag, signature !== undefined);
    this.state = 'waiting';
    this.outcome = undefined;
    this.resolve = undefined;
    this.reject = undefined;
    this.promise = undefined;
  }

  complete(frame: Frame): void {
    try {
      if (this.signature !== undefined) this.checkSignature(frame, this.signature);
      this.outcome = this.delivery === Delivery.Encoded ? encodedAsSent(frame) : this.decoded(frame);
      this.state = 'done';
      this.resolve?.(this.outcome);
    } catch (error) {
      this.fail(error as Error);
    }
  }

  private decoded(frame: Frame): unknown {
    const value = this.into === undefined ? decodeValue(this.serializer, frame.format, frame.bodies, frame.ownsFirstBody) : this.placed(frame, this.into);
    return this.delivery === Delivery.Value ? value : { value, source: frame.source, tag: frame.tag };
  }

  override destinationFor(format: number, bytes: number): Uint8Array | undefined {
    const into = this.into;
    // Past one view's length (MAX_BYTE_VIEW), the body is read elsewhere and copied into `into` window by window.
    return into !== undefined && bytes <= MAX_BYTE_VIEW && unfitFor(into, isBinaryFormat(format), bytes) === undefined ? new Uint8Array(into.buffer, into.byteOffset, bytes) : undefined;
  }

  /** The message's bytes in `into` (copied there unless a device read them there), as a view of `into`'s kind. */
  private placed(frame: Frame, into: ArrayBufferView): ArrayBufferView {
    const body = frame.bodies[0];
    const bytes = carriesOneBinary(frame) ? body : undefined;
    const length = bytes?.byteLength ?? 0;
    const unfit = unfitFor(into, bytes !== undefined, length);
    if (unfit !== undefined || bytes === undefined) throw new ReceiveBufferError(`${this.describe()}: ${unfit}`);
    const readInPlace = ArrayBuffer.isView(bytes) && bytes.buffer === into.buffer && bytes.byteOffset === into.byteOffset;
    if (!readInPlace) copyBinaryInto(into, 0, bytes);
    return into instanceof DataView ? new DataView(into.buffer, into.byteOffset, length) : (into as Uint8Array).subarray(0, length / elementBytes(into));
  }

  fail(error: Error): void {
    this.state = 'failed';
    this.outcome = error;
    this.reject?.(error);
  }

  /**
   * The caller's promise. With `wait`, the caller is about to wait for it, so the progress engine
   * spins first. Without, the receive is posted to be awaited later (MPI_Irecv, a collective
   * algorithm's): it waits (spins) only once its caller awaits it while it is still pending, and
   * a failure nobody awaits does not count as unhandled (an algorithm may post several receives
   * and await them in turn: once its call failed, the ones after the first are never awaited; so
   * for a collective's receive that already failed).
   */
  result<T>(wait: boolean): Promise<T> {
    if (this.state === 'waiting' && wait) progressEngine.wait(this);
    if (this.state === 'done') return Promise.resolve(this.outcome as T);
    if (this.state === 'failed') return this.signature === undefined ? Promise.reject(this.outcome) : rejected<T>(this.outcome as Error);
    const promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve as (value: unknown) => void;
      this.reject = reject;
    });
    this.promise = promise;
    if (wait) return promise;
    promise.catch(() => undefined);
    return progressEngine.whenAwaited(this, promise);
  }

  abandon(): void {
    this.promise?.catch(() => undefined);
  }

  private checkSignature(frame: Frame, expected: Signature): void {
    const mismatch = signatureMismatch(`${this.describe()} (rank ${this.destination} here)`, expected, frame);
    if (mismatch !== undefined) throw mismatch;
  }
}

/**
 * The CollectiveMismatchError of a call (`call`: "allReduce: receive from rank 1 of group 'g' (rank 0
 * here)") that expected `expected` and met `theirs` from another member; undefined when they match.
 */
export function signatureMismatch(call: string, expected: Signature, theirs: Signature): CollectiveMismatchError | undefined {
  if (sameOperation(theirs.operation, expected.operation) && theirs.root === expected.root && theirs.reduction === expected.reduction) return undefined;
  const ours = describeSignature(expected.operation, expected.root, expected.reduction);
  const sender = describeSignature(theirs.operation, theirs.root, theirs.reduction);
  const advice =
    collectiveOf(theirs.operation) !== collectiveOf(expected.operation)
      ? 'members must call collectives in the same order'
      : theirs.root !== expected.root
        ? 'every member must pass the same root'
        : theirs.reduction !== expected.reduction
          ? 'every member must pass the same reduction'
          : 'the members chose different algorithms: give every member the same configuration, and for a size-dependent broadcast or scatter table let non-roots pass an object of the root\'s size (not null), or name the algorithm in the call';
  return new CollectiveMismatchError(`${call}: expected ${ours}, but the sender called ${sender}; ${advice}`);
}
