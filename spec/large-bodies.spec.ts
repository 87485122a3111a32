/**
 * Bodies past 4 GiB (issue 30, item 2): a real message of 4.25 GiB, one Float64Array (longer than
 * any Uint8Array of Node 20), between two processes over shared memory and over TCP; a header from
 * a member of the job that declares a body no receive can hold; and the addon's memory for received
 * bodies past 4 GiB. The large messages need about 10 GB of free memory and are skipped, saying so,
 * where there is less.
 */
import os from 'node:os';
import { expect } from 'chai';
import { ucxNative } from '../transport/ucx/native.js';
import { MAX_BYTE_VIEW } from '../src/base/typed-arrays.js';
import { maxMessageBytes } from '../transport/body-memory.js';
import { ccjrun, fixture, packageRoot, run } from './harness.js';

const GIB = 2 ** 30;
const LARGE = 4 * GIB + GIB / 4;
/** The sender's value and the receiver's copy of it (twice that where a copy is made first), and room to spare. */
const NEEDED = 2 * LARGE + 1.5 * GIB;

/** What each endpoint of a two-process job printed as its RESULT. */
function results(stdout: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^\[(\d+)\] RESULT (.*)$/.exec(line);
    if (match) found[Number(match[1])] = JSON.parse(match[2] as string) as Record<string, unknown>;
  }
  return found;
}

async function twoProcesses(script: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>[]> {
  const job = await run(process.execPath, [ccjrun, '-n', '2', fixture(script), ...args], env, 300_000);
  expect(job.code, `the job exited with ${job.code ?? job.signal}:\n${job.stderr.slice(-3000)}`).to.equal(0);
  return results(job.stdout);
}

describe('bodies past 4 GiB', function () {
  this.timeout(360_000);

  for (const [transport, how, env] of [
    ['shm', 'sync', {}],
    ['shm', 'sync', { CCJS_SHM_SINGLE_COPY: '0' }],
    ['tcp', 'sync', {}],
    ['tcp', 'into', {}],
  ] as const) {
    const through = 'CCJS_SHM_SINGLE_COPY' in env ? ' through the rings' : how === 'into' ? ' into a buffer the receive gives' : '';
    it(`moves one Float64Array of 4.25 GiB between two processes over ${transport}${through}, checked at every MiB`, async function () {
      const needed = how === 'into' ? NEEDED + LARGE : NEEDED;
      if (os.freemem() < needed) {
        console.log(`      skipped: ${(os.freemem() / GIB).toFixed(1)} GiB of memory free, ${(needed / GIB).toFixed(1)} GiB needed`);
        this.skip();
      }
      const [sender, receiver] = await twoProcesses('large-body', [String(LARGE), how], { CCJS_TRANSPORT: transport, ...env });
      expect(sender).to.deep.include({ sent: LARGE });
      expect(receiver).to.deep.include({ type: 'Float64Array', bytes: LARGE, samples: LARGE / 2 ** 20 + 1, wrong: [] });
    });
  }

  describe('a member that declares a body no receive can hold, on its real link (tcp, ucx)', function () {
    for (const [what, bytes, format, why] of [
      ['a 16 GiB Uint8Array', 16 * GIB, 1, 'more than a value of its binary type can have here'],
      ['a 16 GiB serialized message', 16 * GIB, 0x100, "more than a serializer's bytes can have here"],
      ['a Float64Array larger than this machine', 2 ** 50, 8, "more than this machine's memory"],
    ] as const) {
      it(`${what}: the receive fails naming that process and the size, and nobody crashes`, async function () {
        // A Uint8Array or a serializer's bytes are one view (4 GiB on Node 20; newer Nodes allow more).
        const holdable = format === 8 ? maxMessageBytes() : MAX_BYTE_VIEW;
        if (bytes <= holdable) {
          console.log(`      skipped: this Node holds ${holdable} bytes of such a body`);
          this.skip();
        }
        const [receiver, forger] = await twoProcesses('forged-body', [String(bytes), String(format)], { CCJS_TRANSPORT: 'tcp' });
        expect(forger).to.deep.include({ forged: bytes, closedByReceiver: true });
        // A BadFrameError is the PeerLostError of a sender whose frame was refused.
        expect(receiver?.['name']).to.equal('BadFrameError');
        expect(receiver?.['message']).to.contain('process 1 sent process 0 a frame that cannot be right').and.contain(`of ${bytes} bytes`).and.contain(why);
      });
    }

    it('a 2^50-byte Float64Array over ucx (UCX_TLS=tcp): the receive fails naming that process and the size, and nobody crashes', async function () {
      if (typeof ucxNative() === 'string') {
        console.log(`      (skipped: ${String(ucxNative())})`);
        this.skip();
      }
      const bytes = 2 ** 50;
      const [receiver, forger] = await twoProcesses('forged-body', [String(bytes), '8'], { CCJS_TRANSPORT: 'ucx', UCX_TLS: 'tcp' });
      expect(forger).to.deep.include({ forged: bytes });
      expect(receiver?.['name']).to.equal('BadFrameError');
      expect(receiver?.['message']).to.contain('process 1 sent process 0 a frame that cannot be right').and.contain(`of ${bytes} bytes`).and.contain("more than this machine's memory");
    });
  });

  it("the addon's memory for received bodies: past 4 GiB an ArrayBuffer of that length, beyond memory a RangeError", async () => {
    // In a process of its own: memory freed twice aborts it, which must fail this test, not the run.
    const script = `
      const native = require(${JSON.stringify(`${packageRoot}/build/Release/ccjs_shm.node`)});
      const large = new Float64Array(native.receiveBuffer(${LARGE}));
      large[0] = 1.5;
      large[large.length - 1] = 2.5;
      let refused = '';
      try { native.receiveBuffer(2 ** 50); } catch (error) { refused = error.constructor.name + ': ' + error.message; }
      console.log(JSON.stringify({ bytes: large.byteLength, first: large[0], last: large[large.length - 1], refused }));`;
    const child = await run(process.execPath, ['-e', script]);
    expect(child.signal, child.stderr).to.equal(null);
    expect(JSON.parse(child.stdout)).to.deep.equal({ bytes: LARGE, first: 1.5, last: 2.5, refused: `RangeError: cannot allocate ${2 ** 50} bytes for a received body` });
  });
});
