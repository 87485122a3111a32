import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ccjrun, closeAll, createMasters, distRoot, fixture, printed, run, runGroup, runScenario, spawnJob } from './harness.js';
import type { SpawnedProcess } from './harness.js';
import { ColGroupMaster, ConfigError, Reductions } from '../src/index.js';
import { COLLECTIVES } from '../src/collectives/algorithms.js';
import { timelineSvg } from '../bench/trace-svg.js';
import { blockOwner } from '../examples/common.js';
import type { TraceEvent } from '../src/runtime/trace-file.js';


/**
 * Reads a trace file and checks what every viewer needs: JSON with a traceEvents array, every
 * event with ph/ts/pid/tid/name, complete events with dur >= 0 on named tracks, nesting properly
 * on each track. Returns the events.
 */
function readTrace(file: string): TraceEvent[] {
  const trace = JSON.parse(fs.readFileSync(file, 'utf8')) as { traceEvents: TraceEvent[] };
  expect(trace.traceEvents).to.be.an('array');
  const events = trace.traceEvents;
  for (const event of events) {
    expect(event.ph, JSON.stringify(event)).to.be.oneOf(['X', 'M']);
    expect(event.name, JSON.stringify(event)).to.be.a('string').and.not.equal('');
    for (const key of ['ts', 'pid', 'tid'] as const) expect(event[key], JSON.stringify(event)).to.be.a('number');
    if (event.ph === 'X') expect(event.dur, JSON.stringify(event)).to.be.a('number').and.at.least(0);
  }
  const named = new Set(events.filter((event) => event.name === 'thread_name').map((event) => `${event.pid}/${event.tid}`));
  const complete = events.filter((event) => event.ph === 'X');
  for (const event of complete) expect(named, `the track of ${JSON.stringify(event)}`).to.include(`${event.pid}/${event.tid}`);
  for (const track of named) {
    const open: number[] = [];
    const onTrack = complete.filter((event) => `${event.pid}/${event.tid}` === track).sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
    for (const event of onTrack) {
      while (open.length > 0 && (open.at(-1) as number) <= event.ts) open.pop();
      const end = event.ts + (event.dur ?? 0);
      if (open.length > 0) expect(end, `${event.name} on track ${track} ends after the event it starts in`).to.be.at.most(open.at(-1) as number);
      open.push(end);
    }
  }
  return events;
}

function tracks(events: readonly TraceEvent[]): string[] {
  return events.filter((event) => event.name === 'thread_name').map((event) => `${event.pid}/${event.tid} ${String(event.args['name'])}`);
}

