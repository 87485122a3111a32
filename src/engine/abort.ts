/**
 * Abort notices (FLAG_ABORT): the frame that tells the other members a collective call failed,
 * and its body, why it failed at its sender, as UTF-8 JSON `{ "mismatch": boolean, "message":
 * string }`. The receiver turns it back into an error for its own part of the call; a body that
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

export function abortNotice(error: Error): AbortNotice {
  const bytes = encoder.encode(JSON.stringify({ mismatch: error instanceof CollectiveMismatchError, message: error.message.slice(0, MAX_REASON) }));
  return { format: typeCodeOf(bytes) as number, bytes };
}

/** The frame that tells member `destination` that collective call `tag` (of `signature`, in group `context`) failed at member `source`. */
export function abortFrame(notice: AbortNotice, context: number, source: number, destination: number, tag: number, signature: Signature): Frame {
  return new Frame(FrameType.Eager, FLAG_COLLECTIVE | FLAG_ABORT, context, source, destination, tag, signature.operation, signature.root, signature.reduction, notice.format, [notice.bytes], notice.bytes.byteLength);
}

/** The error that the members told by `frame` get. */
export function abortError(frame: Frame): Error {
  const { mismatch, message } = readNotice(frame);
  const text = `a collective call failed at rank ${frame.source} of its group, so it was abandoned here: ${message}`;
  return mismatch ? new CollectiveMismatchError(text) : new CollectiveAbortedError(text, frame.source);
}

function readNotice(frame: Frame): { mismatch: boolean; message: string } {
  const body = frame.bodies[0];
  try {
    if (!(body instanceof Uint8Array) || frame.bodies.length !== 1) throw new Error('not one byte body');
    const parsed: unknown = JSON.parse(decoder.decode(body));
    if (typeof parsed === 'object' && parsed !== null && 'mismatch' in parsed && 'message' in parsed && typeof parsed.mismatch === 'boolean' && typeof parsed.message === 'string') {
      return { mismatch: parsed.mismatch, message: parsed.message.slice(0, MAX_REASON) };
    }
  } catch {
    // An unreadable reason still aborts the call.
  }
  return { mismatch: false, message: 'no readable reason came with the notice' };
}
