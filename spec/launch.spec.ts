import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from '../src/base/errors.js';
import { environmentWithoutLaunchers } from './harness.js';
import { detectLaunch, expandNodeList, openMpiNodes, type LaunchInfo, type LauncherName } from '../src/runtime/launch.js';

type Environment = Record<string, string>;

/** The kernel's ephemeral ports, as Linux says (derived ports must stay out of them: issue 30.8). */
function ephemeralRange(): [number, number] {
  const [lowest = 32768, highest = 60999] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return [lowest, highest];
}

/** A derived port: not a low one, and outside the ephemeral range. */
function expectDerivedPort(port: number): void {
  const [lowest, highest] = ephemeralRange();
  expect(port).to.be.within(10000, 65535);
  expect(port >= lowest && port <= highest, `port ${port} lies in the ephemeral range ${lowest}..${highest}`).to.equal(false);
}

// This file runs as dist/spec/launch.spec.js.
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const ccjrunBin = path.join(packageRoot, 'bin', 'ccjrun.js');
const compiledLaunch = path.join(packageRoot, 'dist', 'src', 'runtime', 'launch.js');

describe('detectLaunch', () => {
  it('without launcher variables is a single local process that needs no coordinator', () => {
    expect(detectLaunch({})).to.deep.equal({
      processRank: 0,
      processCount: 1,
      coordinator: null,
      jobKey: '',
      launcher: 'single',
      allLocal: true,
    });
  });

  describe('ccjrun (CCJS_RANK/CCJS_SIZE/CCJS_COORDINATOR)', () => {
    it('reads rank, size and a loopback coordinator', () => {
      expect(detectLaunch({ CCJS_RANK: '2', CCJS_SIZE: '4', CCJS_COORDINATOR: '127.0.0.1:4100' })).to.deep.equal({
        processRank: 2,
        processCount: 4,
        coordinator: { host: '127.0.0.1', port: 4100 },
        jobKey: '',
        launcher: 'ccjrun',
        allLocal: true,
      });
    });

    it('treats a remote coordinator as a job across hosts', () => {
      const info = detectLaunch({ CCJS_RANK: '0', CCJS_SIZE: '2', CCJS_COORDINATOR: 'node7.cluster:4100' });
      expect(info.coordinator).to.deep.equal({ host: 'node7.cluster', port: 4100 });
      expect(info.allLocal).to.equal(false);
    });

    it('reads a coordinator published in a file, and the job id', () => {
      const info = detectLaunch({ CCJS_RANK: '1', CCJS_SIZE: '2', CCJS_COORDINATOR: 'file:/tmp/job/coordinator', CCJS_JOB_ID: 'ccjrun-42' });
      expect(info).to.deep.include({ coordinator: null, coordinatorFile: '/tmp/job/coordinator', jobKey: 'ccjrun-42' });
      expect(() => detectLaunch({ CCJS_RANK: '1', CCJS_SIZE: '2', CCJS_COORDINATOR: 'file:' })).to.throw(ConfigError, /CCJS_COORDINATOR=file: needs a path/);
    });

    it('accepts a bracketed IPv6 coordinator', () => {
      const info = detectLaunch({ CCJS_RANK: '1', CCJS_SIZE: '2', CCJS_COORDINATOR: '[::1]:4100' });
      expect(info.coordinator).to.deep.equal({ host: '::1', port: 4100 });
      expect(info.allLocal).to.equal(true);
    });

    it('needs no coordinator for a job of one process, but does for more', () => {
      expect(detectLaunch({ CCJS_RANK: '0', CCJS_SIZE: '1' }).coordinator).to.equal(null);
      expect(() => detectLaunch({ CCJS_RANK: '0', CCJS_SIZE: '2' })).to.throw(ConfigError, /CCJS_COORDINATOR=host:port/);
    });
  });

  describe('ports derived from the job identity', () => {
    const jobs = ['1731854337', '1731919873', '20250001', 'job-a', 'job-b'];
    const launchers: Array<{ title: string; launcher: LauncherName; env: (rank: number, job: string) => Environment }> = [
      {
        title: 'Open MPI 4 (OMPI_MCA_ess_base_jobid)',
        launcher: 'mpirun',
        env: (rank, job) => ({
          ...openMpiEnvironment(rank, 3, 3),
          OMPI_MCA_ess_base_jobid: job,
          PMIX_NAMESPACE: job,
          OMPI_MCA_orte_hnp_uri: `${job}.0;tcp://192.0.2.2:45191`,
        }),
      },
      {
        title: 'Open MPI 5 (PMIX_NAMESPACE only)',
        launcher: 'mpirun',
        env: (rank, job) => ({ ...openMpiEnvironment(rank, 3, 3), PMIX_NAMESPACE: `prterun-vm-${job}@1` }),
      },
      {
        title: 'MPICH hydra (PMI_KVSNAME)',
        launcher: 'hydra',
        env: (rank, job) => ({ PMI_RANK: String(rank), PMI_SIZE: '3', MPI_LOCALNRANKS: '3', PMI_KVSNAME: `kvs_${job}_0` }),
      },
      {
        title: 'Slurm on one node (SLURM_JOB_ID + SLURM_STEP_ID)',
        launcher: 'slurm',
        env: (rank, job) => slurmEnvironment(rank, { SLURM_JOB_ID: job, SLURM_STEP_ID: '0', SLURM_STEP_NUM_NODES: '1' }),
      },
    ];

    for (const { title, launcher, env } of launchers) {
      it(`${title}: all ranks agree on a loopback port outside the ephemeral range, concurrent jobs differ`, () => {
        const ranks = [0, 1, 2].map((rank) => detectLaunch(env(rank, jobs[0] ?? '')));
        expect(ranks.map((info) => info.processRank)).to.deep.equal([0, 1, 2]);
        for (const info of ranks) {
          expect(info).to.include({ launcher, processCount: 3, allLocal: true });
          expect(info.coordinator).to.deep.equal(ranks[0]?.coordinator);
        }
        const ports = jobs.map((job) => coordinatorOf(detectLaunch(env(0, job))).port);
        expect(new Set(ports).size, `ports ${ports.join(', ')}`).to.equal(jobs.length);
        for (const port of ports) expectDerivedPort(port);
        expect(coordinatorOf(ranks[0]).host).to.equal('127.0.0.1');
      });
    }

    it('Slurm: another step of the same job gets another port', () => {
      const step = (stepId: string): number =>
        coordinatorOf(detectLaunch(slurmEnvironment(0, { SLURM_JOB_ID: '77', SLURM_STEP_ID: stepId, SLURM_NNODES: '1' }))).port;
      expect(step('0')).to.not.equal(step('1'));
    });

    it('hydra without any job variable: ranks under one proxy (same parent process) agree', () => {
      const hydra = (rank: number): LaunchInfo => detectLaunch({ PMI_RANK: String(rank), PMI_SIZE: '2' });
      expect(hydra(0).coordinator).to.deep.equal(hydra(1).coordinator);
      expect(hydra(1)).to.include({ launcher: 'hydra', allLocal: true });
    });
  });

  describe('Open MPI', () => {
    it('needs no coordinator for -np 1', () => {
      expect(detectLaunch(openMpiEnvironment(0, 1, 1))).to.deep.include({ launcher: 'mpirun', coordinator: null });
    });

    it("puts the coordinator on mpirun's node when every node of its node list runs processes (mpirun on the first node)", () => {
      // As Open MPI 4.1 sets them for `mpirun --host n2:2,n1:2,n3:2` typed on n2 (process 0 on n2).
      const env = { ...openMpiEnvironment(3, 6, 2), OMPI_MCA_ess_base_jobid: '42', OMPI_MCA_orte_node_regex: 'n[1:2,1,3]@0(3)', OMPI_MCA_orte_num_nodes: '3' };
      const info = detectLaunch(env);
      expect(info).to.deep.include({ launcher: 'mpirun', allLocal: false });
      expect(info.coordinator?.host).to.equal('n2');
      // Processes on mpirun's node get no node list: their daemon is mpirun itself, on the node of process 0.
      const onMpirunsNode = { ...openMpiEnvironment(0, 6, 2), OMPI_MCA_ess_base_jobid: '42', OMPI_MCA_orte_hnp_uri: '77.0;tcp://10.0.0.2:5000', OMPI_MCA_orte_local_daemon_uri: '77.0;tcp://10.0.0.2:5000', PMIX_HOSTNAME: 'n2' };
      expect(detectLaunch(onMpirunsNode).coordinator).to.deep.equal(info.coordinator);
    });

    it('asks for CCJS_COORDINATOR when the node list does not say where process 0 runs (mpirun on a login node), naming the variables', () => {
      const env = { ...openMpiEnvironment(3, 6, 2), OMPI_MCA_ess_base_jobid: '42', OMPI_MCA_orte_node_regex: 'login,n[1:1-3]@0(4)', OMPI_MCA_orte_num_nodes: '3' };
      expect(() => detectLaunch(env)).to.throw(ConfigError, /Open MPI \(mpirun\).*OMPI_MCA_orte_node_regex names 4 nodes \(mpirun's login first\) and OMPI_MCA_orte_num_nodes=3 .*CCJS_COORDINATOR=host:port/);
    });

    it('reads node lists with widths, ranges and plain names', () => {
      expect(openMpiNodes('login,node[2:1-3,10]@0(5)')).to.deep.equal(['login', 'node01', 'node02', 'node03', 'node10']);
      expect(openMpiNodes('sxh[1:2,1,3]@0(3)')).to.deep.equal(['sxh2', 'sxh1', 'sxh3']);
    });

    it('asks for CCJS_COORDINATOR when processes span hosts', () => {
      const env = { ...openMpiEnvironment(1, 4, 2), OMPI_MCA_ess_base_jobid: '42' };
      expect(() => detectLaunch(env)).to.throw(ConfigError, /Open MPI.*\(OMPI_MCA_orte_node_regex and OMPI_MCA_orte_num_nodes are not both set.*CCJS_COORDINATOR=host:port/);
      const info = detectLaunch({ ...env, CCJS_COORDINATOR: 'node1:7000' });
      expect(info).to.deep.include({ processRank: 1, processCount: 4, allLocal: false });
      expect(info.coordinator).to.deep.equal({ host: 'node1', port: 7000 });
    });
  });

  describe('MPICH hydra', () => {
    it('asks for CCJS_COORDINATOR when MPI_LOCALNRANKS shows several hosts', () => {
      expect(() => detectLaunch({ PMI_RANK: '3', PMI_SIZE: '4', MPI_LOCALNRANKS: '2', PMI_KVSNAME: 'kvs_1_0' })).to.throw(
        ConfigError,
        /hydra.*CCJS_COORDINATOR=host:port/,
      );
    });

    it('across hosts with CCJS_COORDINATOR and no job variable, names no job that would differ between hosts (each proxy is another parent)', () => {
      const env = { PMI_RANK: '3', PMI_SIZE: '6', MPI_LOCALNRANKS: '2', CCJS_COORDINATOR: 'n1:7000' };
      expect(() => detectLaunch({ ...env, CCJS_COORDINATOR: undefined })).to.throw(ConfigError, /MPI_LOCALNRANKS=2 of PMI_SIZE=6 run on this host.*CCJS_COORDINATOR=host:port/);
      expect(detectLaunch(env)).to.deep.include({ launcher: 'hydra', jobKey: '', coordinator: { host: 'n1', port: 7000 } });
      expect(detectLaunch({ ...env, CCJS_JOB_ID: 'run-7' }).jobKey).to.equal('run-7');
    });

    it("leaves srun's PMI-2 variables (PMI_RANK without MPI_LOCALNRANKS) to the Slurm reader", () => {
      const env = slurmEnvironment(1, { PMI_RANK: '1', PMI_SIZE: '3', SLURM_JOB_ID: '9', SLURM_STEP_NUM_NODES: '1' });
      expect(detectLaunch(env).launcher).to.equal('slurm');
    });
  });

  describe('Slurm', () => {
    it('uses the first node of the step node list for a job across nodes', () => {
      const env = slurmEnvironment(2, {
        SLURM_JOB_ID: '5150',
        SLURM_STEP_ID: '0',
        SLURM_STEP_NUM_NODES: '3',
        SLURM_STEP_NODELIST: 'node[03-04,07]',
        SLURM_JOB_NODELIST: 'node[01-09]',
      });
      const info = detectLaunch(env);
      expect(info).to.deep.include({ launcher: 'slurm', processRank: 2, processCount: 3, allLocal: false });
      expect(coordinatorOf(info).host).to.equal('node03');
      expect(coordinatorOf(detectLaunch({ ...env, SLURM_PROCID: '0' }))).to.deep.equal(info.coordinator);
    });

    it('falls back to SLURM_JOB_NODELIST and SLURM_NNODES', () => {
      const env = slurmEnvironment(0, { SLURM_JOB_ID: '5150', SLURM_NNODES: '2', SLURM_JOB_NODELIST: 'gpu-a,gpu-b' });
      expect(coordinatorOf(detectLaunch(env)).host).to.equal('gpu-a');
    });

    it('asks for CCJS_COORDINATOR across nodes without a node list', () => {
      const env = slurmEnvironment(0, { SLURM_JOB_ID: '5150', SLURM_STEP_NUM_NODES: '2' });
      expect(() => detectLaunch(env)).to.throw(ConfigError, /Slurm.*CCJS_COORDINATOR=host:port/);
    });
  });

  describe('torch-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT', () => {
    const torch = (extra: Environment): Environment => ({ RANK: '1', WORLD_SIZE: '2', ...extra });

    it('takes the coordinator from MASTER_ADDR and MASTER_PORT', () => {
      expect(detectLaunch(torch({ MASTER_ADDR: '10.0.0.5', MASTER_PORT: '29500' }))).to.deep.equal({
        processRank: 1,
        processCount: 2,
        coordinator: { host: '10.0.0.5', port: 29500 },
        jobKey: '',
        launcher: 'torch',
        allLocal: false,
      });
    });

    it('is local when LOCAL_WORLD_SIZE covers the job or MASTER_ADDR is loopback', () => {
      const remote = { MASTER_ADDR: '10.0.0.5', MASTER_PORT: '29500' };
      expect(detectLaunch(torch({ ...remote, LOCAL_WORLD_SIZE: '2' })).allLocal).to.equal(true);
      expect(detectLaunch(torch({ MASTER_ADDR: 'localhost', MASTER_PORT: '29500' })).allLocal).to.equal(true);
    });

    it('needs MASTER_ADDR and MASTER_PORT together', () => {
      expect(() => detectLaunch(torch({ MASTER_ADDR: '10.0.0.5' }))).to.throw(ConfigError, /MASTER_PORT=""/);
      expect(() => detectLaunch(torch({}))).to.throw(ConfigError, /CCJS_COORDINATOR=host:port/);
    });
  });

  it('lets CCJS_COORDINATOR override every launcher', () => {
    const override = { CCJS_COORDINATOR: '192.0.2.9:6000' };
    const environments = [
      { RANK: '0', WORLD_SIZE: '2', MASTER_ADDR: '10.0.0.5', MASTER_PORT: '29500' },
      slurmEnvironment(0, { SLURM_JOB_ID: '1', SLURM_STEP_NUM_NODES: '1' }),
      { ...openMpiEnvironment(0, 2, 2), OMPI_MCA_ess_base_jobid: '42' },
      { PMI_RANK: '0', PMI_SIZE: '2' },
      {},
    ];
    for (const env of environments) {
      expect(detectLaunch({ ...env, ...override }).coordinator).to.deep.equal({ host: '192.0.2.9', port: 6000 });
    }
  });

  describe('malformed values throw a ConfigError naming the variable and its value', () => {
    const cases: Array<[Environment, RegExp]> = [
      [{ CCJS_RANK: 'abc', CCJS_SIZE: '2' }, /CCJS_RANK="abc"/],
      [{ CCJS_RANK: '4', CCJS_SIZE: '4' }, /CCJS_RANK=4 is not below CCJS_SIZE=4/],
      [{ CCJS_RANK: '0' }, /CCJS_SIZE is not set/],
      [openMpiEnvironment(0, 0, 0), /OMPI_COMM_WORLD_SIZE="0"/],
      [{ PMI_RANK: '-1', PMI_SIZE: '2' }, /PMI_RANK="-1"/],
      [slurmEnvironment(0, { SLURM_NTASKS: '2.5' }), /SLURM_NTASKS="2.5"/],
      [{ CCJS_COORDINATOR: 'node1' }, /CCJS_COORDINATOR="node1"/],
      [{ CCJS_COORDINATOR: 'node1:99999' }, /CCJS_COORDINATOR.*"99999"/],
      [{ CCJS_COORDINATOR: '::1:80' }, /CCJS_COORDINATOR="::1:80".*\[address\]:port/],
      [{ CCJS_COORDINATOR: ':80' }, /CCJS_COORDINATOR=":80"/],
      [{ RANK: '0', WORLD_SIZE: '2', MASTER_ADDR: 'h', MASTER_PORT: 'http' }, /MASTER_PORT.*"http"/],
      [slurmEnvironment(0, { SLURM_STEP_NODELIST: 'node[1-' }), /SLURM_STEP_NODELIST="node\[1-"/],
    ];
    for (const [env, message] of cases) {
      it(`${JSON.stringify(env)} → ${message.source}`, () => {
        expect(() => detectLaunch(env)).to.throw(ConfigError, message);
      });
    }
  });
});

describe('expandNodeList', () => {
  it('expands ranges with their zero padding, lists and several bracket groups', () => {
    expect(expandNodeList('node[01-04,07]', 'L')).to.deep.equal(['node01', 'node02', 'node03', 'node04', 'node07']);
    expect(expandNodeList('login1,gpu[8-10]', 'L')).to.deep.equal(['login1', 'gpu8', 'gpu9', 'gpu10']);
    expect(expandNodeList('r[1-2]-n[1,3]', 'L')).to.deep.equal(['r1-n1', 'r1-n3', 'r2-n1', 'r2-n3']);
  });

  it('rejects a descending range, naming the variable', () => {
    expect(() => expandNodeList('node[4-2]', 'SLURM_JOB_NODELIST')).to.throw(ConfigError, /SLURM_JOB_NODELIST="node\[4-2\]"/);
  });
});

describe('ccjrun', () => {
  let workDirectory: string;

  before(() => {
    workDirectory = mkdtempSync(path.join(tmpdir(), 'ccjrun-spec-'));
  });

  after(() => {
    rmSync(workDirectory, { recursive: true, force: true });
  });

  /** Writes a throwaway script into the work directory and returns its path. */
  function writeScript(relativePath: string, source: string): string {
    const file = path.join(workDirectory, relativePath);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, source);
    return file;
  }

  it('runs N ranks with CCJS_* set, prefixing every stdout and stderr line with its rank', async () => {
    writeScript(
      'report.js',
      `const { CCJS_RANK, CCJS_SIZE, CCJS_COORDINATOR, CCJS_TRANSPORT, CCJS_TIMEOUT_MS } = process.env;
       console.log('rank', CCJS_RANK, 'of', CCJS_SIZE, 'at', CCJS_COORDINATOR, 'args', process.argv.slice(2).join(','));
       console.log('options', CCJS_TRANSPORT, CCJS_TIMEOUT_MS);
       console.error('diagnostic from', CCJS_RANK);
       process.stdout.write('no newline at the end');`,
    );
    const run = await runCcjrun(['-n', '3', '--transport', 'tcp', '--timeout=5000', 'report.js', 'x', 'y']);
    expect(run.code, run.stderr).to.equal(0);
    const coordinators = new Set<string>();
    for (const rank of [0, 1, 2]) {
      const report = new RegExp(`^\\[${rank}\\] rank ${rank} of 3 at (file:\\S+/coordinator) args x,y$`, 'm').exec(run.stdout);
      expect(report, run.stdout).to.not.equal(null);
      coordinators.add(report?.[1] ?? '');
      expect(run.stdout).to.match(new RegExp(`^\\[${rank}\\] options tcp 5000$`, 'm'));
      expect(run.stdout).to.match(new RegExp(`^\\[${rank}\\] no newline at the end$`, 'm'));
      expect(run.stderr).to.match(new RegExp(`^\\[${rank}\\] diagnostic from ${rank}$`, 'm'));
    }
    expect(coordinators.size).to.equal(1);
    expect(run.stdout).to.not.include('diagnostic');
    expect(run.stdout.split('\n').filter(Boolean)).to.have.length(9);
  });

  it('stops the job when a rank fails: reports rank and code, leaves no rank running, exits with that code', async () => {
    // Rank 1 fails once every rank has started; rank 2 ignores SIGTERM, so it needs the SIGKILL.
    writeScript(
      'fail.cjs',
      `const fs = require('node:fs'), path = require('node:path');
       const [directory] = process.argv.slice(2), rank = Number(process.env.CCJS_RANK);
       console.log('pid', process.pid);
       fs.writeFileSync(path.join(directory, 'ready-' + rank), '');
       if (rank === 2) process.on('SIGTERM', () => {});
       if (rank === 1) {
         setInterval(() => { if ([0, 1, 2].every((r) => fs.existsSync(path.join(directory, 'ready-' + r)))) process.exit(3); }, 20);
       } else {
         setInterval(() => {}, 1000);
       }`,
    );
    const readyDirectory = path.join(workDirectory, 'ready');
    mkdirSync(readyDirectory);
    const run = await runCcjrun(['-n', '3', 'fail.cjs', readyDirectory]);
    expect(run.code).to.equal(3);
    expect(run.stderr).to.include('ccjrun: rank 1 exited with code 3; stopping the job');
    expect(run.elapsedMs).to.be.below(8000);
    const pids = [...run.stdout.matchAll(/^\[\d\] pid (\d+)$/gm)].map((match) => Number(match[1]));
    expect(pids).to.have.length(3);
    for (const pid of pids) expect(isRunning(pid), `pid ${pid} still running`).to.equal(false);
  });

  it('forwards SIGTERM to every rank and exits non-zero', async () => {
    writeScript('sleep.js', `console.log('pid', process.pid); setInterval(() => {}, 1000);`);
    const pids: number[] = [];
    const run = await runCcjrun(['-n', '2', 'sleep.js'], (output, ccjrun) => {
      pids.splice(0, pids.length, ...[...output.matchAll(/^\[\d\] pid (\d+)$/gm)].map((match) => Number(match[1])));
      if (pids.length === 2 && !ccjrun.killed) ccjrun.kill('SIGTERM');
    });
    expect(run.code).to.equal(128 + 15);
    for (const pid of pids) expect(isRunning(pid), `pid ${pid} still running`).to.equal(false);
  });

  it('resolves <name>.js, <name>/index.js and a .ts file of a package to its dist twin', async () => {
    writeScript('named.js', `console.log('named');`);
    writeScript('app/index.js', `console.log('app index');`);
    writeScript('pkg/package.json', '{"type": "module"}');
    writeScript('pkg/src/job.ts', `console.log('typescript source');`);
    writeScript('pkg/dist/src/job.js', `console.log('compiled twin');`);
    const expectations: Array<[string, string]> = [
      ['named', 'named'],
      ['app', 'app index'],
      ['pkg/src/job.ts', 'compiled twin'],
      ['pkg/src/job', 'compiled twin'],
    ];
    for (const [script, output] of expectations) {
      const run = await runCcjrun(['-n1', script]);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`[0] ${output}\n`);
    }
  });

  it("finds a .ts file's twin where the package's tsconfig.json (or tsc's usual rootDir 'src' layout) puts it", async () => {
    writeScript('configured/package.json', '{"type": "module"}');
    writeScript('configured/tsconfig.json', '{\n  // comments, as tsc allows\n  "compilerOptions": { "rootDir": "src", "outDir": "build/js", },\n}');
    writeScript('configured/src/tools/job.ts', `console.log('typescript source');`);
    writeScript('configured/build/js/tools/job.js', `console.log('configured twin');`);
    writeScript('plain/package.json', '{"type": "module"}');
    writeScript('plain/src/job.ts', `console.log('typescript source');`);
    writeScript('plain/dist/job.js', `console.log('rootDir src twin');`);
    for (const [script, output] of [['configured/src/tools/job.ts', 'configured twin'], ['plain/src/job.ts', 'rootDir src twin']]) {
      const run = await runCcjrun(['-n1', script as string]);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`[0] ${output}\n`);
    }
    const missing = await runCcjrun(['-n1', 'plain/src/other.ts']);
    writeScript('plain/src/other.ts', '');
    const unbuilt = await runCcjrun(['-n1', 'plain/src/other.ts']);
    expect(missing.stderr).to.match(/not found/);
    expect(unbuilt.stderr).to.match(/has no compiled twin \(tried dist\/src\/other\.js, dist\/other\.js\); build first/);
  });

  it('prints usage for --help and exits 0', async () => {
    const run = await runCcjrun(['--help']);
    expect(run.code).to.equal(0);
    expect(run.stdout).to.match(/^Usage: ccjrun -n <processes>/);
  });

  describe('exits 2 with a clear message on bad usage', () => {
    const cases: Array<[string[], RegExp]> = [
      [['-n', '2'], /script to run is missing/],
      [['report.js'], /number of processes is missing/],
      [['-n', '0', 'report.js'], /-n needs a positive integer, got "0"/],
      [['--np=x', 'report.js'], /-n needs a positive integer, got "x"/],
      [['-n', '2', '--frobnicate', 'report.js'], /unknown option --frobnicate/],
      [['-n', '2', '--transport', 'carrier-pigeon', 'report.js'], /--transport carrier-pigeon is not one of/],
      [['-n', '2', 'missing-script'], /script missing-script not found/],
    ];
    for (const [argv, message] of cases) {
      it(`ccjrun ${argv.join(' ')}`, async () => {
        const run = await runCcjrun(argv);
        expect(run.code).to.equal(2);
        expect(run.stderr).to.match(message);
        expect(run.stdout).to.equal('');
      });
    }
  });

  interface Run {
    code: number | null;
    stdout: string;
    stderr: string;
    elapsedMs: number;
  }

  /** Runs bin/ccjrun.js in the work directory; `onStdout` sees the stdout gathered so far. */
  function runCcjrun(argv: string[], onStdout?: (stdout: string, ccjrun: ChildProcess) => void): Promise<Run> {
    const started = Date.now();
    const ccjrun = spawn(process.execPath, [ccjrunBin, ...argv], {
      cwd: workDirectory,
      env: environmentWithoutLaunchers(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    ccjrun.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      onStdout?.(stdout, ccjrun);
    });
    ccjrun.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    return new Promise((resolve, reject) => {
      ccjrun.once('error', reject);
      ccjrun.once('close', (code) => resolve({ code, stdout, stderr, elapsedMs: Date.now() - started }));
    });
  }
});

describe('detectLaunch under a real mpirun', () => {
  it('gives ranks 0..2 of 3 sharing one coordinator port', function () {
    if (spawnSync('mpirun', ['--version']).error !== undefined) {
      console.log('      (skipped: mpirun is not installed; apt-get install openmpi-bin to run it)');
      this.skip();
    }
    const printInfo = `import(${JSON.stringify(pathToFileURL(compiledLaunch).href)})
      .then((launch) => console.log(JSON.stringify(launch.detectLaunch(process.env))))`;
    const mpirun = spawnSync(
      'mpirun',
      ['--allow-run-as-root', '--oversubscribe', '-np', '3', process.execPath, '-e', printInfo],
      { env: environmentWithoutLaunchers(), encoding: 'utf8', timeout: 30000 },
    );
    expect(mpirun.status, mpirun.stderr).to.equal(0);
    const infos = mpirun.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LaunchInfo)
      .sort((a, b) => a.processRank - b.processRank);
    expect(infos.map((info) => info.processRank)).to.deep.equal([0, 1, 2]);
    for (const info of infos) {
      expect(info).to.deep.include({ launcher: 'mpirun', processCount: 3, allLocal: true });
      expect(info.coordinator).to.deep.equal(infos[0]?.coordinator);
    }
    expectDerivedPort(coordinatorOf(infos[0]).port);
  });
});

function openMpiEnvironment(rank: number, size: number, localSize: number): Environment {
  return {
    OMPI_COMM_WORLD_RANK: String(rank),
    OMPI_COMM_WORLD_SIZE: String(size),
    OMPI_COMM_WORLD_LOCAL_SIZE: String(localSize),
  };
}

function slurmEnvironment(rank: number, extra: Environment): Environment {
  return { SLURM_PROCID: String(rank), SLURM_NTASKS: '3', ...extra };
}

function coordinatorOf(info: LaunchInfo | undefined): { host: string; port: number } {
  expect(info?.coordinator).to.be.an('object');
  return info?.coordinator ?? { host: '', port: 0 };
}

/** This process's environment minus anything a launcher set, so children see only what the test gives. */

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
