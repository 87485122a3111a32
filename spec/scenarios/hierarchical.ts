/**
 * Hierarchical collectives on a job whose processes claim different hosts (create() option
 * `host` per process, as CCJS_HOST would): every hierarchical variant checked against the
 * sequential reference, the collectives suite's checks with the built-in selection, and the
 * messages one broadcast sends, counted at each endpoint.
 */
import type { ColGroupMaster } from '../../src/index.js';
import type { CollectiveName } from '../../src/collectives/algorithm.js';
import { PAYLOADS, exercise, type PayloadKind } from '../exercise.js';
import { COLLECTIVE_CHECKS } from '../collective-checks.js';
import { runHere, spread } from './members.js';

export const HIERARCHICAL: readonly CollectiveName[] = ['barrier', 'broadcast', 'reduce', 'allReduce', 'gather', 'allGather', 'scatter'];

let counter = 0;

/** Each hierarchical variant, then the suite's checks, on each of `args.sizes` members spread over the endpoints. */
export async function hierarchicalVariants(master: ColGroupMaster, args: Record<string, unknown>): Promise<string[]> {
  const done: string[] = [];
  for (const size of args['sizes'] as number[]) {
    await runHere(master, spread(size, master.size), `hierarchical-${counter++}`, async (member, group, rank) => {
      for (const collective of HIERARCHICAL) {
        for (const kind of Object.keys(PAYLOADS) as PayloadKind[]) await exercise(collective, 'hierarchical', member, group, rank, kind);
      }
      for (const check of COLLECTIVE_CHECKS) await check.body(member, group, rank, size);
    });
    done.push(`${size} members`);
  }
  return done;
}

/** What one broadcast of `args.algorithm` from `args.root` sent from this endpoint, one member per endpoint. */
export async function broadcastCounts(master: ColGroupMaster, args: Record<string, unknown>): Promise<{ host: string; otherHost: number; sameHost: number }> {
  const [result] = await runHere(master, spread(master.size, master.size), `counts-${counter++}`, async (member, group, rank) => {
    const root = Number(args['root']);
    await member.barrier(group, { algorithm: 'dissemination' });
    const before = master.messageCounts();
    await member.broadcast(group, rank === root ? new Float64Array(1024) : null, root, { algorithm: args['algorithm'] as 'binomial' });
    const after = master.messageCounts();
    return { host: master.host, otherHost: after.otherHost.messages - before.otherHost.messages, sameHost: after.sameHost.messages - before.sameHost.messages };
  });
  return result as { host: string; otherHost: number; sameHost: number };
}

/** A broadcast and an allReduce with the built-in selection (run under CCJS_TRACE). */
export async function defaultChoice(master: ColGroupMaster): Promise<number> {
  const [sum] = await runHere(master, spread(master.size, master.size), `choice-${counter++}`, async (member, group, rank) => {
    await member.broadcast(group, rank === 0 ? 'hello' : null, 0);
    return member.allReduce(group, rank, (a: number, b: number) => a + b);
  });
  return sum as number;
}
