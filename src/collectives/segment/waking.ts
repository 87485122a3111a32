/**
 * How members waiting on a collective segment sleep and are woken, per thread (each worker thread
 * loads its own copy of this module). A member that stops spinning says so in its control line's
 * sleeping word (naming whom it waits for), looks at its flag once more, and sleeps; a member that
 * publishes a flag then looks at every other member's sleeping word and wakes those asleep waiting
 * for it, the one that swaps the word for AWAKE ringing (the store-then-load on both sides of doorbells.ts: one of the two sees the
 * other, so no wake-up is lost). Members of this thread are woken by looking at their flags again;
 * members of other threads or processes by this thread's doorbell (the shm addon's FIFO, watched
 * by the thread's event loop): Atomics.notify does not cross processes, nor two mappings of one
 * segment in one process.
 */
import fs from 'node:fs';
import { threadId } from 'node:worker_threads';
import { AWAKE, PeerBell } from '../../../transport/shm/doorbells.js';
import { bellPath } from '../../../transport/shm/segments.js';
import type { Doorbell, ShmNative } from '../../../transport/shm/native.js';
import { progressEngine } from '../../engine/progress.js';

export { AWAKE };

/** Where a member's wake-ups go: its process, and a token naming its thread's doorbell. */
export interface WakeAddress {
  readonly pid: number;
  readonly token: number;
  readonly thread: number;
}

/** A member asleep in this thread: woken when `ready` holds (or `wake` is called by a failure). */
interface Sleeper {
  readonly ready: () => boolean;
  /** Says it sleeps again before `ready` is looked at once more (its word was swapped to AWAKE by a ring). */
  readonly rearm: () => void;
  readonly wake: () => void;
}

/** The name of a thread's doorbell: in the `ccjs-<pid>-…` family that removeStaleSegments cleans up. */
function wakeBellName(address: WakeAddress): string {
  return `/ccjs-${address.pid}-w${address.token.toString(36)}-${address.thread}`;
}

class ThreadWaker {
  private doorbell: Doorbell | undefined;
  private path: string | undefined;
  private address: WakeAddress | undefined;
  private readonly sleepers = new Set<Sleeper>();
  /** Other threads' doorbells, opened once, by path (undefined: its thread is gone). */
  private readonly peers = new Map<string, PeerBell | undefined>();
  private native: ShmNative | undefined;
  private readonly removeAtExit = () => this.close();

  /** This thread's address, its doorbell made on first use. */
  addressOf(native: ShmNative): WakeAddress {
    if (this.address === undefined) {
      const address = { pid: process.pid, token: Math.floor(Math.random() * 0x7fff_ffff), thread: threadId };
      this.path = bellPath(wakeBellName(address));
      this.doorbell = new native.Doorbell(this.path, () => {
        progressEngine.wokenUp();
        this.recheck(true);
      });
      this.native = native;
      this.address = address;
      process.once('exit', this.removeAtExit);
    }
    return this.address;
  }

  isThisThread(pid: number, token: number): boolean {
    return this.address !== undefined && this.address.pid === pid && this.address.token === token;
  }

  /** Puts `sleeper` to sleep until `recheck` finds it ready; arms the doorbell. */
  sleep(sleeper: Sleeper): void {
    this.sleepers.add(sleeper);
    this.doorbell?.arm();
  }

  /** Takes `sleeper` out (it failed). */
  forget(sleeper: Sleeper): void {
    this.sleepers.delete(sleeper);
  }

  /** Wakes the sleepers whose flags are up; `rung`: the doorbell rang, so the rest say they sleep again first. */
  recheck(rung = false): void {
    for (const sleeper of this.sleepers) {
      if (rung) sleeper.rearm();
      if (!sleeper.ready()) continue;
      this.sleepers.delete(sleeper);
      sleeper.wake();
    }
    if (rung && this.sleepers.size > 0) this.doorbell?.arm();
  }

  /** Rings the doorbell of the thread at `address`. */
  ring(address: WakeAddress): void {
    const path = bellPath(wakeBellName(address));
    let bell = this.peers.get(path);
    if (!this.peers.has(path)) {
      try {
        bell = new PeerBell(this.native as ShmNative, path);
      } catch {
        // Its thread is gone: its losses fail the calls that waited for it.
        bell = undefined;
      }
      this.peers.set(path, bell);
    }
    bell?.ring();
  }

  private close(): void {
    this.doorbell?.close();
    if (this.path !== undefined) fs.rmSync(this.path, { force: true });
    for (const bell of this.peers.values()) bell?.close();
  }
}

/** This thread's sleepers and doorbell. */
export const threadWaker = new ThreadWaker();
