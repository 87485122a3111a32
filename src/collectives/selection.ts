/**
 * Which algorithm a collective call runs: the decision rules, kept apart from the algorithm
 * bodies as in Open MPI's coll/tuned (Taboada et al. 2010, section 4.3). Precedence: a per-call `{ algorithm }`,
 * then the group's override, then CCJS_ALGORITHMS, then the config file's `collectives` table,
 * then the built-in table. A table lists rules per collective, the first that fits the call's
 * message size, member count and layout over hosts wins; a non-commutative reduction only runs
 * algorithms that combine in rank order. The levels of a hierarchical algorithm choose their
 * flat algorithms from the same table (selectLevel). Choosing costs a few comparisons per call.
 */
import { ALGORITHMS, COLLECTIVES } from './algorithms.js';
import type { AlgorithmName } from './algorithms.js';
import type { Algorithm, AlgorithmChooser, AlgorithmsOf, CallShape, CollectiveName, Layout, Selection } from './algorithm.js';
import { DEFAULT_TABLE } from './default-table.js';
import { CollectiveMismatchError, ConfigError } from '../base/errors.js';

/**
 * A rule fits calls with at most `maxBytes` per member and at most `maxMembers` members, on a
 * number of hosts within [minHosts, maxHosts], with a most-populated host holding a number of the
 * group's members within [minPerHost, maxPerHost]. Every bound is optional (absent: any).
 */
export interface SelectionRule {
  /** The largest message, in bytes per member, the rule fits (any size when absent). */
  readonly maxBytes?: number;
  /** The largest group the rule fits (any size when absent). */
  readonly maxMembers?: number;
  /** The fewest hosts the group's members may span. */
  readonly minHosts?: number;
  /** The most hosts the group's members may span. */
  readonly maxHosts?: number;
  /** The fewest members the group may have on its most populated host. */
  readonly minPerHost?: number;
  /** The most members the group may have on its most populated host. */
  readonly maxPerHost?: number;
  /** The algorithm to run (see {@link AlgorithmName}). */
  readonly algorithm: string;
}

const BOUNDS = ['maxBytes', 'maxMembers', 'minHosts', 'maxHosts', 'minPerHost', 'maxPerHost'] as const;

/** True when `rule` keys on where the members are (hosts, members per host). */
export function keysOnTopology(rule: SelectionRule): boolean {
  return rule.minHosts !== undefined || rule.maxHosts !== undefined || rule.minPerHost !== undefined || rule.maxPerHost !== undefined;
}

/** Rules per collective (the config file's `collectives`); the first rule that fits a call wins. */
export type SelectionTable = { readonly [C in CollectiveName]?: readonly SelectionRule[] };

/** `collective`'s algorithm called `name`, if it has one. */
function findAlgorithm<C extends CollectiveName>(collective: C, name: string): Algorithm<C> | undefined {
  return (ALGORITHMS[collective] as Readonly<Record<string, Algorithm<C>>>)[name];
}

function algorithmOf<C extends CollectiveName>(collective: C, name: string, source: string): Algorithm<C> {
  const algorithm = findAlgorithm(collective, name);
  if (algorithm === undefined) {
    throw new ConfigError(`${source}: '${name}' is not an algorithm of ${collective}; valid: ${Object.keys(ALGORITHMS[collective]).join(', ')}`);
  }
  return algorithm;
}

/** ConfigError naming the valid algorithms unless `name` is one of `collective`'s. */
export function checkAlgorithmName(collective: CollectiveName, name: string, source: string): void {
  if (!(COLLECTIVES as string[]).includes(collective)) throw new ConfigError(`${source}: unknown collective '${collective}'; valid: ${COLLECTIVES.join(', ')}`);
  algorithmOf(collective, name, source);
}

/** `name`, read at run time, as one of `collective`'s algorithm names; ConfigError naming the valid ones if it is not. */
export function algorithmName<C extends CollectiveName>(collective: C, name: string, source: string): AlgorithmName<C> {
  checkAlgorithmName(collective, name, source);
  return name as AlgorithmName<C>;
}

