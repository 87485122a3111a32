import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot, run } from './harness.js';

const tsc = path.join(packageRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const typedoc = path.join(packageRoot, 'node_modules', 'typedoc', 'bin', 'typedoc');
const publicTypes = path.join(packageRoot, 'spec', 'fixtures', 'types', 'public-types.ts');
const EXPECT_ERROR = /^\s*\/\/ @ts-expect-error.*\n/gm;

/**
 * Type-checks `source` as a file of a project that depends on ccjs: node_modules/ccjs links to
 * this package, so 'ccjs' resolves to its published declarations, and those are checked too.
 */
async function typeCheckAsUser(source: string): Promise<{ code: number | null; output: string }> {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-types-'));
  try {
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(packageRoot, path.join(project, 'node_modules', 'ccjs'));
    fs.writeFileSync(path.join(project, 'user.ts'), source);
    const compilerOptions = {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      typeRoots: [path.join(packageRoot, 'node_modules', '@types')],
      types: ['node'],
    };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['user.ts'] }));
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    const result = await run(process.execPath, [tsc, '-p', path.join(project, 'tsconfig.json'), '--pretty', 'false']);
    return { code: result.code, output: result.stdout + result.stderr };
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
}

/** Relative links of a markdown file: [text](target), without anchors and web addresses. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => (match[1] as string).replace(/#.*$/, ''))
    .filter((target) => target !== '' && !/^[a-z]+:/.test(target));
}

describe('the documentation', function () {
  it('documents every public name: TypeDoc builds the API reference without a warning', async function () {
    // treatWarningsAsErrors and the notDocumented validation are in typedoc.json.
    const result = await run(process.execPath, [typedoc, '--options', path.join(packageRoot, 'typedoc.json'), '--tsconfig', path.join(packageRoot, 'tsconfig.json'), '--emit', 'none']);
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    expect(result.stdout + result.stderr).to.not.match(/warning|error/i);
  });

  it('rejects misspelled algorithm names and hides internal members in the published types', async function () {
    const source = fs.readFileSync(publicTypes, 'utf8');
    // Without the markers, exactly the marked lines must fail.
    const bare = source.replace(EXPECT_ERROR, '');
    const [marked, unmarked] = await Promise.all([typeCheckAsUser(source), typeCheckAsUser(bare)]);
    expect(marked.code, marked.output).to.equal(0);

    const markedLines = new Set<number>();
    let removed = 0;
    source.split('\n').forEach((line, index) => {
      if (/^\s*\/\/ @ts-expect-error/.test(line)) {
        removed += 1;
        markedLines.add(index + 2 - removed);
      }
    });
    const failedLines = new Set([...unmarked.output.matchAll(/user\.ts\((\d+),\d+\): error/g)].map((match) => Number(match[1])));
    expect(unmarked.code).to.not.equal(0);
    expect([...failedLines].sort((a, b) => a - b), unmarked.output).to.deep.equal([...markedLines].sort((a, b) => a - b));
    expect(unmarked.output).to.match(/'"rabenseifer"' is not assignable to type/);
  });

  it('stand alone: the README and the docs link only to files of the repository', function () {
    const documents = ['README.md', 'bench/README.md', 'docs/API.md', 'docs/getting-started.md'];
    for (const document of documents) {
      const file = path.join(packageRoot, document);
      const text = fs.readFileSync(file, 'utf8');
      for (const target of relativeLinks(text)) {
        const resolved = path.resolve(path.dirname(file), target);
        expect(resolved.startsWith(packageRoot + path.sep), `${document} links outside the repository: ${target}`).to.equal(true);
        expect(fs.existsSync(resolved), `${document} links to ${target}, which does not exist`).to.equal(true);
      }
      expect(text, document).to.not.match(/\.\.\/shared|\bseeds\b|\bseed \d{3}\b/);
    }
  });
});
