import { expect } from 'chai';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { CCJError, GroupError } from '../src/index.js';
import { packageRoot, run } from './harness.js';
import type { Completed } from './harness.js';

/** What this repository's package.json and package-lock.json say, as far as these tests read them. */
interface Manifest {
  readonly version: string;
  readonly bin: Record<string, string>;
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
}
interface LockEntry {
  readonly dependencies?: Record<string, string>;
}
interface Lockfile {
  readonly packages: Record<string, LockEntry>;
}
/** One entry of `npm pack --json`'s output. */
interface PackResult {
  readonly filename: string;
  readonly integrity: string;
  readonly files: readonly { readonly path: string }[];
}

const manifest = readJson<Manifest>(path.join(packageRoot, 'package.json'));
const typeScriptCompiler = path.join(packageRoot, 'node_modules', 'typescript', 'bin', 'tsc');
/** TypeScript 7, the native compiler (devDependency @typescript/native-preview). */
const typeScript7Compiler = path.join(packageRoot, 'node_modules', '@typescript', 'native-preview', 'bin', 'tsgo');
/** npm and git: installs, builds and clones take a while on a loaded machine. */
const COMMAND_TIMEOUT_MS = 240_000;

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

function writeJson(file: string, value: unknown): void {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function expectSuccess(result: Completed, what: string): void {
  expect(result.code, `${what}: signal ${result.signal}\n${result.stdout}${result.stderr}`).to.equal(0);
}

/** `npm pack` of this repository as built now (without prepare, which would build it again). */
async function pack(...options: string[]): Promise<PackResult> {
  const result = await run('npm', ['pack', '--json', '--ignore-scripts', '--prefix', packageRoot, ...options], {}, COMMAND_TIMEOUT_MS);
  expectSuccess(result, 'npm pack');
  const [packed] = JSON.parse(result.stdout) as PackResult[];
  return packed;
}

/**
 * Runs npm offline, from the cache that installing this repository filled: undefined when it
 * succeeded, or why the test cannot run here (npm lacks a package in its cache).
 */
async function npmOffline(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string | undefined> {
  const result = await run('npm', [...args, '--offline', '--no-audit', '--no-fund'], env, COMMAND_TIMEOUT_MS);
  if (result.code !== 0 && result.stderr.includes('ENOTCACHED')) {
    return `npm cannot install offline here: ${/npm error request to (\S+)/.exec(result.stderr)?.[1] ?? 'a package'} is not in its cache (run npm ci in ${packageRoot} first)`;
  }
  expectSuccess(result, `npm ${args.join(' ')}`);
  return undefined;
}

/** The consumers' job: an allReduce of rank + 1 over one member per process, in JavaScript and in TypeScript. */
const ESM_CONSUMER = `import { ColGroupMaster, ColMember, Reductions } from 'ccjs';

class Summer extends ColMember {
  constructor(master) {
    super();
    this.master = master;
  }

  async run() {
    const group = await this.master.getGroup('sum', this.master.processCount);
    const rank = group.getRank(this);
    const total = await this.allReduce(group, rank + 1, Reductions.SUM);
    console.log(\`rank \${rank} of \${group.size()}: total \${total}\`);
  }
}

const master = await ColGroupMaster.create();
const member = new Summer(master);
master.addMember('sum', member);
await member.start();
`;

const TYPESCRIPT_CONSUMER = `import { ColGroupMaster, ColMember, Reductions } from 'ccjs';

class Summer extends ColMember {
  constructor(private readonly master: ColGroupMaster) {
    super();
  }

  async run(): Promise<void> {
    const group = await this.master.getGroup('sum', this.master.processCount);
    const rank = group.getRank(this);
    const total: number = await this.allReduce(group, rank + 1, Reductions.SUM);
    console.log(\`rank \${rank} of \${group.size()}: total \${total}\`);
  }
}

// CommonJS has no top-level await.
async function main(): Promise<void> {
  const master = await ColGroupMaster.create();
  const member = new Summer(master);
  master.addMember('sum', member);
  await member.start();
}

void main();
`;

/**
 * A user's typed reduction over typed arrays (issue 30): `new Float64Array(n)` is a
 * `Float64Array<ArrayBuffer>` to TypeScript 5.7 and later, the ReductionObject's type parameter an
 * `ArrayBufferLike` one, and the calls must take both.
 */
const TYPED_REDUCTIONS = `import { DividableArray } from 'ccjs';
import type { ColGroup, ColGroupMaster, ColMember, ReductionObject } from 'ccjs';

const op: ReductionObject<Float64Array> = {
  reduce(a, b) {
    const sum = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) sum[i] = (a[i] ?? 0) + (b[i] ?? 0);
    return sum;
  },
};

export async function sums(master: ColGroupMaster, member: ColMember, g: ColGroup, n: number): Promise<Float64Array[]> {
  master.on('peerLost', (event) => console.log(event.process, event.reason));
  const all: Float64Array = await member.allReduce(g, new Float64Array(n), op);
  const atRoot: Float64Array | null = await member.reduce(g, new Float64Array(n), op, 0);
  const prefix: Float64Array = await member.scan(g, new Float64Array(n), op);
  const blocks = new DividableArray(new Float64Array(g.size() * n));
  const mine: Float64Array = await member.reduceScatter(g, blocks, op);
  return [all, atRoot ?? new Float64Array(n), prefix, mine];
}
`;

/**
 * Type-checks TYPED_REDUCTIONS without @types/node (a project need not install it): TypeScript 5
 * told so by types: [], TypeScript 7 by its defaults, both checking the shipped .d.ts (skipLibCheck off).
 */
const TYPE_CHECK_CONFIGS = {
  'tsconfig.5.json': { compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: [] }, files: ['main.ts'] },
  'tsconfig.7.json': { compilerOptions: { strict: true, noEmit: true }, files: ['main.ts'] },
};

/** A TypeScript project as npm init makes it (CommonJS), compiled as Node 20.19+ runs it. */
const TYPESCRIPT_CONFIG = {
  compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, rootDir: 'src', outDir: 'dist', types: ['node'] },
  include: ['src'],
};

