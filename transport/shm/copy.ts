/**
 * Copies of large pieces into and out of the rings. V8 copies into and out of a SharedArrayBuffer
 * with relaxed atomic word moves, not memcpy: 37 µs a MiB here against the addon's 23 µs. Small
 * pieces stay with TypedArray.set (a native call costs more than it saves below a few KiB).
 */
import type { ShmNative } from './native.js';
import { setCopy } from '../stream.js';
import type { ByteCopy } from '../stream.js';

/** Pieces from this many bytes up go through the addon's memcpy. */
const NATIVE_COPY_BYTES = 16 * 1024;

/** The fastest copy there is: the addon's memcpy for large pieces when it is built, TypedArray.set otherwise. */
export function ringCopy(native: ShmNative | undefined): ByteCopy {
  if (native === undefined) return setCopy;
  return (target, offset, source) => {
    if (source.byteLength < NATIVE_COPY_BYTES) target.set(source, offset);
    else native.copy(target.subarray(offset, offset + source.byteLength), source);
  };
}