/** Checks a selection table (from a config file or the tuner), naming what is wrong. */
export function checkTable(table: unknown, source: string): SelectionTable {
  if (typeof table !== 'object' || table === null || Array.isArray(table)) throw new ConfigError(`${source} must be an object of collective → rules`);
  for (const [collective, rules] of Object.entries(table)) {
    if (!(COLLECTIVES as string[]).includes(collective)) throw new ConfigError(`${source}: unknown collective '${collective}'; valid: ${COLLECTIVES.join(', ')}`);
    if (!Array.isArray(rules) || rules.length === 0) throw new ConfigError(`${source}.${collective} must be a non-empty array of rules`);
    rules.forEach((rule: unknown, index) => {
      const where = `${source}.${collective}[${index}]`;
      if (typeof rule !== 'object' || rule === null) throw new ConfigError(`${where} must be an object like { "maxBytes": 32768, "algorithm": "binomial" }`);
      const { algorithm, ...bounds } = rule as Record<string, unknown>;
      const unknown = Object.keys(bounds).find((key) => !(BOUNDS as readonly string[]).includes(key));
      if (unknown !== undefined) throw new ConfigError(`${where}: unknown key '${unknown}'; valid keys: ${BOUNDS.join(', ')}, algorithm`);
      if (typeof algorithm !== 'string') throw new ConfigError(`${where}.algorithm must be a string`);
      algorithmOf(collective as CollectiveName, algorithm, where);
      for (const [key, value] of Object.entries(bounds)) {
        if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) throw new ConfigError(`${where}.${key} must be a non-negative integer, got ${JSON.stringify(value)}`);
      }
    });
  }
  return table as SelectionTable;
}

/** CCJS_ALGORITHMS='allReduce=ring,broadcast=mst': one algorithm per collective, for experiments. */
export function parseForcedAlgorithms(text: string | undefined): Partial<Record<CollectiveName, string>> {
  const forced: Partial<Record<CollectiveName, string>> = {};
  if (text === undefined || text.trim() === '') return forced;
  for (const entry of text.split(',')) {
    const [collective, name] = entry.split('=').map((part) => part.trim());
    if (!(COLLECTIVES as string[]).includes(collective) || name === undefined) {
      throw new ConfigError(`CCJS_ALGORITHMS entry '${entry}' is not <collective>=<algorithm> with a collective among ${COLLECTIVES.join(', ')}`);
    }
    algorithmOf(collective as CollectiveName, name, 'CCJS_ALGORITHMS');
    forced[collective as CollectiveName] = name;
  }
  return forced;
}

/** The decision rules: the algorithm of each call, from the call, the group's setting, CCJS_ALGORITHMS and the table (README, "Algorithms and their selection"). */
export class Selector implements AlgorithmChooser {
  private readonly table: SelectionTable;

  constructor(
    configTable: SelectionTable | undefined,
    private readonly forced: Partial<Record<CollectiveName, string>>,
    /** CCJS_TRACE: print each call's choice, like Open MPI's coll_base_verbose. */
    readonly trace: ((line: string) => void) | undefined,
  ) {
    this.table = { ...DEFAULT_TABLE, ...configTable };
  }

  select<C extends CollectiveName>(collective: C, call: CallShape): Selection<C> {
    // Table names were checked when the table was loaded; only a requested name can be unknown.
    const asked = call.requested ?? this.forced[collective];
    // A collective segment serves one host: asked for over several, the table chooses instead (every member sees the same layout).
    const across = asked !== undefined && (call.layout?.hosts ?? 1) > 1 && findAlgorithm(collective, asked)?.sharedMemory === true;
    const chosen = across ? undefined : asked;
    const table = chosen === undefined ? this.fromTable(collective, call, () => true) : undefined;
    const name = chosen ?? (table as TableChoice).name;
    const refused = across ? `${asked} refused: the members are on ${call.layout?.hosts} hosts, and a collective segment serves one` : table?.refused;
    const algorithm = algorithmOf(collective, name, call.requested !== undefined ? `${collective} option 'algorithm'` : 'CCJS_ALGORITHMS');
    if (call.commutative || algorithm.keepsRankOrder) return { name, algorithm, refused };
    // Operands must combine in rank order: fall back to the table's first algorithm that does.
    const fits = (candidate: string) => {
      const fallback = algorithmOf(collective, candidate, 'table');
      return fallback.keepsRankOrder && (fallback.sharedMemory !== true || call.sharedMemory === true);
    };
    const ordered = this.rules(collective).map((rule) => rule.algorithm).find(fits);
    const fallback = ordered ?? Object.keys(ALGORITHMS[collective]).find(fits) ?? name;
    return { name: fallback, algorithm: algorithmOf(collective, fallback, 'table'), refused: `${name} refused: it does not combine in rank order, which a non-commutative reduction needs` };
  }

