/**
 * The built-in selection table: for each collective, rules tried in order (the first whose
 * maxBytes and maxMembers fit the call wins). `ccjtune` measures a machine and writes a table of
 * the same shape into ccjs.config.json under "collectives".
 *
 * Chosen from this project's own measurements: `ccjtune --members 2..4 --max-size 4194304
 * --repetitions 20` on the 2-core development machine (TCP between processes), where flat
 * algorithms win up to 4 members. Beyond the measured member counts the rules fall back to
 * algorithms whose cost grows with log(p) (binomial, recursive doubling, dissemination).
 * allReduce of large values was measured again on the messaging engine (ccjbench --collectives
 * allReduce --sizes 65536,1048576 --members 3,4, TCP and shm): Rabenseifner's halving and doubling
 * beat reduce-broadcast by 1.3-2x on both.
 * Broadcast and scatter do not depend on the message size by default, because non-roots may
 * pass null and so cannot know it (a size-dependent table needs same-sized placeholders).
 * A group that spans several hosts with several members on some host runs the hierarchical
 * variants (Open MPI's coll/han does the same): their levels then choose from the other rules, and
 * the network carries one message per host where a flat tree may carry one per member. A
 * non-commutative reduce or allReduce falls back to the first flat rule (they would not keep rank order).
 */
import type { SelectionTable } from './selection.js';

/** The rule that sends a collective over hosts to its hierarchical variant. */
const ACROSS_HOSTS = { minHosts: 2, minPerHost: 2, algorithm: 'hierarchical' } as const;

/**
 * Members of one host run every collective through their group's collective segment there
 * (segment/, Open MPI's coll/sm): one write and a flag per member, where a flat or tree algorithm
 * pays a message, and a wake-up, per step. Chosen only where the members can share one (the shm
 * addon built, every pair in-process or over shared memory; else the next rule, and CCJS_TRACE
 * says why); also the intra-host level of the hierarchical variants.
 */
const ONE_HOST = { maxHosts: 1, algorithm: 'shared-memory' } as const;

/**
 * Between three or more members one per host (a hierarchical allReduce's leaders, or a group
 * spread so) the binomial tree, which crosses the network least: the one-host rules would pick
 * exchanges there (Rabenseifner at 1 MiB) that send 6 messages between 3 hosts where it sends 4.
 * Two members exchange (the rule before this one; minHosts 3 keeps this rule off them wherever a
 * tuned table puts it): one message each way, as the tree's two, in one step instead of its two.
 * Over 2 namespace hosts (bench/hosts.ts's jobs, spinning off on the shared cores) that exchange
 * took 0.3-0.4 times as long as the tree flat at 8 B and 0.6-0.7 times at 1 MiB; as a hierarchical
 * allReduce's leaders' level, 0.6 times at 8 B and about as long at 1 MiB.
 */
const ONE_PER_HOST_ALLREDUCE = { minHosts: 3, maxPerHost: 1, algorithm: 'binomial' } as const;

export const DEFAULT_TABLE: SelectionTable = {
  barrier: [ACROSS_HOSTS, ONE_HOST, { maxMembers: 2, algorithm: 'hypercube' }, { algorithm: 'dissemination' }],
  broadcast: [ACROSS_HOSTS, ONE_HOST, { maxMembers: 2, algorithm: 'binomial' }, { maxMembers: 4, algorithm: 'four-ary' }, { algorithm: 'binomial' }],
  reduce: [ACROSS_HOSTS, ONE_HOST, { maxMembers: 3, algorithm: 'mst' }, { maxMembers: 4, maxBytes: 8192, algorithm: 'flat-blocking' }, { algorithm: 'binomial' }],
  allReduce: [ACROSS_HOSTS, ONE_HOST, { maxMembers: 2, algorithm: 'bde-blocking' }, ONE_PER_HOST_ALLREDUCE, { maxBytes: 32768, algorithm: 'bde-nonblocking' }, { algorithm: 'rabenseifner' }],
  scatter: [ACROSS_HOSTS, ONE_HOST, { maxMembers: 4, algorithm: 'flat-nonblocking' }, { algorithm: 'binomial' }],
  gather: [ACROSS_HOSTS, ONE_HOST, { maxMembers: 4, algorithm: 'flat-nonblocking-1' }, { algorithm: 'binomial' }],
  allGather: [ACROSS_HOSTS, ONE_HOST, { maxMembers: 2, algorithm: 'bucket-nonblocking' }, { algorithm: 'recursive-doubling' }],
  allToAll: [ONE_HOST, { maxMembers: 2, algorithm: 'flat-nonblocking-2' }, { algorithm: 'flat' }],
  reduceScatter: [ONE_HOST, { maxBytes: 128, algorithm: 'bde-blocking' }, { algorithm: 'bucket-blocking' }],
  scan: [ONE_HOST, { maxMembers: 3, algorithm: 'recursive-doubling' }, { maxMembers: 4, maxBytes: 32, algorithm: 'linear' }, { maxMembers: 4, algorithm: 'flat-nonblocking' }, { algorithm: 'recursive-doubling' }],
};