describe('trace file (CCJS_TRACE_FILE)', function () {
  let directory = '';
  beforeEach(function () {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-trace-'));
  });
  afterEach(function () {
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it("writes one Chrome trace of a ccjrun job's collectives: a track per process, calls named with their algorithm, on one clock", async function () {
    const file = path.join(directory, 'asp.json');
    const startedAt = Date.now();
    const result = await run(process.execPath, [ccjrun, '-n', '3', path.join(distRoot, 'examples', 'asp.js'), '40', '--check'], { CCJS_TRACE_FILE: file });
    const endedAt = Date.now();
    expect(result.code, result.stderr).to.equal(0);
    expect(fs.readdirSync(directory), 'the parts are joined and removed').to.deep.equal(['asp.json']);
    const events = readTrace(file);
    expect(tracks(events)).to.deep.equal(['0/0 endpoint 0', '1/1 endpoint 1', '2/2 endpoint 2']);
    const processes = events.filter((event) => event.name === 'process_name').map((event) => [event.pid, event.args['name']]);
    expect(processes.map(([pid]) => pid)).to.deep.equal([0, 1, 2]);
    for (const [, name] of processes) expect(name).to.match(new RegExp(`^process \\d \\(${os.hostname()}, pid \\d+\\)$`));
    const collectives = events.filter((event) => event.ph === 'X');
    for (const event of collectives) {
      expect(event.cat).to.equal('collective');
      const [collective] = event.name.split(' ');
      expect(COLLECTIVES).to.include(collective);
      expect(event.name).to.equal(`${collective} (${String(event.args['algorithm'])})`);
      expect(event.args).to.include({ group: 'asp', rank: event.pid, members: 3 });
      // Absolute microseconds: every process's events fall within the job.
      expect(event.ts).to.be.within(startedAt * 1000, endedAt * 1000);
    }
    for (let rank = 0; rank < 3; rank += 1) {
      const broadcasts = collectives.filter((event) => event.pid === rank && event.name.startsWith('broadcast '));
      // ASP broadcasts row k (40 int32s) from its owner in every iteration.
      expect(broadcasts).to.have.length(40);
      expect(broadcasts.map((event) => event.args['root'])).to.deep.equal(Array.from({ length: 40 }, (_, k) => blockOwner(40, 3, k)));
      for (const event of broadcasts.filter((broadcast) => broadcast.args['root'] === rank)) expect(event.args['bytes']).to.equal(160);
      const reductions = collectives.filter((event) => event.pid === rank && event.name.startsWith('allReduce '));
      expect(reductions.map((event) => event.args['reduction'])).to.deep.equal(['SUM']);
    }
  });

  it('records point-to-point calls with peer, tag and bytes, each send matched by a receive, one track per endpoint of a job with threads', async function () {
    const file = path.join(directory, 'ring.json');
    const result = await run(process.execPath, [ccjrun, '-n', '2', '--threads', '2', path.join(distRoot, 'examples', 'ring.js'), '3'], { CCJS_TRACE_FILE: file });
    expect(result.code, result.stderr).to.equal(0);
    const events = readTrace(file);
    expect(tracks(events)).to.deep.equal(['0/0 endpoint 0', '0/1 endpoint 1', '1/2 endpoint 2', '1/3 endpoint 3']);
    expect(events.filter((event) => event.name === 'process_name').map((event) => event.pid)).to.deep.equal([0, 1]);
    const messages = events.filter((event) => event.cat === 'p2p');
    const sends = messages.filter((event) => event.name.startsWith('sendAsync to '));
    const receives = messages.filter((event) => event.name.startsWith('receive from '));
    // 3 laps of a ring of 4 members: 12 hops.
    expect(sends).to.have.length(12);
    expect(receives).to.have.length(12);
    for (const send of sends) {
      expect(send.name).to.equal(`sendAsync to ${String(send.args['peer'])}`);
      expect(send.args).to.include({ group: 'ring', rank: send.tid, peer: (send.tid + 1) % 4, tag: 0 });
      expect(send.args['bytes']).to.be.above(0);
    }
    const key = (from: unknown, to: unknown, bytes: unknown) => `${String(from)}→${String(to)}: ${String(bytes)} bytes`;
    const sent = sends.map((event) => key(event.args['rank'], event.args['peer'], event.args['bytes'])).sort();
    const received = receives.map((event) => key(event.args['peer'], event.args['rank'], event.args['bytes'])).sort();
    expect(received).to.deep.equal(sent);
  });

  it("records every collective of the collectives suite's checks, whose results tracing leaves as they were", async function () {
    const file = path.join(directory, 'collectives.json');
    // A check that fails escapes its member's run() and fails the job.
    await runScenario(2, 2, 'collectives', {}, { CCJS_TRACE_FILE: file });
    const collectives = readTrace(file).filter((event) => event.ph === 'X');
    expect(new Set(collectives.map((event) => event.name.split(' ')[0]))).to.deep.equal(new Set(COLLECTIVES));
    for (const event of collectives) expect(event.name).to.equal(`${event.name.split(' ')[0]} (${String(event.args['algorithm'])})`);
    expect(new Set(collectives.map((event) => event.args['members']))).to.deep.equal(new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]));
  });

  it('joins the parts of a job that lost a process, with the failed calls of the survivors and their error', async function () {
    const file = path.join(directory, 'lost.json');
    const job = await spawnJob(3, fixture('lifecycle'), ['kill'], { CCJS_TRACE_FILE: file });
    await printed(job[1] as SpawnedProcess, 'ready');
    job[1]?.child.kill('SIGKILL');
    const codes = await Promise.all([job[0]?.exited, job[2]?.exited]);
    expect(codes, job.map((spawned) => spawned.stderr).join('\n')).to.deep.equal([0, 0]);
    const events = readTrace(file);
    const failed = events.filter((event) => event.cat === 'p2p');
    expect(failed.map((event) => [event.pid, event.name])).to.have.deep.members([
      [0, 'receive from 1'],
      [2, 'receive from 1'],
    ]);
    for (const event of failed) expect(event.args['error']).to.match(/^PeerLostError: receive from rank 1 of group 'lifecycle' failed: process 1 was lost/);
  });

  it('puts calls that run at once in one endpoint on further lanes of its track, so that events never overlap on one', async function () {
    const file = path.join(directory, 'lanes.json');
    const masters = await createMasters(2, { traceFile: file });
    try {
      await runGroup(masters, [2, 1], 'lanes', async (member, group) => {
        for (let round = 0; round < 20; round += 1) await member.allReduce(group, new Float64Array(1000), Reductions.SUM);
      });
    } finally {
      await closeAll(masters);
    }
    const events = readTrace(file);
    // Endpoint 0 runs two members at once; lane 2 of endpoint 0 is tid 0 + 1 × 2 endpoints.
    expect(tracks(events).slice(0, 2)).to.deep.equal(['0/0 endpoint 0', '0/2 endpoint 0, lane 2']);
    const onEndpoint0 = events.filter((event) => event.ph === 'X' && event.pid === 0);
    expect(onEndpoint0).to.have.length(40);
    expect(new Set(onEndpoint0.map((event) => event.args['rank']))).to.deep.equal(new Set([0, 1]));
  });

  it('refuses a trace file it cannot write with a ConfigError naming it, before starting anything', async function () {
    const file = path.join(directory, 'missing-directory', 'trace.json');
    let failure: unknown;
    await ColGroupMaster.create({ traceFile: file, processRank: 0, processCount: 1 }).catch((error: unknown) => (failure = error));
    expect(failure).to.be.instanceOf(ConfigError);
    expect((failure as Error).message).to.contain(`trace file ${file}: cannot write this endpoint's part ${file}.0`);
  });

  it('draws a trace as an SVG timeline: a lane per track, a box per call', async function () {
    const file = path.join(directory, 'ring.json');
    const result = await run(process.execPath, [ccjrun, '-n', '3', path.join(distRoot, 'examples', 'ring.js'), '2'], { CCJS_TRACE_FILE: file });
    expect(result.code, result.stderr).to.equal(0);
    const events = readTrace(file);
    const svg = timelineSvg(events, 'ring', { from: 0, to: 1 });
    for (let rank = 0; rank < 3; rank += 1) expect(svg).to.contain(`>endpoint ${rank}</text>`);
    const complete = events.filter((event) => event.ph === 'X');
    // The whole job draws every call; the zoomed panel those in its first millisecond.
    expect((svg.match(/<title>/g) ?? []).length).to.be.at.least(complete.length);
    for (const event of complete) expect(svg).to.contain(`<title>${event.name}</title>`);
  });
});
