import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveConfig } from '../src/config.js';
import { ColGroupMaster, ConfigError } from '../src/index.js';

function configFile(contents: unknown): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-config-'));
  const file = path.join(directory, 'ccjs.config.json');
  fs.writeFileSync(file, JSON.stringify(contents));
  return file;
}

describe('configuration', function () {
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

  it("refuses transport 'local' for a job of several processes, and devices not in this build", async function () {
    const failure = (options: object) => ColGroupMaster.create({ processRank: 0, processCount: 2, coordinator: '127.0.0.1:1', ...options }).then(() => undefined, (error: unknown) => error);
    const local = await failure({ transport: 'local' });
    expect(local).to.be.instanceOf(ConfigError);
    expect((local as Error).message).to.match(/transport 'local' connects members of one endpoint only, but this job has 2 endpoints/);
    expect(await failure({ transport: 'ucx' })).to.be.instanceOf(ConfigError);
  });
});
