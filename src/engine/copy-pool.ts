/**
 * Memory for the copies the engine keeps of large sendAsync messages while they wait for their
 * receiver (rendezvous, see Engine.detach). A fresh MiB costs more in page faults here (~200 µs)
 * than the copy into it, so the memory of a copy whose data went out is kept for the next one
 * instead of left to the garbage collector. Sizes are rounded up to a power of two; at most
 * IDLE_BYTES wait idle, those of the latest sizes.
 *
 * Pooled copies are plain bytes that the frame does not own (ownsFirstBody false): a device that
 * hands bodies to a receiver as they are (the in-process one) copies them first, so no receiver
 * ever keeps memory that the pool gives out again.
 */
import { bodyTypeCode } from '../../transport/frame.js';
import type { Frame } from '../../transport/frame.js';
import { MAX_BYTE_VIEW, copyBinary, typedArrayOver, viewBytes } from '../base/typed-arrays.js';

/** Bodies from this many bytes up are copied into pooled memory; smaller ones the usual way. */
const POOLED_BYTES = 64 * 1024;
/** The most idle memory the pool keeps. */
const IDLE_BYTES = 16 * 1024 * 1024;

export class CopyPool {
  /** Idle buffers by size (a power of two). */
  private readonly idle = new Map<number, ArrayBuffer[]>();
  private idleBytes = 0;
  /** Copies made in memory the pool kept, and in fresh memory (which the kernel faults in page by page). */
  readonly stats = { reused: 0, fresh: 0 };

  /** Replaces `frame`'s bodies with copies; returns the pooled buffers among them, to give back once the data went out. */
  copyBodies(frame: Frame): ArrayBuffer[] {
    const { bodies } = frame;
    const pooled: ArrayBuffer[] = [];
    for (let i = 0; i < bodies.length; i += 1) {
      const body = bodies[i]!;
      if (i === 0 && frame.ownsFirstBody) continue;
      const code = bodyTypeCode(frame, i);
      // An ArrayBuffer cannot be a window on pooled memory.
      // Nor can a body longer than one view (MAX_BYTE_VIEW): a copy of its own type.
      if (body.byteLength < POOLED_BYTES || body instanceof ArrayBuffer || body.byteLength > MAX_BYTE_VIEW) {
        bodies[i] = copyBinary(code, body);
        continue;
      }
      const buffer = this.take(body.byteLength);
      new Uint8Array(buffer, 0, body.byteLength).set(viewBytes(body));
      // Of the body's own type: a device that copies bodies for a receiver copies them as that type.
      bodies[i] = typedArrayOver(code, buffer, 0, body.byteLength);
      pooled.push(buffer);
    }
    frame.ownsFirstBody = false;
    return pooled;
  }

  /**
   * The data of copies went out: their memory serves the next ones. Idle buffers of other sizes
   * make room for it (the size just sent is the likeliest to come next).
   */
  giveBack(buffers: readonly ArrayBuffer[]): void {
    for (const buffer of buffers) {
      const size = buffer.byteLength;
      if (size > IDLE_BYTES) continue;
      for (const [other, free] of this.idle) {
        while (other !== size && free.length > 0 && this.idleBytes + size > IDLE_BYTES) {
          free.pop();
          this.idleBytes -= other;
        }
      }
      if (this.idleBytes + size > IDLE_BYTES) continue;
      let free = this.idle.get(size);
      if (free === undefined) this.idle.set(size, (free = []));
      free.push(buffer);
      this.idleBytes += size;
    }
  }

  private take(bytes: number): ArrayBuffer {
    const size = 2 ** Math.ceil(Math.log2(bytes));
    const buffer = this.idle.get(size)?.pop();
    if (buffer === undefined) {
      this.stats.fresh += 1;
      return new ArrayBuffer(size);
    }
    this.stats.reused += 1;
    this.idleBytes -= size;
    return buffer;
  }
}
