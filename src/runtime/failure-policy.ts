/**
 * What an endpoint does when something fails: an exception escaped a member's run() (with
 * abortOnError, it ends the job, naming the member), a peer endpoint or process was lost (the
 * calls that need it fail, and the listeners hear of it once), or another endpoint aborted the job
 * (this one stops too, or, without abortOnError, every call fails).
 *
 * One failure, one message: the coordinator takes the first abort as the job's cause and tells
 * every endpoint (Coordinator.abort). Only the endpoint that caused it prints what failed, with its
 * stack; the others print one line and exit with EXIT_ABORTED_ELSEWHERE, so that launchers name
 * the cause. A member whose call failed because of another member (a collective call that failed
 * there, a lost peer) waits a little for that member's abort before it aborts the job itself.
 */
import { AbortError, BadFrameError, CollectiveAbortedError, CollectiveMismatchError, PeerLostError } from '../base/errors.js';
import { endpointLabel } from '../engine/endpoints.js';
import type { Joined } from './bootstrap.js';
import type { LossNotice } from './heartbeat.js';
import type { JobAbort } from './coordinator.js';
import type { FailureListeners } from './failure-events.js';
import { EXIT_ABORTED_ELSEWHERE, exitEndpoint, writeStderr } from './threads.js';

/** How long a member whose collective call failed elsewhere waits for that member's abort, and an endpoint for the coordinator to say whose abort came first (ms). */
const CAUSE_WAIT_MS = 1000;

/** An endpoint that is stopping never returns to the member that failed: its exit is under way. */
const STOPPING = new Promise<never>(() => {});

/** The error says that a call failed because of another member (its collective call failed there, or its endpoint went), which reports the cause if it can. */
function failedElsewhere(error: unknown): boolean {
  return error instanceof CollectiveAbortedError || error instanceof PeerLostError || (error instanceof CollectiveMismatchError && error.failedRank !== undefined);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class FailurePolicy {
  /** This endpoint is ending the job's way (abortOnError): later failures are echoes of the first. */
  private stopping = false;
  /** While this endpoint's own abort waits for the coordinator's word: told which abort came first. */
  private firstAbort: ((abort: JobAbort) => void) | undefined;
  /** Endpoints whose loss the listeners were told of, by whichever noticed it first: the coordinator or a device. */
  private readonly lostPeers = new Set<number>();

  constructor(
    private readonly job: Joined,
    private readonly listeners: FailureListeners,
  ) {
    job.engine.onLost = (peer, error) => {
      // A frame this endpoint refused is its verdict on the sender: the job hears it, so that every member names the same process.
      if (error instanceof BadFrameError) job.client.faulty(peer, error.message);
      this.tellLost(peer, error.message);
    };
  }

  /**
   * An exception escaped the run() of `member` (its label and groups): with abortOnError, aborts
   * the job, naming it, unless another endpoint's abort comes first (then this one stops, as told).
   */
  async memberFailed(member: string, error: unknown): Promise<void> {
    const { config, rank, engine, client, coordinator, traceFile } = this.job;
    if (!config.abortOnError) return;
    if (!this.stopping && failedElsewhere(error)) await delay(CAUSE_WAIT_MS);
    if (this.stopping) return STOPPING;
    this.stopping = true;
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const message = `${member} failed: ${detail}`;
    traceFile?.close();
    engine.leaveAfterLoss();
    const ours: JobAbort = { endpointRank: rank, message };
    // The coordinator's host tells the others itself: it may be gone before its own message came round.
    let first = ours;
    if (coordinator) {
      first = coordinator.abort(rank, message);
    } else {
      const told = new Promise<JobAbort>((resolve) => (this.firstAbort = resolve));
      client.abort(message, rank);
      await client.flush();
      // Without word from the coordinator within the wait, this endpoint reports its own failure.
      first = await Promise.race([told, delay(CAUSE_WAIT_MS).then(() => ours)]);
      this.firstAbort = undefined;
    }
    if (first.endpointRank !== rank) return this.stop(first);
    const written = writeStderr(`ccjs: aborting the job: ${message}\n`);
    this.listeners.abort({ message, origin: rank });
    // In a worker thread this ends the thread with code 1, which ends its process (threads.ts).
    await exitEndpoint(1, written);
  }

  /** The coordinator (or this process's heartbeat thread) declared `endpoint` lost: its calls fail. */
  peerLost(endpoint: number, message: string): void {
    if (this.stopping) return;
    const processRank = this.job.world.endpoints[endpoint]?.processRank ?? endpoint;
    this.job.engine.markLost(endpoint, new PeerLostError(message, processRank, { endpointRank: endpoint }));
    this.tellLost(endpoint, message);
  }

  /** This process's heartbeat thread declared a process lost: so is each of its endpoints. */
  processLost(notice: LossNotice): void {
    const { world, rank, coordinator } = this.job;
    if (notice.processRank === Math.floor(rank / world.threadCount)) return;
    for (const endpoint of world.endpoints) {
      if (endpoint.processRank === notice.processRank) this.peerLost(endpoint.rank, `${endpointLabel(endpoint.rank, world.threadCount)} was lost (${notice.reason})`);
    }
    // A stopped process keeps its control connection open: the coordinator must not wait for its goodbye.
    coordinator?.processLost(notice.processRank);
  }

  /**
   * Endpoint `endpoint` aborted the job (the coordinator tells the first abort to every endpoint,
   * its own too): with abortOnError this endpoint stops; otherwise every call fails with AbortError.
   */
  aborted(endpoint: number, message: string): void {
    if (this.firstAbort !== undefined) {
      this.firstAbort({ endpointRank: endpoint, message });
      return;
    }
    if (this.stopping) return;
    const { config, world, engine, traceFile } = this.job;
    if (config.abortOnError) {
      this.stopping = true;
      traceFile?.close();
      void this.stop({ endpointRank: endpoint, message });
      return;
    }
    this.listeners.abort({ message, origin: endpoint });
    const error = new AbortError(`the job was aborted by ${endpointLabel(endpoint, world.threadCount)}: ${message}`);
    for (let peer = 0; peer < world.endpoints.length; peer += 1) engine.markLost(peer, error);
  }

  /** Another endpoint's abort is the job's cause, which it reports: this one says in one line that it stops, and ends. */
  private stop(cause: JobAbort): Promise<never> {
    const { world, label } = this.job;
    this.listeners.abort({ message: cause.message, origin: cause.endpointRank });
    return exitEndpoint(EXIT_ABORTED_ELSEWHERE, writeStderr(`ccjs: ${label} stops: the job was aborted by ${endpointLabel(cause.endpointRank, world.threadCount)}\n`));
  }

  private tellLost(endpoint: number, reason: string): void {
    if (this.stopping || this.lostPeers.has(endpoint)) return;
    this.lostPeers.add(endpoint);
    this.listeners.peerLost({ process: this.job.world.endpoints[endpoint]?.processRank ?? endpoint, endpoint, reason });
  }
}
