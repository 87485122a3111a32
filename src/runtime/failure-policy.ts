/**
 * What an endpoint does when something fails: an exception escaped a member's run() (with
 * abortOnError, it ends the job, naming the member), a peer endpoint or process was lost (the
 * calls that need it fail, and the listeners hear of it once), or another endpoint aborted the job
 * (this one stops too, or, without abortOnError, every call fails).
 */
import { AbortError, PeerLostError } from '../base/errors.js';
import { endpointLabel } from '../engine/endpoints.js';
import type { Joined } from './bootstrap.js';
import type { LossNotice } from './heartbeat.js';
import type { FailureListeners } from './failure-events.js';
import { EXIT_ABORTED_ELSEWHERE, exitEndpoint, writeStderr } from './threads.js';

export class FailurePolicy {
  /** This endpoint is ending the job's way (abortOnError): later failures are echoes of the first. */
  private stopping = false;
  /** Endpoints whose loss the listeners were told of, by whichever noticed it first: the coordinator or a device. */
  private readonly lostPeers = new Set<number>();

  constructor(
    private readonly job: Joined,
    private readonly listeners: FailureListeners,
  ) {
    job.engine.onLost = (peer, error) => this.tellLost(peer, error.message);
  }

  /** An exception escaped the run() of `member` (its label and groups): with abortOnError, aborts the job, naming it. */
  async memberFailed(member: string, error: unknown): Promise<void> {
    const { config, rank, engine, client, coordinator, traceFile } = this.job;
    if (!config.abortOnError || this.stopping) return;
    this.stopping = true;
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const message = `${member} failed: ${detail}`;
    const written = writeStderr(`ccjs: aborting the job: ${message}\n`);
    this.listeners.abort({ message, origin: rank });
    traceFile?.close();
    engine.leaveAfterLoss();
    // The coordinator's host tells the others itself: it may be gone before its own message came round.
    if (coordinator) coordinator.abort(rank, message);
    else client.abort(message, rank);
    await client.flush();
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

  /** Endpoint `endpoint` aborted the job: with abortOnError this endpoint stops; otherwise every call fails with AbortError. */
  aborted(endpoint: number, message: string): void {
    if (this.stopping) return;
    const { config, world, label, engine, traceFile } = this.job;
    const by = endpointLabel(endpoint, world.threadCount);
    this.listeners.abort({ message, origin: endpoint });
    if (config.abortOnError) {
      this.stopping = true;
      traceFile?.close();
      void exitEndpoint(EXIT_ABORTED_ELSEWHERE, writeStderr(`ccjs: ${label} stops: the job was aborted by ${by}: ${message}\n`));
      return;
    }
    const error = new AbortError(`the job was aborted by ${by}: ${message}`);
    for (let peer = 0; peer < world.endpoints.length; peer += 1) engine.markLost(peer, error);
  }

  private tellLost(endpoint: number, reason: string): void {
    if (this.stopping || this.lostPeers.has(endpoint)) return;
    this.lostPeers.add(endpoint);
    this.listeners.peerLost({ process: this.job.world.endpoints[endpoint]?.processRank ?? endpoint, endpoint, reason });
  }
}
