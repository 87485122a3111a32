#!/usr/bin/env node
/**
 * npm's prepare step: compiles the TypeScript into dist/ (`npm run build`).
 *
 * npm runs it in a development checkout after `npm install`, and in a git dependency's clone after
 * installing its dev dependencies there. For a directory dependency (`npm install ../ccjs`) npm
 * installs nothing into that directory, so a fresh checkout had neither the compiler nor the
 * packages dist/ imports (the build failed with `tsc: not found`). Then this first installs the
 * checkout's dependencies from its lockfile, as npm does for a git dependency: dev ones included
 * whatever the caller omits, into this directory rather than a global or the consumer's prefix,
 * and without scripts (this one would recurse; npm runs the addon's install script next anyway).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

/** Whether Node would find package `name` from the root: in its node_modules or one above it (hoisted). */
function isInstalled(name) {
  for (let directory = root; ; directory = path.dirname(directory)) {
    if (fs.existsSync(path.join(directory, 'node_modules', name, 'package.json'))) return true;
    if (path.dirname(directory) === directory) return false;
  }
}

/** Runs npm: the one running this script when there is one (npm tells its scripts where it is). */
function npm(args) {
  const options = { cwd: root, stdio: 'inherit' };
  const npmCli = process.env.npm_execpath;
  const result = npmCli ? spawnSync(process.execPath, [npmCli, ...args], options) : spawnSync('npm', args, options);
  if (result.status !== 0) {
    console.error(`ccjs: npm ${args.join(' ')} failed in ${root} (${result.error?.message ?? `exit code ${result.status}`})`);
    process.exit(result.status ?? 1);
  }
}

const missing = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => !isInstalled(name));
if (missing.length > 0) {
  console.warn(`ccjs: building needs ${missing.join(', ')}: installing the dependencies of ${root}`);
  npm(['install', '--prefix', root, '--global=false', '--include=dev', '--ignore-scripts', '--no-save', '--no-audit', '--no-fund']);
}
npm(['run', 'build']);
