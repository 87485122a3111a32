/**
 * A timeline of the job (CCJS_TRACE_FILE, option `traceFile`) in Chrome's trace event format, for
 * Perfetto (ui.perfetto.dev) and chrome://tracing: every endpoint records its members' collective
 * calls (collective, algorithm, root, reduction, bytes, member count) and point-to-point calls
 * (peer, tag, bytes) as complete ("X") events, pid = process rank, tid = endpoint rank.
 *
 * Each endpoint appends its events to its own part, `<file>.<endpoint rank>`, written in the
 * format's JSON array form, whose closing bracket is optional: a part stays loadable even when its
 * process dies. Endpoint 0 joins the parts into `<file>` once every endpoint has said goodbye to
 * its coordinator (or was lost), and removes them. Times are absolute microseconds
 * (performance.timeOrigin + performance.now()), so that the endpoints of one host line up.
 *
 * A track holds events that never overlap, as the viewers need: calls that run at once in one
 * endpoint (several members, or calls started before earlier ones were awaited) spill onto further
 * lanes of the endpoint, tid = endpoint rank + lane × endpoint count.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { ConfigError } from '../base/errors.js';
import { MemberReceive } from '../engine/messages.js';
import type { Delivery } from '../engine/messages.js';
import { ANY_SOURCE } from '../engine/calls.js';
import type { CallOwner, Route } from '../engine/calls.js';
import type { Frame } from '../../transport/frame.js';
import type { Serializer } from '../serialization/serializer.js';
import type { AlgorithmSignatures, CollectiveName, Selection } from '../collectives/algorithm.js';
import type { TracedCollective } from '../collectives/endpoint.js';

/** The endpoint that writes a part, as its tracks are named. */
/** One event of the Chrome trace event format, as written here and read back by the tools and tests. */
export interface TraceEvent<Args = Record<string, unknown>> {
  readonly name: string;
  readonly ph: string;
  readonly ts: number;
  readonly dur?: number;
  readonly pid: number;
  readonly tid: number;
  readonly cat?: string;
  readonly args: Args;
}

export interface TraceEndpoint {
  readonly rank: number;
  /** Endpoints in the job. */
  readonly size: number;
  readonly processRank: number;
  readonly threadRank: number;
  readonly host: string;
}

/** A point-to-point call, as its event describes it. */
export interface TracedMessage {
  /** What the member called: 'sendSync', 'receive', ... */
  readonly operation: string;
  readonly group: string;
  readonly rank: number;
  readonly peer: number;
  readonly tag: number;
  readonly bytes: number;
}

/** The part of `file` that endpoint `rank` writes. */
export function partOf(file: string, rank: number): string {
  return `${file}.${rank}`;
}

/**
 * The events of a part, each as its JSON text: a part is the format's JSON array form, one event
 * a line, each line ending in a comma, and no closing bracket (the format allows its absence);
 * a line without its comma was cut short by a dying process and is left out.
 */
