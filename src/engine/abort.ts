/**
 * Abort notices (FLAG_ABORT): the frame that tells the other members a collective call failed,
 * and its body, where and why it failed first, as UTF-8 JSON `{ "mismatch": boolean, "message":
 * string, "origin": number }` (origin: the group rank where it failed). The receiver turns it back
 * into an error for its own part of the call; a member that passes such an error on passes the
 * origin and its message unchanged, so that nobody reads a chain of "failed at rank". A body that
 * does not read so still aborts the call, with a plain message (nothing a peer sends here can throw).
 */
import { CollectiveAbortedError, CollectiveMismatchError } from '../base/errors.js';
import { typeCodeOf } from '../base/typed-arrays.js';
import { FLAG_ABORT, FLAG_COLLECTIVE, Frame, FrameType } from '../../transport/frame.js';
import type { Signature } from './signature.js';

/** Longest reason carried; the rest is cut. */
const MAX_REASON = 2000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Why a collective call failed, as the body every other member's abort frame carries. */
export interface AbortNotice {
  readonly format: number;
  readonly bytes: Uint8Array;
}

/** Where and why a call failed first, for errors made from a notice (abortError). */
const causes = new WeakMap<Error, { origin: number; message: string }>();

/** The notice of `error`, which failed the call at group rank `rank` (or came from a notice: then its origin). */
export function abortNotice(error: Error, rank: number): AbortNotice {
  const { origin, message } = causes.get(error) ?? { origin: rank, message: error.message.slice(0, MAX_REASON) };
  const bytes = encoder.encode(JSON.stringify({ mismatch: error instanceof CollectiveMismatchError, message, origin }));
  return { format: typeCodeOf(bytes) as number, bytes };
}

/** The frame that tells member `destination` that collective call `tag` (of `signature`, in group `context`) failed at member `source`. */
export function abortFrame(notice: AbortNotice, context: number, source: number, destination: number, tag: number, signature: Signature): Frame {
  return new Frame(FrameType.Eager, FLAG_COLLECTIVE | FLAG_ABORT, context, source, destination, tag, signature.operation, signature.root, signature.reduction, notice.format, [notice.bytes], notice.bytes.byteLength);
}

/** The error that the members told by `frame` get. */
export function abortError(frame: Frame): Error {
  const { mismatch, message, origin } = readNotice(frame);
  const text = `a collective call failed at rank ${origin} of its group, so it was abandoned here: ${message}`;
  const error = mismatch ? new CollectiveMismatchError(text, origin) : new CollectiveAbortedError(text, origin);
  causes.set(error, { origin, message });
  return error;
}

function readNotice(frame: Frame): { mismatch: boolean; message: string; origin: number } {
  const body = frame.bodies[0];
  try {
    if (!(body instanceof Uint8Array) || frame.bodies.length !== 1) throw new Error('not one byte body');
    const parsed: unknown = JSON.parse(decoder.decode(body));
    if (typeof parsed === 'object' && parsed !== null && 'mismatch' in parsed && 'message' in parsed && typeof parsed.mismatch === 'boolean' && typeof parsed.message === 'string') {
      // A notice without an origin (or a bad one) tells of the sender's own failure.
      const origin = 'origin' in parsed && Number.isSafeInteger(parsed.origin) && (parsed.origin as number) >= 0 ? (parsed.origin as number) : frame.source;
      return { mismatch: parsed.mismatch, message: parsed.message.slice(0, MAX_REASON), origin };
    }
  } catch {
    // An unreadable reason still aborts the call.
  }
  return { mismatch: false, message: 'no readable reason came with the notice', origin: frame.source };
}
