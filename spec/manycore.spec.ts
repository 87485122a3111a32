/**
 * Issue 31, item 1: bench/manycore runs end to end (the shortest run: --quick, 2 members, one
 * round) and writes a table with every row, the JSON and the plots into --out. Speed is not
 * asserted: only that every figure was measured, by ccjs and, where installed, by the peers.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { distRoot, run } from './harness.js';

describe('bench/manycore (issue 31)', function () {
  this.timeout(240_000);

  it('measures every figure at 2 members and writes the table, the targets, the samples and the plots', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-manycore-'));
    try {
      const result = await run(process.execPath, [path.join(distRoot, 'bench', 'manycore.js'), '--quick', '--members', '2', '--out', directory], {}, 200_000);
      expect(result.code, result.stderr).to.equal(0);
      for (const name of ['manycore.md', 'manycore.json', 'manycore.svg', 'manycore-collectives.svg', 'manycore-speedup.svg']) expect(fs.existsSync(path.join(directory, name)), name).to.equal(true);
      const table = fs.readFileSync(path.join(directory, 'manycore.md'), 'utf8');
      const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| target |') && !line.startsWith('| figure |') && !line.startsWith('| example |'));
      const cells = (first: string) => rows.find((row) => row.startsWith(`| ${first} |`))?.split('|').map((cell) => cell.trim());
      const { samples, targets } = JSON.parse(fs.readFileSync(path.join(directory, 'manycore.json'), 'utf8')) as { samples: Record<string, number[]>; targets: { name: string; met: boolean | null }[] };
      const peers = { 'Open MPI': samples['Open MPI|hop 8 B|2'] !== undefined, mpi4py: samples['mpi4py|small object hop|2'] !== undefined };
      // The peers are measured, or the notes say why not.
      if (!peers['Open MPI']) expect(table).to.match(/Not measured \(missing\): Open MPI/);
      if (!peers.mpi4py) expect(table).to.match(/Not measured \(missing\): mpi4py/);
      // Between 2 processes: ccjs (third column after the figure) everywhere, the peer where it is installed.
      for (const figure of ['hop 8 B', 'small object hop', 'ping-pong 1 MiB', 'ping-pong 16 MiB', 'ping-pong 1 MiB, sendSync into a buffer', 'ping-pong 16 MiB, sendSync into a buffer']) {
        const row = cells(figure);
        expect(row, figure).to.not.equal(undefined);
        expect(row?.[4], `${figure}: ccjs`).to.match(/^[\d.]+ (µs|ms|GB\/s) /);
      }
      for (const figure of ['barrier', 'broadcast 8 B', 'allReduce 8 B', 'allReduce of a number', 'broadcast of a small dict', 'broadcast 1 MiB', 'allReduce 1 MiB']) {
        const row = cells(figure) as string[];
        expect(row, figure).to.not.equal(undefined);
        expect(row[2]).to.equal('2');
        const [openMpi, mpi4py, processes, threads] = row.slice(3, 7);
        expect(processes, `${figure}: ccjs processes`).to.match(/^[\d.]+ (µs|ms) /);
        expect(threads, `${figure}: ccjs threads`).to.match(/^[\d.]+ (µs|ms) /);
        if (peers.mpi4py) expect(mpi4py, `${figure}: mpi4py`).to.match(/^[\d.]+ (µs|ms) /);
        if (peers['Open MPI']) expect(openMpi, `${figure}: Open MPI`).to.match(figure.includes('number') || figure.includes('dict') ? /^–$/ : /^[\d.]+ (µs|ms) /);
        // The collective segment carries every call: rank 0's endpoint sends no message (median and most).
        expect(row.slice(12, 14), `${figure}: messages per call`).to.deep.equal(['0 (0)', '0 (0)']);
      }
      // The hop's floors, steady and cold, beside ccjs's.
      for (const floor of ['JavaScript floor', 'JavaScript floor + an addon call per message', 'ccjs processes']) {
        const row = cells(floor);
        expect(row?.[2], `${floor}: steady state`).to.match(/^[\d.]+ µs /);
        expect(row?.[4], `${floor}: first 1,000 hops`).to.match(/^[\d.]+ (µs|ms) /);
      }
      for (const figure of ['first round trip (per hop)', 'first 1,000 hops', 'first allReduce 8 B', 'first 100 allReduce 8 B']) expect(cells(figure)?.[6], figure).to.match(/^[\d.]+×$/);
      for (const example of ['ASP n=400', 'QR n=300', 'LEQ n=300']) {
        const [one, two] = rows.filter((row) => row.startsWith(`| ${example} |`)).map((row) => row.split('|').map((cell) => cell.trim()));
        expect(one?.[2], `${example} on 1 member`).to.equal('1');
        expect(two?.[4], `${example}: speedup on 2`).to.match(/^[\d.]+$/);
      }
      // Every target is listed; those of ccjs alone (threads, speedups, cold start) are judged.
      expect(targets).to.have.length(22);
      for (const target of targets.filter((t) => /threads|speedup|first/.test(t.name))) expect(target.met, target.name).to.be.a('boolean');
      for (const target of targets) expect(table).to.include(`| ${target.name} | `);
      // One progress bar, ending at 100%.
      expect(result.stderr).to.match(/manycore \[#{30}\] 100% /);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
