/**
 * The calls waiting at one engine, oldest first: what a lost or closed peer fails (losses.ts),
 * what the watchdog dumps and what a member returning from run() with calls in flight is told
 * about. A doubly linked list through the calls themselves, so that tracking one costs no
 * allocation.
 */
import { AlgorithmProbe, Probe, SendCall } from './calls.js';
import type { CallOwner, CallTracker, PendingCall } from './calls.js';

export class PendingCalls implements CallTracker {
  private first: PendingCall | undefined;
  private last: PendingCall | undefined;
  /** Watchdog ticks (advanced by the master's watchdog timer): a call notes the tick it started waiting at. */
  tick = 0;

  /** `call` waits: list it last (once), and count it for its owner. */
  track(call: PendingCall): void {
    if (call.linked) return;
    call.linked = true;
    // Calls that settle from a device's callback (a release, an Ack) or a mailbox's unlist themselves.
    if (call instanceof SendCall || call instanceof Probe || call instanceof AlgorithmProbe) call.tracker = this;
    call.born = this.tick;
    call.previous = this.last;
    call.next = undefined;
    if (this.last) this.last.next = call;
    else this.first = call;
    this.last = call;
    if (call.owner) call.owner.pendingCalls += 1;
  }

  /** `call` waits no more (settled, failed or taken away). */
  untrack(call: PendingCall): void {
    if (!call.linked) return;
    call.linked = false;
    if (call.previous) call.previous.next = call.next;
    else this.first = call.next;
    if (call.next) call.next.previous = call.previous;
    else this.last = call.previous;
    call.previous = call.next = undefined;
    if (call.owner) call.owner.pendingCalls -= 1;
  }

  /** Calls waiting now, oldest first (optionally only `owner`'s). */
  list(owner?: CallOwner): PendingCall[] {
    const calls: PendingCall[] = [];
    for (let call = this.first; call !== undefined; call = call.next) if (owner === undefined || call.owner === owner) calls.push(call);
    return calls;
  }

  /** The call that has waited longest (for the watchdog). */
  oldest(): PendingCall | undefined {
    return this.first;
  }
}
