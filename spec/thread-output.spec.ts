import { expect } from 'chai';
import path from 'node:path';
import { ccjrun, environmentWithoutLaunchers, packageRoot, run } from './harness.js';

describe('output of many worker threads (issue 30, item 13)', function () {
  it('ccjrun --threads 12 forwards every thread\'s lines without a MaxListenersExceededWarning', async function () {
    const hello = path.join(packageRoot, 'examples', 'tutorial', 'hello.ts');
    const result = await run(process.execPath, [ccjrun, '-n', '1', '--threads', '12', hello], environmentWithoutLaunchers());
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.not.include('MaxListenersExceededWarning');
    expect(result.stderr).to.not.include('memory leak');
    for (let rank = 0; rank < 12; rank += 1) expect(result.stdout).to.include(`[${rank}] hello from rank ${rank} of 12`);
  });
});
