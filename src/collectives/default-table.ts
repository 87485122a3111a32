/**
 * The built-in selection table: for each collective, rules tried in order (the first whose
 * maxBytes and maxMembers fit the call wins). `ccjtune` measures this machine and writes a table
 * of the same shape into ccjs.config.json under "collectives".
 */
import type { SelectionTable } from './selection.js';

export const DEFAULT_TABLE: SelectionTable = {
  barrier: [{ algorithm: 'hypercube' }],
  broadcast: [{ algorithm: 'binomial' }],
  reduce: [{ algorithm: 'binomial' }],
  allReduce: [{ algorithm: 'reduce-broadcast' }],
  scatter: [{ algorithm: 'binomial' }],
  gather: [{ algorithm: 'binomial' }],
  allGather: [{ algorithm: 'gather-broadcast' }],
  allToAll: [{ algorithm: 'flat' }],
  reduceScatter: [{ algorithm: 'reduce-scatter' }],
  scan: [{ algorithm: 'linear' }],
};
