/**
 * The shortcut for SPMD scripts (mpi4py's `comm = MPI.COMM_WORLD`): `await world()` creates the
 * master, adds one member per endpoint to the group 'world' of every endpoint of the job, and
 * hands back that member, ready for every call. The CCJ classes underneath are the usual ones.
 */
import { ColGroupMaster } from './col-group-master.js';
import type { ColGroup } from './col-group.js';
import { ColMember } from './col-member.js';
import type { MasterOptions } from '../src/runtime/config.js';
import { GroupError } from '../src/base/errors.js';

/** The name of the group {@link world} forms. */
export const WORLD_GROUP = 'world';

/**
 * The member {@link world} hands back: this endpoint's member of the group of every endpoint of
 * the job. Its calls are ColMember's, with {@link WorldMember.group} as their group; the script
 * itself is its thread of control (it is never started), and {@link WorldMember.close} ends it.
 */
export class WorldMember extends ColMember {
  #group: ColGroup | undefined;

  /** @internal Made by {@link world}. */
  constructor(
    /** The endpoint's master, for what the member does not offer (events, more groups). */
    readonly master: ColGroupMaster,
  ) {
    super();
  }

  /** The group of every endpoint of the job ('world'). */
  get group(): ColGroup {
    if (this.#group === undefined) throw new GroupError(`the world group is not formed yet: await world() first`);
    return this.#group;
  }

  /** This member's rank in {@link WorldMember.group}: 0 .. size - 1, the endpoint's rank in the job. */
  get rank(): number {
    return this.group.getRank(this);
  }

  /** The number of members of {@link WorldMember.group}: the job's endpoints (processes × threads). */
  get size(): number {
    return this.group.size();
  }

  /** @internal {@link world} sets it once the group has formed. */
  formed(group: ColGroup): void {
    this.#group = group;
  }

  /** The script is the member's code: there is nothing else to run. */
  override async run(): Promise<void> {}

  /**
   * Ends the member and closes the master (MPI_Finalize): it flushes what was sent and says
   * goodbye, so that the process exits. Every endpoint calls it at the end of the script;
   * idempotent.
   */
  async close(): Promise<void> {
    await this.done();
    await this.master.close();
  }
}

/**
 * Joins the job as an SPMD script: creates this endpoint's {@link ColGroupMaster} (with
 * `options`), adds one {@link WorldMember} to the group 'world', and resolves once every endpoint
 * of the job has joined it.
 *
 * @example
 * ```ts
 * import { world, Reductions } from 'ccjs';
 * const comm = await world();
 * await comm.sendAsync(comm.group, `hello from ${comm.rank}`, (comm.rank + 1) % comm.size);
 * const message = await comm.receive(comm.group, (comm.rank + comm.size - 1) % comm.size);
 * const total = await comm.allReduce(comm.group, comm.rank, Reductions.SUM);
 * await comm.close();
 * ```
 *
 * @throws the errors of {@link ColGroupMaster.create} and {@link ColGroupMaster.getGroup} (rejects).
 */
export async function world(options: MasterOptions = {}): Promise<WorldMember> {
  const master = await ColGroupMaster.create(options);
  const member = new WorldMember(master);
  master.addMember(WORLD_GROUP, member);
  member.formed(await master.getGroup(WORLD_GROUP, master.size));
  return member;
}
