/** The scenarios a test job's endpoints can run (spec/fixtures/scenario.ts), by name. */
import type { ColGroupMaster } from '../../src/index.js';
import { algorithms } from './algorithms.js';
import { broadcastCounts, defaultChoice, hierarchicalVariants } from './hierarchical.js';
import { onePerEndpoint, runHere } from './members.js';
import { orderedStream, payloadExchange, payloadsFor, receiveInto, taskFarm } from './p2p.js';
import { forgottenAwait, stalledExchange } from './diagnostics.js';
import { blockedReceiver, intoOneBuffer, largeMessages, largeUntilTheEnd, lentOrCopied, lentUnexpected, receivedAfterClose, sizesAroundBoundaries, stoppedSender } from './rings.js';
import { flood } from './floods.js';
import { collectiveSegment, defaultCounts } from './collective-segment.js';
import { COLLECTIVE_CHECKS } from '../collective-checks.js';
import { MAX_MEMBERS } from '../exercise.js';
import { spread } from './members.js';
import { progressEngine } from '../../src/engine/progress.js';

export type Scenario = (master: ColGroupMaster, args: Record<string, unknown>) => Promise<unknown>;

let counter = 0;
const name = (base: string) => `${base}-${counter++}`;

export const scenarios: Record<string, Scenario> = {
  algorithms,
  collectiveSegment,
  defaultCounts,
  hierarchicalVariants,
  broadcastCounts,
  defaultChoice,
  /** The collectives suite's checks (every payload kind, root and member count 1..9) with the built-in selection. */
  collectives: async (master) => {
    const done: string[] = [];
    for (let size = 1; size <= MAX_MEMBERS; size += 1) {
      for (const check of COLLECTIVE_CHECKS) {
        await runHere(master, spread(size, master.size), name('collectives'), (member, group, rank) => check.body(member, group, rank, size));
        done.push(`${check.name} on ${size}`);
      }
    }
    return done;
  },
  /** Every payload between pairs of endpoints' members (args.v8: the v8 serializer's payloads too). */
  payloads: (master, args) => runHere(master, onePerEndpoint(master), name('payloads'), payloadExchange(payloadsFor(args['v8'] === true))),
  /** 10,000 messages per neighbour, tags and ANY_TAG interleaved; args.perEndpoint members per endpoint. */
  /** Binary messages received into the receivers' buffers, and the errors of ones that cannot be. */
  receiveInto: (master) => runHere(master, onePerEndpoint(master), name('receiveInto'), receiveInto()),
  ordering: (master, args) => runHere(master, Array.from({ length: master.size }, () => Number(args['perEndpoint'] ?? 1)), name('ordering'), orderedStream(Number(args['count'] ?? 10_000))),
  /** Rank 0 returns from run() with a receive still pending. */
  forgotten: (master) => runHere(master, onePerEndpoint(master), name('forgotten'), forgottenAwait),
  /** Every member waits for a message that comes only after args.stallMs (long enough for the watchdog). */
  stall: (master, args) => runHere(master, onePerEndpoint(master), name('stall'), stalledExchange(Number(args['stallMs'] ?? 1500))),
  /** Endpoint 0 floods endpoint 1 with args.bytes while endpoint 1's thread is blocked for args.blockMs. */
  blockedReceiver: (master, args) => runHere(master, onePerEndpoint(master), name('blocked'), blockedReceiver(master, Number(args['bytes']), Number(args['blockMs']))),
  /** args.count messages from endpoint 0 to 1 of sizes around the rings' and protocols' boundaries. */
  boundaries: (master, args) => runHere(master, onePerEndpoint(master), name('boundaries'), sizesAroundBoundaries(master, Number(args['count']))),
  /** args.count messages of 256 KiB to 4 MiB from endpoint 0 to 1. */
  largeMessages: (master, args) => runHere(master, onePerEndpoint(master), name('largeMessages'), largeMessages(master, Number(args['count']))),
  lentUnexpected: (master, args) => runHere(master, onePerEndpoint(master), name('lentUnexpected'), lentUnexpected(master, Number(args['count']), Number(args['bytes']), Number(args['blockMs']))),
  /** args.count sendAsync calls of args.bytes from endpoint 0 to 1, which waits for each, then one it does not wait for. */
  lentOrCopied: (master, args) => runHere(master, onePerEndpoint(master), name('lentOrCopied'), lentOrCopied(master, Number(args['count']), Number(args['bytes']))),
  /** args.count sendSync then sendAsync messages of args.bytes from endpoint 0 to 1, received into one buffer. */
  intoOneBuffer: (master, args) => runHere(master, onePerEndpoint(master), name('intoOneBuffer'), intoOneBuffer(master, Number(args['count']), Number(args['bytes']))),
  /** Endpoint 0 sends args.count messages of args.bytes and closes; endpoint 1 receives them after args.sleepMs. */
  receivedAfterClose: (master, args) => runHere(master, onePerEndpoint(master), name('receivedAfterClose'), receivedAfterClose(Number(args['count']), Number(args['bytes']), Number(args['sleepMs']))),
  /** Endpoint 0 sends 16 MiB messages to endpoint 1 while a shell stops and continues it. */
  stoppedSender: (master) => runHere(master, onePerEndpoint(master), name('stoppedSender'), stoppedSender(master)),
  /** args.calls allReduces of 1 MiB, then a last 1 MiB message around a ring, and the job ends. */
  largeUntilTheEnd: (master, args) => runHere(master, onePerEndpoint(master), name('largeUntilTheEnd'), largeUntilTheEnd(Number(args['calls']))),
  /** Endpoint 0 sends args.count messages of args.bytes (0: small objects) to endpoint 1, which sleeps args.sleepMs first; each reports its RSS. */
  flood: (master, args) => runHere(master, onePerEndpoint(master), name('flood'), flood(master, Number(args['count']), Number(args['bytes']), Number(args['sleepMs']))),
  /** This endpoint's device table. */
  devices: async (master) => master.describe(),
  /** Whether a waiting call of this endpoint may spin. */
  spinning: async () => progressEngine.spinning,
  /** A task farm over ANY_SOURCE/ANY_TAG with probe. */
  farm: (master, args) => runHere(master, Array.from({ length: master.size }, () => Number(args['perEndpoint'] ?? 1)), name('farm'), taskFarm(Number(args['tasks'] ?? 200))),
};
