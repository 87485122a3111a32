/**
 * ccjrun's host lists and hostfiles, and how it places processes on them; a job across "hosts"
 * through a launch agent that runs on this machine (the network-namespace version, with real
 * separate network stacks, is netns.spec.ts).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseHostfile, parseHostList, placeProcesses } from '../src/cli/hosts.js';
import { ConfigError } from '../src/base/errors.js';
import { ccjrun, distRoot, run } from './harness.js';

const ring = path.join(distRoot, 'examples', 'ring.js');

describe('ccjrun hosts', function () {
  it('reads a host list as mpirun -H does: slots after a colon, one slot without', function () {
    expect(parseHostList('a:2,b,c:3')).to.deep.equal([
      { host: 'a', slots: 2 },
      { host: 'b', slots: 1 },
      { host: 'c', slots: 3 },
    ]);
    expect(parseHostList('10.0.0.1:2')).to.deep.equal([{ host: '10.0.0.1', slots: 2 }]);
  });

  it('reads a hostfile: "name", "name slots=N", "name:N", comments and blank lines', function () {
    const text = '# the cluster\nnode1 slots=4\n\nnode2:2   # fast one\nnode3\n';
    expect(parseHostfile(text, 'hosts.txt')).to.deep.equal([
      { host: 'node1', slots: 4 },
      { host: 'node2', slots: 2 },
      { host: 'node3', slots: 1 },
    ]);
  });

  it('fills each host in turn and refuses more processes than slots', function () {
    expect(placeProcesses(parseHostList('a:2,b:2'), 3)).to.deep.equal(['a', 'a', 'b']);
    expect(() => placeProcesses(parseHostList('a:2,b:2'), 5)).to.throw(ConfigError, /-n 5 needs more slots than the 4 of a:2,b:2/);
  });

  it('refuses bad hosts and slot counts, naming them', function () {
    expect(() => parseHostList('a:0')).to.throw(ConfigError, /host a needs a positive number of slots, got "0"/);
    expect(() => parseHostList('a;rm -rf /:1')).to.throw(ConfigError, /is not a host name or address/);
    expect(() => parseHostfile('node1 cores=4\n', 'h.txt')).to.throw(ConfigError, /hostfile h.txt, line 1: expected "host" or "host slots=N"/);
    expect(() => parseHostList(',')).to.throw(ConfigError, /--hosts needs at least one host/);
  });

  it('runs a job on two "hosts" through a launch agent, rank 0 announcing its coordinator first; -n defaults to all slots', async function () {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-agent-'));
    const agent = path.join(directory, 'agent');
    // Like ssh, the agent gets HOST then the command's words; this one runs them here, as that host.
    fs.writeFileSync(agent, `#!/bin/sh\nhost="$1"; shift\necho "$host" >> "${directory}/calls"\nexec env CCJS_HOST="$host" "$@"\n`, { mode: 0o755 });
    try {
      const result = await run(process.execPath, [ccjrun, '--hosts', 'hostA:2,hostB:1', '--launch-agent', agent, '--threads', '2', ring, '2']);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.contain('[0] ring ok: 6 members, 12 hops');
      expect(result.stdout).not.to.contain('coordinator');
      expect(fs.readFileSync(path.join(directory, 'calls'), 'utf8').split('\n').filter(Boolean).sort()).to.deep.equal(['hostA', 'hostA', 'hostB']);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('names the process and its host when one fails, and stops the others', async function () {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-agent-'));
    const agent = path.join(directory, 'agent');
    // The agent cannot reach hostB: it fails as ssh does (255).
    fs.writeFileSync(agent, '#!/bin/sh\nhost="$1"; shift\n[ "$host" = hostB ] && { echo "agent: cannot reach $host" >&2; exit 255; }\nexec env CCJS_HOST="$host" "$@"\n', { mode: 0o755 });
    try {
      const result = await run(process.execPath, [ccjrun, '--hosts', 'hostA:1,hostB:1', '--launch-agent', agent, '--timeout', '5000', ring, '2'], {}, 30_000);
      expect(result.code).to.equal(255);
      expect(result.stderr).to.contain('agent: cannot reach hostB');
      expect(result.stderr).to.contain('ccjrun: rank 1 on hostB exited with code 255; stopping the job');
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('refuses --hosts with --hostfile, and a hostfile it cannot read', async function () {
    const both = await run(process.execPath, [ccjrun, '--hosts', 'a', '--hostfile', 'x', ring]);
    expect(both.code).to.equal(2);
    expect(both.stderr).to.contain('give the hosts either with --hosts or with --hostfile, not both');
    const missing = await run(process.execPath, [ccjrun, '--hostfile', '/nonexistent/hosts', ring]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/hostfile \/nonexistent\/hosts cannot be read/);
  });
});
