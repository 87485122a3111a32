/**
 * Whether members can share a collective segment (segment.ts): the selection asks it of each call
 * (and each level of a hierarchical one), so it is computed once per group and set of ranks.
 */
import type { Engine } from '../../engine/engine.js';
import { shmNative } from '../../../transport/shm/native.js';

/** What this needs of a group: where its ranks are (CollectiveGroup has it). */
interface Placed {
  readonly hosts: readonly string[];
  readonly route: { readonly endpoints: Int32Array };
}

/** Why a segment cannot be had in this process, or undefined when it can. */
export function segmentRefusal(): string | undefined {
  const native = shmNative();
  return typeof native === 'string' ? `the shared-memory addon is not available (${native})` : undefined;
}

/** Whether members share memory, by group, then by the members' group ranks ("all": the whole group). */
const sharing = new WeakMap<object, Map<string, true | string>>();

/**
 * true where the members of `group` at `ranks` (absent: all of them) can share a collective
 * segment, else why not: they must be on one host, the shm addon built, and `engine` must reach
 * each of them in-process or over shared memory (a pair over TCP on one host may not share
 * /dev/shm). Every member of a job configured alike comes to the same answer. Asked on every
 * call, so the whole group's answer is found without making a key.
 */
export function sharesMemory(group: Placed, ranks: readonly number[] | undefined, engine: Engine): true | string {
  let byGroup = sharing.get(group);
  if (byGroup === undefined) {
    byGroup = new Map();
    sharing.set(group, byGroup);
  }
  const key = ranks === undefined ? 'all' : ranks.join(',');
  let answer = byGroup.get(key);
  if (answer === undefined) {
    answer = sharingOf(group, ranks ?? Array.from(group.hosts, (_, rank) => rank), engine);
    byGroup.set(key, answer);
  }
  return answer;
}

function sharingOf(group: Placed, ranks: readonly number[], engine: Engine): true | string {
  const hosts = new Set(ranks.map((rank) => group.hosts[rank]));
  if (hosts.size > 1) return `the members are on ${hosts.size} hosts`;
  const refusal = segmentRefusal();
  if (refusal !== undefined) return refusal;
  for (const rank of ranks) {
    const endpoint = group.route.endpoints[rank] as number;
    if (endpoint === engine.rank) continue;
    const device = engine.deviceOf(endpoint)?.name;
    if (device !== 'local' && device !== 'shm') return `rank ${rank} is reached over ${device ?? 'no device'}, not shared memory`;
  }
  return true;
}
