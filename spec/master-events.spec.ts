import { expect } from 'chai';
import { closeAll, createMasters, fixture, printed, runGroup, spawnJob } from './harness.js';
import type { SpawnedProcess } from './harness.js';
import type { GroupFormedEvent } from '../src/index.js';
import { EXIT_ABORTED_ELSEWHERE } from '../src/runtime/threads.js';

/** The events an endpoint printed, in order: [name, payload]. */
function eventsOf(endpoint: SpawnedProcess): [string, Record<string, unknown>][] {
  return endpoint.stdout
    .split('\n')
    .filter((line) => line.startsWith('EVENT '))
    .map((line) => {
      const [, name = '', ...json] = line.split(' ');
      return [name, JSON.parse(json.join(' ')) as Record<string, unknown>];
    });
}

describe('master events (eventemitter3)', function () {
  it("tells the survivors' peerLost listeners which process was killed, once, and survives a listener that throws", async function () {
    const job = await spawnJob(3, fixture('lifecycle'), ['kill']);
    const victim = job[1] as SpawnedProcess;
    await printed(victim, 'ready');
    victim.child.kill('SIGKILL');
    const survivors = [job[0], job[2]] as SpawnedProcess[];
    const codes = await Promise.all(survivors.map((endpoint) => endpoint.exited));
    expect(codes, survivors.map((endpoint) => endpoint.stderr).join('\n')).to.deep.equal([0, 0]);
    survivors.forEach((endpoint, index) => {
      const rank = index === 0 ? 0 : 2;
      const events = eventsOf(endpoint);
      expect(events.map(([name]) => name)).to.deep.equal(['groupFormed', 'peerLost', 'close']);
      expect(events[0]?.[1]).to.deep.equal({ name: 'lifecycle', size: 3, ranks: [rank] });
      const lost = events[1]?.[1] as Record<string, unknown>;
      expect(lost).to.include({ process: 1, endpoint: 1 });
      expect(lost['reason']).to.match(/process 1 was lost/);
      expect(endpoint.stderr).to.contain(`ccjs: a 'peerLost' listener of process ${rank} threw: Error: a listener that throws`);
    });
  });

  it('tells every endpoint of an aborting job where the abort came from', async function () {
    const job = await spawnJob(2, fixture('lifecycle'), ['abort']);
    const codes = await Promise.all(job.map((endpoint) => endpoint.exited));
    // Process 1 failed; process 0 stopped because of it.
    expect(codes).to.deep.equal([EXIT_ABORTED_ELSEWHERE, 1]);
    for (const endpoint of job) {
      const aborts = eventsOf(endpoint).filter(([name]) => name === 'abort');
      expect(aborts, endpoint.stderr).to.have.length(1);
      expect(aborts[0]?.[1]).to.include({ origin: 1 });
      expect(aborts[0]?.[1]['message']).to.match(/member Watched #0 of process 1 \(groups: lifecycle\) failed: Error: boom in the victim/);
    }
  });

  it('tells groupFormed once per group, with the ranks of the endpoint\'s members', async function () {
    const masters = await createMasters(2);
    try {
      const formed: GroupFormedEvent[][] = masters.map(() => []);
      masters.forEach((master, index) => master.on('groupFormed', (event) => formed[index]?.push(event)));
      await runGroup(masters, [2, 1], 'formed', async () => undefined);
      await runGroup(masters, [1, 1], 'formed-again', async () => undefined);
      const summary = formed.map((events) => events.map(({ name, size, ranks, group }) => ({ name, size, ranks, active: group.size() === size })));
      expect(summary).to.deep.equal([
        [
          { name: 'formed', size: 3, ranks: [0, 1], active: true },
          { name: 'formed-again', size: 2, ranks: [0], active: true },
        ],
        [
          { name: 'formed', size: 3, ranks: [2], active: true },
          { name: 'formed-again', size: 2, ranks: [1], active: true },
        ],
      ]);
    } finally {
      await closeAll(masters);
    }
  });

  it('tells trace listeners the lines CCJS_TRACE reports, only when tracing is on', async function () {
    const printed: string[] = [];
    const traced = await createMasters(2, { trace: (line) => printed.push(line) });
    const quiet = await createMasters(2);
    try {
      const heard: string[] = [];
      traced[0]?.on('trace', (line) => heard.push(line));
      const silence: string[] = [];
      quiet[0]?.on('trace', (line) => silence.push(line));
      const printedBefore = printed.length;
      for (const masters of [traced, quiet]) await runGroup(masters, [1, 1], 'traced', (member, group) => member.broadcast(group, 'row', 0));
      expect(heard).to.have.length(1);
      expect(heard[0]).to.match(/^ccjs trace: group 'traced' rank 0: broadcast\(root 0\) [a-z0-9-]+, 3 bytes, 2 members(; shared-memory refused: .+)?$/);
      // The configured listener still gets every line, the other master's too.
      expect(printed.slice(printedBefore)).to.include(heard[0]);
      expect(silence).to.deep.equal([]);
    } finally {
      await Promise.all([closeAll(traced), closeAll(quiet)]);
    }
  });

  it("tells close listeners once the master's resources are released", async function () {
    const [master] = await createMasters(1);
    let closed = 0;
    master?.on('close', () => (closed += 1));
    await master?.close();
    await master?.close();
    expect(closed).to.equal(1);
  });
});
