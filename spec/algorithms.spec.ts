/**
 * Every algorithm of every collective, forced by name, against the sequential reference: on 1..9
 * members (every root where there is one), for a typed array and an object payload, in one
 * process and over a mix of in-process and TCP pairs (two processes of 2-3 members). The same
 * checks run over threads and processes in spec/threads.spec.ts.
 */
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import { mastersForSuite, runGroup } from './harness.js';
import { MAX_MEMBERS, PAYLOADS, exercise, type PayloadKind } from './exercise.js';

for (const placement of [
  { name: 'in one process', processes: 1, spread: (n: number) => [n] },
  { name: 'mixing in-process and TCP pairs', processes: 2, spread: (n: number) => [Math.ceil(n / 2), Math.floor(n / 2)] },
]) {
  describe(`every algorithm ${placement.name}`, function () {
    const masters = mastersForSuite(placement.processes);
    let counter = 0;
    for (const collective of COLLECTIVES) {
      for (const algorithm of Object.keys(ALGORITHMS[collective])) {
        it(`${collective} ${algorithm} on 1..${MAX_MEMBERS} members`, async function () {
          for (let size = 1; size <= MAX_MEMBERS; size += 1) {
            const perProcess = placement.spread(size).filter((count, process) => process === 0 || count > 0);
            await runGroup(masters().slice(0, perProcess.length), perProcess, `algorithms-${counter++}`, async (member, group, rank) => {
              for (const kind of Object.keys(PAYLOADS) as PayloadKind[]) await exercise(collective, algorithm, member, group, rank, kind);
            });
          }
        });
      }
    }
  });
}
