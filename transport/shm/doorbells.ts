/**
 * Doorbells of the shared-memory device: how a sender wakes a peer that sleeps, and what this
 * endpoint sleeps on. Each endpoint has a doorbell word (in the thread memory for its sibling
 * threads, in its segment for other processes) that says whether it sleeps; a sender rings only a
 * sleeping endpoint, and only one sender rings it (the one that swaps SLEEPING for AWAKE), so the
 * fast path makes no system call. Between threads the ring is Atomics.notify, heard through
 * Atomics.waitAsync; between processes (Atomics.notify does not cross them) a byte written to a
 * FIFO beside the segment, heard by this thread's event loop (the addon's Doorbell).
 */
import type { ShmNative } from './native.js';
import { SEGMENT } from './layout.js';
import { bellPath } from './segments.js';

export const AWAKE = 0;
export const SLEEPING = 1;

/**
 * A sender's wake-up for the endpoint whose doorbell word is `words[index]`: rings it (`ring`) if
 * it says it sleeps. Called after what the sender wrote is published; the sleeper says it sleeps,
 * then looks once more, so one of the two sees the other.
 */
export function wakeUp(words: Int32Array, index: number, ring: () => void): () => void {
  return () => {
    if (Atomics.load(words, index) === SLEEPING && Atomics.compareExchange(words, index, SLEEPING, AWAKE) === SLEEPING) ring();
  };
}

/** Our end of a peer process's doorbell; once closed it never writes again (its descriptor number may be reused). */
export class PeerBell {
  private fd: number;

  constructor(
    private readonly native: ShmNative,
    path: string,
  ) {
    this.fd = native.openBell(path);
  }

  ring(): void {
    if (this.fd >= 0) this.native.ringBell(this.fd);
  }

  close(): void {
    if (this.fd < 0) return;
    this.native.closeBell(this.fd);
    this.fd = -1;
  }
}

/** A doorbell word this endpoint sleeps on, and how it blocks on it. */
export interface Bell {
  readonly words: Int32Array;
  readonly index: number;
  /** Blocks (without blocking the event loop) until rung, then calls woken(); at most one block at a time. */
  block(): void;
  close(): void;
}

/** This thread's doorbell word in the thread memory `words`, rung by its sibling threads. */
export function threadBell(words: Int32Array, index: number, woken: () => void): Bell {
  let blocked = false;
  let closed = false;
  return {
    words,
    index,
    block: () => {
      if (blocked || closed) return;
      const wait = Atomics.waitAsync(words, index, SLEEPING);
      if (!wait.async) {
        // A sender rang between our last look and now: look again, without recursing into arm().
        queueMicrotask(woken);
        return;
      }
      blocked = true;
      void wait.value.then(() => {
        blocked = false;
        if (!closed) woken();
      });
    },
    close: () => {
      closed = true;
      // Lets an outstanding wait end (it finds the device closed).
      Atomics.notify(words, index);
    },
  };
}

/** The doorbell of this endpoint's segment `name`, rung by peers in other processes (made before the segment says it is ready). */
export function segmentBell(native: ShmNative, segment: SharedArrayBuffer, name: string, woken: () => void): Bell {
  let blocked = false;
  const doorbell = new native.Doorbell(bellPath(name), () => {
    blocked = false;
    woken();
  });
  return {
    words: new Int32Array(segment),
    index: SEGMENT.bell,
    block: () => {
      if (blocked) return;
      blocked = true;
      doorbell.arm();
    },
    close: () => doorbell.close(),
  };
}
