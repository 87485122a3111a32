/**
 * Issue 30.15a: the trace of a job that aborts. Its endpoints leave their parts unjoined (endpoint
 * 0 joins them only when the job closes); each part holds the calls made before the abort (their
 * pending events are appended as the endpoint exits), and trace-svg draws them: from the name of
 * the trace, from one part, whatever the end of the array.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ccjrun, distRoot, fixture, run } from './harness.js';
import { readTraceEvents } from '../bench/trace-svg.js';

const traceSvg = path.join(distRoot, 'bench', 'trace-svg.js');

describe('the trace of an aborted job (issue 30.15a)', function () {
  this.timeout(120_000);
  let directory = '';
  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-aborted-trace-'));
  });
  afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

  it('keeps the calls made before the abort in its parts, which trace-svg reads and draws', async () => {
    const file = path.join(directory, 'aborted.json');
    const job = await run(process.execPath, [ccjrun, '-n', '3', fixture('trace-abort')], { CCJS_TRACE_FILE: file });
    expect(job.code, job.stderr).to.not.equal(0);
    expect(job.stderr).to.include('boom in rank 2');
    expect(fs.readdirSync(directory).sort()).to.deep.equal(['aborted.json.0', 'aborted.json.1', 'aborted.json.2']);

    // Each part: every endpoint's three allReduces, though the job ended before it closed.
    for (let rank = 0; rank < 3; rank += 1) {
      const events = readTraceEvents(path.join(directory, `aborted.json.${rank}`));
      const calls = events.filter((event) => event.ph === 'X' && event.cat === 'collective');
      expect(calls.map((event) => event.name.split(' ')[0]), `part ${rank}`).to.deep.equal(['allReduce', 'allReduce', 'allReduce']);
      for (const event of calls) expect(event.tid).to.equal(rank);
    }
    // The name of the trace stands for its parts; a part that a dying process cut short in a line,
    // or that was given its closing bracket, reads as well.
    const allReduces = (events: { name: string }[]) => events.filter((event) => event.name.startsWith('allReduce'));
    expect(allReduces(readTraceEvents(file))).to.have.length(9);
    const part = path.join(directory, 'aborted.json.1');
    const text = fs.readFileSync(part, 'utf8');
    fs.writeFileSync(part, `${text}{"name":"allRed`);
    expect(allReduces(readTraceEvents(part))).to.have.length(3);
    fs.writeFileSync(part, `${text}]\n`);
    expect(allReduces(readTraceEvents(part))).to.have.length(3);

    const svg = path.join(directory, 'aborted.svg');
    const drawn = await run(process.execPath, [traceSvg, file, svg]);
    expect(drawn.code, drawn.stderr).to.equal(0);
    const boxes = fs.readFileSync(svg, 'utf8').match(/<title>allReduce/g) ?? [];
    expect(boxes).to.have.length(9);
  });

  it('keeps the calls of a process that exits at once (process.exit) without closing', async () => {
    const file = path.join(directory, 'exited.json');
    const job = await run(process.execPath, [ccjrun, '-n', '3', fixture('trace-abort'), 'exit'], { CCJS_TRACE_FILE: file });
    expect(job.code, job.stderr).to.not.equal(0);
    const calls = readTraceEvents(path.join(directory, 'exited.json.2')).filter((event) => event.cat === 'collective');
    expect(calls.map((event) => event.name.split(' ')[0])).to.deep.equal(['allReduce', 'allReduce', 'allReduce']);
  });
});