/**
 * Lockfile entries, copied from this repository's, for `names` and what they depend on: with them
 * `npm ci --offline` installs the consumer from npm's cache, where resolving version ranges would
 * need the registry.
 */
function lockedPackages(names: readonly string[]): Record<string, LockEntry> {
  const lock = readJson<Lockfile>(path.join(packageRoot, 'package-lock.json'));
  const entries: Record<string, LockEntry> = {};
  const visit = (name: string): void => {
    const key = `node_modules/${name}`;
    const entry = lock.packages[key];
    if (entry === undefined) throw new Error(`${name} is not in ${packageRoot}/package-lock.json`);
    if (key in entries) return;
    entries[key] = entry;
    Object.keys(entry.dependencies ?? {}).forEach(visit);
  };
  names.forEach(visit);
  return entries;
}

/** Relative links of a markdown file to other files, as paths from the package root. */
function linkedFiles(markdownFile: string): string[] {
  const text = fs.readFileSync(path.join(packageRoot, markdownFile), 'utf8');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1].replace(/#.*$/, ''))
    .filter((target) => target !== '' && !/^[a-z]+:/i.test(target))
    .map((target) => path.posix.join(path.posix.dirname(markdownFile), target));
}

describe('the built package', function () {
  it("exports the public API under the name 'ccjs'", async function () {
    // A variable, so that the compiler does not need dist/ to exist before it builds it.
    const packageName = 'ccjs';
    const ccjs = (await import(packageName)) as Record<string, unknown>;
    const names = ['ColGroupMaster', 'ColGroup', 'ColMember', 'InactiveGroup', 'registerClass', 'MsgpackSerializer', 'V8Serializer', 'Reductions', 'DividableArray', 'DenseMatrix', 'SparseMatrix'];
    const errors = ['CCJError', 'GroupError', 'TimeoutError', 'PeerLostError', 'SerializationError', 'TransportError', 'ConfigError', 'CollectiveMismatchError'];
    for (const name of [...names, ...errors]) {
      expect(ccjs, name).to.have.property(name);
    }
    // The package entry and the sources the tests use are one module graph.
    expect(ccjs.GroupError).to.equal(GroupError);
    expect(new GroupError('x')).to.be.instanceOf(CCJError);
  });

  it("can be require()d from CommonJS: the same module, no top-level await in what it imports", function () {
    // Node 20.19+ requires an ES module graph only when nothing in it awaits at the top level.
    const required = createRequire(import.meta.url)('ccjs') as Record<string, unknown>;
    expect(required.GroupError).to.equal(GroupError);
  });

  describe('npm pack', function () {
    let shipped: Set<string>;

    before(async function () {
      shipped = new Set((await pack('--dry-run')).files.map((file) => file.path));
    });

    it('ships the library with its typings, the tools, the native sources with their build script, and the docs', function () {
      const needed = [
        'package.json',
        'README.md',
        'LICENSE',
        'bench/README.md',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/groups/col-group-master.js',
        'dist/transport/tcp/tcp-device.js',
        ...Object.values(manifest.bin),
        'dist/bench/ccjbench.js',
        'dist/bench/ccjtune.js',
        'binding.gyp',
        'native/shm.cc',
        'native/ucx.cc',
        'native/receive-memory.h',
        'scripts/build-native.mjs',
        'scripts/has-ucx.mjs',
      ];
      for (const file of needed) expect(shipped.has(file), file).to.equal(true);
    });

    it('ships no tests, benchmark results, examples or source maps of sources it does not ship', function () {
      const unwanted = [...shipped].filter(
        (file) => /^dist\/(spec|examples)\//.test(file) || file.endsWith('.spec.js') || file.startsWith('bench/results/') || file.startsWith('spec/'),
      );
      expect(unwanted).to.deep.equal([]);
      for (const map of [...shipped].filter((file) => file.endsWith('.map'))) {
        const { sources } = readJson<{ sources: string[] }>(path.join(packageRoot, map));
        for (const source of sources) expect(shipped.has(path.posix.join(path.posix.dirname(map), source)), `${map} maps ${source}`).to.equal(true);
      }
    });

    it("ships every file that its README and bench/README.md link to", function () {
      const links = [...linkedFiles('README.md'), ...linkedFiles('bench/README.md')];
      expect(links.filter((file) => !shipped.has(file))).to.deep.equal([]);
    });
  });

  describe('installed from its tarball into a new project', function () {
    this.timeout(COMMAND_TIMEOUT_MS);
    let consumer: string;

    before(async function () {
      consumer = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-consumer-'));
      const tarball = await pack('--pack-destination', consumer);
      const dependencies = { ccjs: `file:${tarball.filename}` };
      const devDependencies = { '@types/node': manifest.devDependencies['@types/node'] };
      // npm's defaults: no "type", so .js and TypeScript's output are CommonJS.
      writeJson(path.join(consumer, 'package.json'), { name: 'consumer', version: '1.0.0', private: true, dependencies, devDependencies });
      writeJson(path.join(consumer, 'package-lock.json'), {
        name: 'consumer',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'consumer', version: '1.0.0', dependencies, devDependencies },
          'node_modules/ccjs': {
            version: manifest.version,
            resolved: dependencies.ccjs,
            integrity: tarball.integrity,
            hasInstallScript: true,
            dependencies: manifest.dependencies,
            bin: manifest.bin,
          },
          ...lockedPackages([...Object.keys(manifest.dependencies), ...Object.keys(devDependencies)]),
        },
      });
      fs.mkdirSync(path.join(consumer, 'src'));
      fs.writeFileSync(path.join(consumer, 'src', 'main.ts'), TYPESCRIPT_CONSUMER);
      writeJson(path.join(consumer, 'tsconfig.json'), TYPESCRIPT_CONFIG);
      fs.writeFileSync(path.join(consumer, 'main.mjs'), ESM_CONSUMER);
      fs.mkdirSync(path.join(consumer, 'typed'));
      fs.writeFileSync(path.join(consumer, 'typed', 'main.ts'), TYPED_REDUCTIONS);
      for (const [name, config] of Object.entries(TYPE_CHECK_CONFIGS)) writeJson(path.join(consumer, 'typed', name), config);
      const cannot = await npmOffline(['ci', '--prefix', consumer]);
      if (cannot !== undefined) {
        console.warn(`      skipped: ${cannot}`);
        this.skip();
      }
    });

    after(function () {
      if (consumer !== undefined) fs.rmSync(consumer, { recursive: true, force: true });
    });

    it('a CommonJS TypeScript project type-checks against its typings and require()s it', async function () {
      expectSuccess(await run(process.execPath, [typeScriptCompiler, '-p', consumer]), 'tsc');
      const compiled = path.join(consumer, 'dist', 'main.js');
      expect(fs.readFileSync(compiled, 'utf8')).to.contain('require("ccjs")');
      const result = await run(process.execPath, [compiled]);
      expectSuccess(result, 'the CommonJS consumer');
      expect(result.stdout).to.equal('rank 0 of 1: total 1\n');
    });

    it('a strict project without @types/node type-checks typed reductions on TypeScript 5 and 7', async function () {
      const typed = path.join(consumer, 'typed');
      expectSuccess(await run(process.execPath, [typeScriptCompiler, '-p', path.join(typed, 'tsconfig.5.json'), '--pretty', 'false']), 'tsc (TypeScript 5)');
      if (!fs.existsSync(typeScript7Compiler)) {
        console.warn(`      skipped TypeScript 7: ${typeScript7Compiler} is missing (run npm ci in ${packageRoot})`);
        this.skip();
      }
      const version = await run(process.execPath, [typeScript7Compiler, '--version']);
      expect(version.stdout).to.match(/Version 7\./);
      expectSuccess(await run(process.execPath, [typeScript7Compiler, '-p', path.join(typed, 'tsconfig.7.json'), '--pretty', 'false']), 'tsgo (TypeScript 7)');
    });

    it('an ES module imports it and runs on 2 processes under the installed ccjrun', async function () {
      const result = await run(path.join(consumer, 'node_modules', '.bin', 'ccjrun'), ['-n', '2', path.join(consumer, 'main.mjs')]);
      expectSuccess(result, 'ccjrun -n 2 main.mjs');
      expect(result.stdout.trim().split('\n').sort()).to.deep.equal(['[0] rank 0 of 2: total 3', '[1] rank 1 of 2: total 3']);
    });

    it('the installed ccjbench and ccjtune start (every module they import is shipped)', async function () {
      for (const tool of ['ccjbench', 'ccjtune']) {
        const result = await run(path.join(consumer, 'node_modules', '.bin', tool), ['--help']);
        expectSuccess(result, `${tool} --help`);
        expect(result.stdout + result.stderr).to.contain(`usage: ${tool}`);
      }
    });

    it('its install script builds the shared-memory addon where this checkout has one', function () {
      if (!fs.existsSync(path.join(packageRoot, 'build', 'Release', 'ccjs_shm.node'))) this.skip();
      expect(fs.existsSync(path.join(consumer, 'node_modules', 'ccjs', 'build', 'Release', 'ccjs_shm.node'))).to.equal(true);
    });

    // Last: it replaces the built addon with none.
    it('installs and runs without the addon when no compiler works, and says so', async function () {
      const result = await run('npm', ['rebuild', 'ccjs', '--foreground-scripts', '--prefix', consumer], { CXX: '/nonexistent/c++' }, COMMAND_TIMEOUT_MS);
      expectSuccess(result, 'npm rebuild ccjs without a compiler');
      expect(result.stdout + result.stderr).to.contain('ccjs: the native addon could not be built');
      const job = await run(path.join(consumer, 'node_modules', '.bin', 'ccjrun'), ['-n', '2', path.join(consumer, 'main.mjs')]);
      expectSuccess(job, 'ccjrun -n 2 main.mjs without the addon');
      expect(job.stdout).to.contain('[0] rank 0 of 2: total 3');
      expect(job.stderr).to.contain('the shared-memory addon is not built');
    });
  });

  describe('installed from a git checkout', function () {
    this.timeout(COMMAND_TIMEOUT_MS);

    it("npm install <fresh clone of this repository's HEAD> builds it and the project runs a job", async function () {
      const head = await run('git', ['-C', packageRoot, 'rev-parse', 'HEAD']).catch(() => undefined);
      if (head?.code !== 0) {
        console.warn(`      skipped: git is missing or ${packageRoot} is not a git checkout`);
        this.skip();
      }
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-checkout-'));
      try {
        const checkout = path.join(directory, 'ccjs');
        const consumer = path.join(directory, 'consumer');
        // A clone holds what is committed: commit a change to the install path before testing it.
        expectSuccess(await run('git', ['clone', '--quiet', packageRoot, checkout], {}, COMMAND_TIMEOUT_MS), 'git clone');
        fs.mkdirSync(consumer);
        writeJson(path.join(consumer, 'package.json'), { name: 'consumer', version: '1.0.0', private: true });
        fs.writeFileSync(path.join(consumer, 'main.mjs'), ESM_CONSUMER);
        // The addon's build is the tarball's test; here it would only add time.
        const cannot = await npmOffline(['install', '--prefix', consumer, checkout], { CCJS_SKIP_NATIVE: '1' });
        if (cannot !== undefined) {
          console.warn(`      skipped: ${cannot}`);
          this.skip();
        }
        const result = await run(process.execPath, [path.join(consumer, 'main.mjs')]);
        expectSuccess(result, 'the consumer of the checkout');
        expect(result.stdout).to.equal('rank 0 of 1: total 1\n');
      } finally {
        fs.rmSync(directory, { recursive: true, force: true });
      }
    });
  });
});