  /**
   * The flat algorithm for one level of a hierarchical call (the members of one host, or one
   * leader per host): the table's first fitting rule that names a flat algorithm (one that keeps
   * rank order for a non-commutative reduction), whatever a per-call choice or CCJS_ALGORITHMS
   * asked for the call as a whole.
   */
  selectLevel<C extends CollectiveName>(collective: C, call: CallShape): Selection<C> {
    const { name, refused } = this.fromTable(collective, call, (algorithm) => algorithm.hierarchical !== true && (call.commutative || algorithm.keepsRankOrder));
    return { name, algorithm: algorithmOf(collective, name, 'table'), refused };
  }

  /**
   * True when the table's choice for `collective` on `members` members laid out as `layout` depends
   * on the message size (which a non-root of broadcast or scatter may not know: it then takes the root's choice).
   */
  dependsOnSize(collective: CollectiveName, members: number, layout: Layout, requested: string | undefined, sharedMemory?: true | string): boolean {
    if (requested !== undefined || this.forced[collective] !== undefined) return false;
    const passable = (rule: SelectionRule) => sharedMemory === true || algorithmOf(collective, rule.algorithm, 'table').sharedMemory !== true;
    const rule = this.rules(collective).find((candidate) => fitsPlace(candidate, members, layout) && passable(candidate));
    return rule?.maxBytes !== undefined;
  }

  /** The algorithm named by the root's messages (CollectiveMismatchError if they name none of `collective`'s). */
  learned<C extends CollectiveName>(collective: C, name: string | undefined): Selection<C> {
    const algorithm = name === undefined ? undefined : findAlgorithm(collective, name);
    if (name === undefined || algorithm === undefined) throw new CollectiveMismatchError(`${collective}: the root's messages name no algorithm of ${collective}; members must call collectives in the same order`);
    return { name, algorithm };
  }

  private rules(collective: CollectiveName): readonly SelectionRule[] {
    return this.table[collective] ?? [];
  }

  /**
   * The first fitting rule's algorithm that `accept`s, else the first such algorithm of
   * `collective` (never one through a collective segment the call's members cannot share; the
   * rule that named one says why it was passed over).
   */
  private fromTable<C extends CollectiveName>(collective: C, call: CallShape, accept: (algorithm: Algorithm<C>) => boolean): TableChoice {
    const layout = call.layout ?? { hosts: 1, perHost: call.members };
    const shares = call.sharedMemory === true;
    let refused: string | undefined;
    for (const rule of this.rules(collective)) {
      const fitsSize = rule.maxBytes === undefined || (call.bytes !== undefined && call.bytes <= rule.maxBytes);
      const algorithm = algorithmOf(collective, rule.algorithm, 'table');
      if (!fitsSize || !fitsPlace(rule, call.members, layout) || !accept(algorithm)) continue;
      if (algorithm.sharedMemory === true && !shares) {
        refused ??= `${rule.algorithm} refused: ${call.sharedMemory ?? 'the call did not say whether its members share memory'}`;
        continue;
      }
      return { name: rule.algorithm, refused };
    }
    const name = Object.entries(ALGORITHMS[collective] as AlgorithmsOf<C>).find(([, algorithm]) => accept(algorithm) && (shares || algorithm.sharedMemory !== true))?.[0] ?? Object.keys(ALGORITHMS[collective])[0];
    return { name: name as string, refused };
  }
}

/** A table's choice, and why a rule before it was passed over (a collective segment the members cannot share). */
interface TableChoice {
  readonly name: string;
  readonly refused: string | undefined;
}

/** True when `rule`'s bounds on members and hosts fit a group of `members` laid out as `layout`. */
function fitsPlace(rule: SelectionRule, members: number, layout: Layout): boolean {
  return (
    (rule.maxMembers === undefined || members <= rule.maxMembers) &&
    (rule.minHosts === undefined || layout.hosts >= rule.minHosts) &&
    (rule.maxHosts === undefined || layout.hosts <= rule.maxHosts) &&
    (rule.minPerHost === undefined || layout.perHost >= rule.minPerHost) &&
    (rule.maxPerHost === undefined || layout.perHost <= rule.maxPerHost)
  );
}
