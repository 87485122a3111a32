import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveConfig } from '../src/runtime/config.js';
import { ColGroupMaster, ConfigError } from '../src/index.js';
import { chooseDevices, describeDevices } from '../src/engine/endpoints.js';
import type { DeviceRules, Unavailable, World } from '../src/engine/endpoints.js';

/** Directories configFile made, removed after the suite. */
const configDirectories: string[] = [];

function configFile(contents: unknown): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-config-'));
  configDirectories.push(directory);
  const file = path.join(directory, 'ccjs.config.json');
  fs.writeFileSync(file, JSON.stringify(contents));
  return file;
}

describe('configuration', function () {
  after(function () {
    for (const directory of configDirectories.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
  });

  it('takes options over CCJS_* variables over the config file over defaults', function () {
    const file = configFile({ transport: 'tcp', timeoutMs: 1234, eagerLimit: 99, serializer: 'v8' });
    const env = { CCJS_CONFIG: file, CCJS_TIMEOUT_MS: '5678', CCJS_EAGER_LIMIT: '77' };
    const config = resolveConfig({ eagerLimit: 55 }, env);
    expect(config.eagerLimit).to.equal(55);
    expect(config.timeoutMs).to.equal(5678);
    expect(config.transport).to.equal('tcp');
    expect(config.serializer).to.equal('v8');
    expect(config.outOfBandThreshold).to.equal(1024);
    expect(resolveConfig({}, {}).transport).to.equal('auto');
  });

  it('rejects unknown keys and bad values with a ConfigError naming them', function () {
    expect(() => resolveConfig({}, { CCJS_CONFIG: configFile({ transprot: 'tcp' }) })).to.throw(ConfigError, /unknown key 'transprot'.*valid keys: transport/);
    expect(() => resolveConfig({}, { CCJS_TRANSPORT: 'carrier-pigeon' })).to.throw(ConfigError, /CCJS_TRANSPORT is "carrier-pigeon"; valid values: auto, local, tcp, shm, ucx/);
    expect(() => resolveConfig({ timeoutMs: -1 }, {})).to.throw(ConfigError, /option 'timeoutMs' must be an integer >= 1, got -1/);
    expect(() => resolveConfig({ colour: 'red' } as never, {})).to.throw(ConfigError, /unknown option 'colour'/);
    expect(() => resolveConfig({}, { CCJS_CONFIG: '/nonexistent/ccjs.json' })).to.throw(ConfigError, /cannot read config file \/nonexistent\/ccjs.json/);
  });

  it("refuses transport 'local' for a job of several processes", async function () {
    const failure = (options: object) => ColGroupMaster.create({ processRank: 0, processCount: 2, coordinator: '127.0.0.1:1', ...options }).then(() => undefined, (error: unknown) => error);
    const local = await failure({ transport: 'local' });
    expect(local).to.be.instanceOf(ConfigError);
    expect((local as Error).message).to.match(/transport 'local' connects members of one endpoint only, but this job has 2 endpoints/);
  });
});

describe('the device table', function () {
  /** Two hosts: a with processes 0 and 1 (two threads each), b with process 2. */
  const world: World = {
    jobId: 'x',
    processCount: 3,
    threadCount: 2,
    endpoints: [0, 0, 1, 1, 2, 2].map((processRank, rank) => ({ rank, processRank, threadRank: rank % 2, host: processRank < 2 ? 'a' : 'b', hostname: processRank < 2 ? 'a' : 'b', machine: 'm', pid: 1, receiveWindow: 1, addresses: {} })),
  };
  const missing = (...devices: string[]): Unavailable => (device) => (devices.includes(device) ? { reason: 'not built', loud: device === 'shm' } : undefined);
  const devicesOf = (rules: DeviceRules, unavailable: Unavailable = missing()) => chooseDevices(world, 0, rules, unavailable).map((choice) => `${choice.relation}:${choice.device}${choice.note ? '*' : ''}`);
  const auto: DeviceRules = { threads: 'auto', host: 'auto', network: 'auto' };
  const withoutNative = missing('shm', 'ucx');

  it('picks by relation: local for the endpoint itself, the best available device for the others', function () {
    expect(devicesOf(auto, withoutNative)).to.deep.equal(['endpoint:local', 'threads:tcp*', 'host:tcp*', 'host:tcp*', 'network:tcp', 'network:tcp']);
    expect(devicesOf(auto)).to.deep.equal(['endpoint:local', 'threads:shm', 'host:shm', 'host:shm', 'network:ucx', 'network:ucx']);
    // Without the addon shared memory still serves threads, but not processes.
    const threadsOnly: Unavailable = (device, relation) => (device === 'ucx' || (device === 'shm' && relation !== 'threads') ? { reason: 'not built', loud: device === 'shm' } : undefined);
    expect(devicesOf(auto, threadsOnly)).to.deep.equal(['endpoint:local', 'threads:shm', 'host:tcp*', 'host:tcp*', 'network:tcp', 'network:tcp']);
  });

  it('follows explicit rules, and falls back with a note where a device cannot reach or is not built', function () {
    expect(devicesOf({ threads: 'tcp', host: 'tcp', network: 'tcp' })).to.deep.equal(['endpoint:local', 'threads:tcp', 'host:tcp', 'host:tcp', 'network:tcp', 'network:tcp']);
    expect(devicesOf({ threads: 'shm', host: 'shm', network: 'shm' }, missing('ucx'))).to.deep.equal(['endpoint:local', 'threads:shm', 'host:shm', 'host:shm', 'network:tcp*', 'network:tcp*']);
    expect(devicesOf({ ...auto, network: 'ucx' }, withoutNative)).to.deep.equal(['endpoint:local', 'threads:tcp*', 'host:tcp*', 'host:tcp*', 'network:tcp*', 'network:tcp*']);
    expect(describeDevices(world, 0, chooseDevices(world, 0, { threads: 'shm', host: 'shm', network: 'shm' }, missing('ucx')))).to.contain("→ endpoint 4 (process 2, thread 0): tcp (other host) — 'shm' is not used: it cannot serve other host pairs");
  });

  it('reads per-relation overrides from options and CCJS_DEVICES, and the thread count from CCJS_THREADS', function () {
    expect(resolveConfig({}, { CCJS_DEVICES: 'host=tcp, network=ucx' }).devices).to.deep.equal({ host: 'tcp', network: 'ucx' });
    expect(resolveConfig({ devices: { threads: 'tcp' } }, {}).devices).to.deep.equal({ threads: 'tcp' });
    expect(resolveConfig({}, { CCJS_THREADS: '4' }).threads).to.equal(4);
    expect(() => resolveConfig({}, { CCJS_DEVICES: 'moon=tcp' })).to.throw(ConfigError, /CCJS_DEVICES: unknown relation 'moon'; valid: threads, host, network/);
    expect(() => resolveConfig({}, { CCJS_DEVICES: 'host=pigeon' })).to.throw(ConfigError, /CCJS_DEVICES.host is "pigeon"; valid values: auto, local, tcp, shm, ucx/);
    expect(() => resolveConfig({}, { CCJS_THREADS: '0' })).to.throw(ConfigError, /CCJS_THREADS must be an integer >= 1, got "0"/);
  });
});