export function eventsOfPart(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{') && line.endsWith(','))
    .map((line) => line.slice(0, -1));
}

/** Events kept before they are appended to the part, and how long at most (a killed process loses them). */
const FLUSH_EVENTS = 4096;
const FLUSH_MS = 250;

/** Trace files of this thread still open: an endpoint that exits without closing (an aborted job) appends their pending events first. */
const openTraceFiles = new Set<TraceFile>();
let flushingAtExit = false;

export class TraceFile {
  private descriptor: number | undefined;
  private pending: string[] = [];
  private readonly flusher: NodeJS.Timeout;
  /** Where the last event of each lane ends (µs). */
  private readonly laneEnds: number[] = [];

  constructor(
    /** The joined file; absolute. */
    readonly file: string,
    private readonly endpoint: TraceEndpoint,
  ) {
    const part = partOf(file, endpoint.rank);
    try {
      this.descriptor = fs.openSync(part, 'w');
      fs.writeSync(this.descriptor, '[\n');
    } catch (error) {
      throw new ConfigError(`trace file ${file}: cannot write this endpoint's part ${part}: ${(error as Error).message}`, { cause: error });
    }
    if (endpoint.threadRank === 0) {
      this.metadata('process_name', { name: `process ${endpoint.processRank} (${endpoint.host}, pid ${process.pid})` });
      this.metadata('process_sort_index', { sort_index: endpoint.processRank });
    }
    this.addLane();
    this.flusher = setInterval(() => this.flush(), FLUSH_MS).unref();
    openTraceFiles.add(this);
    if (!flushingAtExit) {
      flushingAtExit = true;
      process.on('exit', () => {
        for (const traceFile of openTraceFiles) traceFile.flush();
      });
    }
  }

  /** The clock of the events (ms), read where a call starts. */
  now(): number {
    return performance.now();
  }

  /** `selection` with its algorithm's runs recorded as `call`. */
  collective<C extends CollectiveName>(selection: Selection<C>, call: TracedCollective): Selection<C> {
    const run = selection.algorithm.run as (...args: unknown[]) => Promise<unknown>;
    const { collective, root, ...shape } = call;
    // JSON leaves out what is undefined: the root of a collective without one, a missing reduction.
    const args = { algorithm: selection.name, ...shape, root: root >= 0 ? root : undefined };
    const recorded = (...runArguments: unknown[]): Promise<unknown> => {
      const started = this.now();
      const result = run(...runArguments);
      this.recordWhenSettled(result, started, `${collective} (${selection.name})`, 'collective', args);
      return result;
    };
    return { ...selection, algorithm: { ...selection.algorithm, run: recorded as AlgorithmSignatures[C] } };
  }

  /** Records a point-to-point send, started at `started`, once `sent` settles; returns `sent`. */
  send(sent: Promise<void>, started: number, call: TracedMessage): Promise<void> {
    this.recordWhenSettled(sent, started, `${call.operation} to ${call.peer}`, 'p2p', call);
    return sent;
  }

  /** Records a point-to-point receive (its envelope as it arrived), `error` if it failed. */
  received(started: number, call: TracedMessage, error: unknown): void {
    const from = call.peer === ANY_SOURCE ? 'any rank' : call.peer;
    this.record(started, `${call.operation} from ${from}`, 'p2p', error === undefined ? call : { ...call, error: describe(error) });
  }

  /** Appends what is left to the part; later events are dropped (the endpoint is ending). */
  close(): void {
    if (this.descriptor === undefined) return;
    clearInterval(this.flusher);
    openTraceFiles.delete(this);
    this.flush();
    fs.closeSync(this.descriptor);
    this.descriptor = undefined;
  }

  /**
   * Endpoint 0, once every endpoint has left: joins the parts of the job's `size` endpoints into
   * the file and removes them. Lines that a dying process cut short are left out.
   */
  join(size: number): void {
    const output = fs.openSync(this.file, 'w');
    fs.writeSync(output, '{"traceEvents":[\n');
    let separator = '';
    const missing: string[] = [];
    for (let rank = 0; rank < size; rank += 1) {
      const part = partOf(this.file, rank);
      if (!fs.existsSync(part)) {
        missing.push(part);
        continue;
      }
      const events = eventsOfPart(fs.readFileSync(part, 'utf8'));
      if (events.length > 0) {
        fs.writeSync(output, separator + events.join(',\n'));
        separator = ',\n';
      }
      fs.rmSync(part);
    }
    fs.writeSync(output, '\n],"displayTimeUnit":"ms"}\n');
    fs.closeSync(output);
    if (missing.length > 0) process.stderr.write(`ccjs: trace file ${this.file} lacks the endpoints whose parts are not here: ${missing.join(', ')}\n`);
  }

  private recordWhenSettled(settling: Promise<unknown>, started: number, name: string, category: string, args: object): void {
    // A side chain: the caller gets its promise untouched (though a rejection of it now counts as handled).
    settling.then(
      () => this.record(started, name, category, args),
      (error: unknown) => this.record(started, name, category, { ...args, error: describe(error) }),
    );
  }

  /** A complete event on the first lane that is free since `started`. */
  private record(started: number, name: string, category: string, args: object): void {
    if (this.descriptor === undefined) return;
    const ts = micros(started);
    const end = micros(this.now());
    let lane = this.laneEnds.findIndex((laneEnd) => laneEnd <= ts);
    if (lane < 0) lane = this.addLane();
    this.laneEnds[lane] = end;
    // Spelled out rather than one JSON.stringify of the event: this runs for every call.
    this.write(`{"name":${JSON.stringify(name)},"cat":"${category}","ph":"X","ts":${ts},"dur":${end - ts},"pid":${this.endpoint.processRank},"tid":${this.tid(lane)},"args":${JSON.stringify(args)}}`);
  }

  private addLane(): number {
    const lane = this.laneEnds.length;
    this.laneEnds.push(0);
    const name = lane === 0 ? `endpoint ${this.endpoint.rank}` : `endpoint ${this.endpoint.rank}, lane ${lane + 1}`;
    this.metadata('thread_name', { name }, lane);
    return lane;
  }

  private tid(lane: number): number {
    return this.endpoint.rank + lane * this.endpoint.size;
  }

  private metadata(name: string, args: object, lane = 0): void {
    this.write(JSON.stringify({ name, ph: 'M', ts: 0, pid: this.endpoint.processRank, tid: this.tid(lane), args }));
  }

  /** Every event is one line ending in a comma: a line without one was cut short by a dying process. */
  private write(event: string): void {
    this.pending.push(`${event},\n`);
    if (this.pending.length >= FLUSH_EVENTS) this.flush();
  }

  /** Appends the pending events to the part (synchronously: it also runs as the thread exits). */
  private flush(): void {
    if (this.descriptor === undefined || this.pending.length === 0) return;
    fs.writeSync(this.descriptor, this.pending.join(''));
    this.pending = [];
  }
}

/** A point-to-point receive that records itself in the trace file when it settles. */
export class TracedReceive extends MemberReceive {
  private readonly started: number;
  /** The envelope of the message, once it is here. */
  private arrived: { readonly source: number; readonly tag: number; readonly bytes: number } | undefined;
  private recorded = false;

  constructor(
    private readonly traceFile: TraceFile,
    route: Route,
    operation: string,
    owner: CallOwner,
    destination: number,
    source: number,
    tag: number,
    serializer: Serializer,
    delivery: Delivery,
    into: ArrayBufferView | undefined,
  ) {
    super(route, operation, owner, destination, source, tag, serializer, delivery, undefined, into);
    this.started = traceFile.now();
  }

  override complete(frame: Frame): void {
    this.arrived = { source: frame.source, tag: frame.tag, bytes: frame.size };
    // A message that cannot be decoded ends in fail(), which records it.
    super.complete(frame);
    this.record(undefined);
  }

  override fail(error: Error): void {
    super.fail(error);
    this.record(error);
  }

  private record(error: Error | undefined): void {
    if (this.recorded) return;
    this.recorded = true;
    const { source, tag, bytes } = this.arrived ?? { source: this.source, tag: this.tagOrAny, bytes: 0 };
    this.traceFile.received(this.started, { operation: this.operation, group: this.route.name, rank: this.destination, peer: source, tag, bytes }, error);
  }
}

/** Absolute microseconds of a performance.now() reading; whole, so that rounding keeps the order of events. */
function micros(milliseconds: number): number {
  return Math.round((performance.timeOrigin + milliseconds) * 1000);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
