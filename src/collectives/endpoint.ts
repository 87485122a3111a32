/**
 * What a collective call needs of the endpoint it runs in: the engine that moves its messages,
 * the serializer that encodes them, the selector that chooses its algorithm, and the timeline
 * that records it. The job runtime builds one per endpoint (ColGroupMaster.create); a member holds
 * its endpoint from the moment it is added to a group.
 */
import type { Engine } from '../engine/engine.js';
import type { Serializer } from '../serialization/serializer.js';
import type { AlgorithmChooser, CollectiveName, Selection } from './algorithm.js';

/** A collective call, as its event on the timeline describes it. */
export interface TracedCollective {
  readonly collective: CollectiveName;
  readonly group: string;
  readonly rank: number;
  /** -1 for collectives without a root. */
  readonly root: number;
  readonly reduction: string | undefined;
  /** Bytes per member, as the algorithm selection estimated them. */
  readonly bytes: number;
  readonly members: number;
}

/** Records the runs of a collective call's algorithm: the job runtime's trace file (CCJS_TRACE_FILE). */
export interface CollectiveRecorder {
  /** `selection` with its algorithm's runs recorded as `call`. */
  collective<C extends CollectiveName>(selection: Selection<C>, call: TracedCollective): Selection<C>;
}

/** One endpoint of the job (a process, or one of its worker threads), as its members' calls use it. */
export interface Endpoint {
  /** "process 2", or "endpoint 5 (process 2, thread 1)" in a job with threads, for messages. */
  readonly label: string;
  readonly engine: Engine;
  readonly serializer: Serializer;
  /** Chooses each collective call's algorithm. */
  readonly selector: AlgorithmChooser;
  /** The timeline this endpoint writes (CCJS_TRACE_FILE), if any. */
  readonly traceFile: CollectiveRecorder | undefined;
}
