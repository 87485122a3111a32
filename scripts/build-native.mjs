#!/usr/bin/env node
/**
 * npm's install step: builds the native addons (binding.gyp) with node-gyp: shared memory, UCX,
 * and the reductions' loops. They are optional: when they cannot be built the package still
 * installs and says what is off and how to turn it on; ccjs then reports the device unavailable
 * once and uses TCP for those pairs, and reduces typed arrays with JavaScript loops.
 * CCJS_SKIP_NATIVE=1 skips the build; the UCX addon is built only where UCX's headers are
 * (scripts/has-ucx.mjs; CCJS_NO_UCX=1 leaves it out).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function nodeGyp() {
  // npm hands its bundled node-gyp to install scripts; outside npm, look for one.
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  for (const candidate of [path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')]) {
    if (fs.existsSync(candidate)) return [process.execPath, candidate];
  }
  try {
    return [process.execPath, createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js')];
  } catch {
    return ['node-gyp'];
  }
}

function headersFlag() {
  // Build against the headers of the running Node when it has them, rather than downloading them.
  if (process.env.npm_config_nodedir) return [];
  const prefixes = [process.config.variables.node_prefix, path.resolve(path.dirname(process.execPath), '..')];
  const prefix = prefixes.find((candidate) => candidate && fs.existsSync(path.join(candidate, 'include', 'node', 'node_api.h')));
  return prefix === undefined ? [] : [`--nodedir=${prefix}`];
}

const off =
  'ccjs: shared memory between processes is off until the addon is built (threads still share memory, processes use TCP),\n' +
  'ccjs: the built-in reductions of typed arrays run as JavaScript loops (several times slower on large arrays),\n' +
  'ccjs: and the opt-in frame checksum (checksum, CCJS_CHECKSUM) runs in JavaScript (several times slower).\n' +
  'ccjs: to turn it on, install g++, make and python3 (apt-get install g++ make python3), then run: npm rebuild ccjs';

if (process.env.CCJS_SKIP_NATIVE === '1') {
  console.warn(`ccjs: native build skipped (CCJS_SKIP_NATIVE=1).\n${off}`);
  process.exit(0);
}
const [command, ...args] = nodeGyp();
const result = spawnSync(command, [...args, 'rebuild', ...headersFlag()], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
if (result.status !== 0) {
  console.warn(`ccjs: the native addon could not be built (${result.error?.message ?? `node-gyp exited with ${result.status}`}).\n${off}`);
} else if (spawnSync(process.execPath, [path.join(root, 'scripts', 'has-ucx.mjs')], { encoding: 'utf8' }).stdout !== '1') {
  console.warn(
    process.env.CCJS_NO_UCX === '1'
      ? 'ccjs: the UCX device was not built (CCJS_NO_UCX=1).'
      : "ccjs: the UCX device (InfiniBand, RoCE) is off: UCX's headers are not installed. To turn it on: apt-get install libucx-dev, then npm rebuild ccjs",
  );
}
