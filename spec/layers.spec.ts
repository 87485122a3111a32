import { expect } from 'chai';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { packageRoot } from './harness.js';

const depcruise = path.join(packageRoot, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
  readonly cycle?: readonly { readonly name: string }[];
}

/** What dependency-cruiser says of the library's sources under .dependency-cruiser.cjs (type imports included). */
function violations(): { modules: number; violations: readonly Violation[] } {
  const folders = ['src', 'groups', 'transport', 'reduction', 'dividable'];
  const result = spawnSync(process.execPath, [depcruise, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', ...folders], { cwd: packageRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.stdout === '') throw new Error(`dependency-cruiser printed nothing: ${result.stderr}`);
  const report = JSON.parse(result.stdout) as { modules: readonly unknown[]; summary: { violations: readonly Violation[] } };
  return { modules: report.modules.length, violations: report.summary.violations };
}

function describeViolation(violation: Violation): string {
  const cycle = violation.cycle === undefined ? '' : ` (cycle: ${violation.cycle.map((step) => step.name).join(' → ')})`;
  return `${violation.rule.name}: ${violation.from} → ${violation.to}${cycle}`;
}

describe('layers (README, Layout)', function () {
  this.timeout(120_000);

  it('every import goes down a layer or stays in its folder, and no cycle crosses a folder', () => {
    const { modules, violations: found } = violations();
    expect(modules, 'modules cruised').to.be.greaterThan(100);
    expect(found.map(describeViolation)).to.deep.equal([]);
  });
});
