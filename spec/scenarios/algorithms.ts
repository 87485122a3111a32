/** Every algorithm of the collectives named in `args.collectives`, on 1..9 members spread over the job's endpoints. */
import type { ColGroupMaster } from '../../src/index.js';
import { ALGORITHMS } from '../../src/collectives/algorithms.js';
import type { CollectiveName } from '../../src/collectives/algorithm.js';
import { MAX_MEMBERS, PAYLOADS, exercise, type PayloadKind } from '../exercise.js';
import { runHere, spread } from './members.js';

export async function algorithms(master: ColGroupMaster, args: Record<string, unknown>): Promise<string[]> {
  const collectives = args['collectives'] as CollectiveName[];
  const done: string[] = [];
  let counter = 0;
  for (const collective of collectives) {
    for (const algorithm of Object.keys(ALGORITHMS[collective])) {
      for (let size = 1; size <= MAX_MEMBERS; size += 1) {
        await runHere(master, spread(size, master.size), `algorithms-${counter++}`, async (member, group, rank) => {
          for (const kind of Object.keys(PAYLOADS) as PayloadKind[]) await exercise(collective, algorithm, member, group, rank, kind);
        });
      }
      done.push(`${collective} ${algorithm}`);
    }
  }
  return done;
}
