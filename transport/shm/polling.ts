/**
 * Progress of the shared-memory device: each poll reads every peer's ring into the engine and
 * writes what waits into theirs; between polls the device sleeps on its doorbells. The engine's
 * progress engine polls it while a call waits (spinning); when it stops, the device says it sleeps
 * (its doorbell words hold SLEEPING) and blocks without blocking the event loop until a peer rings.
 * Whenever it was polled it goes back to sleep once the event loop is idle.
 */
import type { RingReceiver } from './delivery.js';
import { AWAKE, SLEEPING } from './doorbells.js';
import type { Bell } from './doorbells.js';
import type { RingSender } from './sending.js';
import type { ShmStats } from './stats.js';

/** How long an endpoint asleep with output waiting for its peers goes without looking (ms). */
const SAFETY_MS = 10;

/** This endpoint and one peer: the ring it writes into, and the one it reads from. */
export interface RingLink {
  readonly peer: number;
  /** The peer's process id, for peers in other processes (checked for life). */
  readonly pid: number | undefined;
  readonly sender: RingSender;
  readonly receiver: RingReceiver;
}

export class Poller {
  /** The links polled, by rank. */
  private active: RingLink[] = [];
  /** The doorbells this endpoint sleeps on (one for its sibling threads, one for other processes). */
  private readonly bells: Bell[] = [];
  private running = false;
  private armed = false;
  private rearmScheduled = false;
  private polling = false;
  private safety: NodeJS.Timeout | undefined;

  constructor(private readonly stats: ShmStats) {}

  /** A doorbell rang (or data was found while arming). */
  readonly woken = (): void => {
    this.progress();
    if (!this.armed && !this.rearmScheduled) this.arm();
  };

  addBell(bell: Bell): void {
    this.bells.push(bell);
  }

  /** Starts polling `links` (the device is connected) and goes to sleep. */
  start(links: RingLink[]): void {
    this.active = links;
    this.running = true;
    this.arm();
  }

  /** Stops polling the link to `peer`. */
  remove(peer: number): void {
    this.active = this.active.filter((link) => link.peer !== peer);
  }

  /** Moves everything that arrived into the engine and what waits to go out into the rings; says how much moved. */
  progress(): number {
    if (this.polling) return 0;
    this.polling = true;
    try {
      if (this.armed) this.disarm();
      let moved = 0;
      for (let i = 0; i < this.active.length; i += 1) {
        const link = this.active[i] as RingLink;
        moved += link.receiver.progress();
        moved += link.sender.progress();
      }
      return moved;
    } finally {
      this.polling = false;
    }
  }

  /**
   * Says it sleeps, looks once more (a sender may have written, or a reader made room for our
   * queued output, just before), then blocks.
   */
  arm(): void {
    if (!this.running) return;
    // Asked to sleep from inside a poll (a frame delivered made a call wait): the poll cannot look
    // again from here, and a device marked asleep but not blocked would never hear its doorbell.
    if (this.polling) {
      this.scheduleRearm();
      return;
    }
    this.armed = true;
    // What was read is freed first: a sender waiting for that room must not wait for our sleep to end.
    for (const link of this.active) link.receiver.releaseRead();
    for (const bell of this.bells) Atomics.store(bell.words, bell.index, SLEEPING);
    if (this.active.some((link) => link.receiver.hasData() || link.sender.canMove())) {
      this.woken();
      return;
    }
    for (const bell of this.bells) bell.block();
    if (this.waitsForPeers()) this.startSafety();
  }

  /** Output queued for full rings, or bodies peers are still to read: only the peers' rings wake us. */
  waitsForPeers(): boolean {
    return this.active.some((link) => link.sender.waitsForPeer());
  }

  describe(): string {
    const bells = this.bells.map((bell) => Atomics.load(bell.words, bell.index)).join('/');
    const links = this.active.map((link) => `${link.sender.describe()}; ${link.receiver.describe()}`);
    return `${this.armed ? 'armed' : 'awake'}${this.rearmScheduled ? ' (rearm scheduled)' : ''}, bells ${bells}, safety wakes ${this.stats.safetyWakes}; ${links.join('; ')}`;
  }

  /**
   * Lets output still queued for the rings go out (its senders returned long ago) and peers read
   * the bodies they are still to read from our memory, for at most `timeoutMs`; then stops: its
   * doorbells close.
   */
  async close(timeoutMs: number): Promise<void> {
    clearTimeout(this.safety);
    const deadline = Date.now() + timeoutMs;
    while (this.waitsForPeers() && Date.now() < deadline) {
      this.progress();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    for (const bell of this.bells) bell.close();
    this.bells.length = 0;
    this.active = [];
    this.running = false;
  }

  /** Stops sleeping while polled; goes back to sleep when the event loop is next idle. */
  private disarm(): void {
    this.armed = false;
    for (const bell of this.bells) Atomics.store(bell.words, bell.index, AWAKE);
    this.scheduleRearm();
  }

  private scheduleRearm(): void {
    if (this.rearmScheduled) return;
    this.rearmScheduled = true;
    setImmediate(() => {
      this.rearmScheduled = false;
      if (!this.armed) this.arm();
    });
  }

  /**
   * While asleep with output waiting for peers, polls every SAFETY_MS (counted in
   * stats.safetyWakes): only a peer's wake-up would end that sleep, and this bounds one that does
   * not come. No window for losing it is known: each side stores its word, then loads the other's
   * (HEAD and the reader's bell; TAIL and PRODUCER_WAITING; FETCHED and our bell), so one of them
   * sees the other. Yet once, with spinning off (namespace hosts sharing 2 cores), a job hung: a
   * root's frames queued behind a ring its reader had emptied, its bell word rung (AWAKE), this
   * device armed, and no callback came (commit a94be43). Under instrumentation that was not seen
   * again: every ring reached the doorbell, though some callbacks came milliseconds late, the
   * woken process waiting for a core (2273e20). Cause unknown, so not provably unneeded: kept.
   */
  private startSafety(): void {
    if (this.safety !== undefined) return;
    this.safety = setTimeout(() => {
      this.safety = undefined;
      if (!this.armed || !this.waitsForPeers()) return;
      this.stats.safetyWakes += 1;
      this.woken();
    }, SAFETY_MS);
    this.safety.unref();
  }
}
