/**
 * The layers of ccjs and the one direction their imports take (README, "Layout"); type imports
 * count. From the top: src/index.ts; groups/ (the CCJ API); src/runtime/ and src/cli/ (the job
 * runtime, beside the API); src/collectives/; src/engine/; transport/ (the frame contract at its
 * root, one folder per device); dividable/, reduction/, src/serialization/; and the leaves,
 * src/security/ and src/base/. spec/layers.spec.ts runs this file.
 */
const code = '^(src|groups|transport|reduction|dividable)/';
/** A rule that forbids `from` to import anything of ccjs but `allowed`. */
function only(name, from, allowed) {
  return {
    name,
    severity: 'error',
    comment: `${from} may import only ${allowed.join(', ')}`,
    from: { path: from },
    to: { path: code, pathNot: allowed.map((p) => `^${p}`) },
  };
}

module.exports = {
  forbidden: [
    only('base-is-a-leaf', '^src/base/', ['src/base/']),
    only('security-is-a-leaf', '^src/security/', ['src/security/', 'src/base/']),
    only('serialization-below-the-engine', '^src/serialization/', ['src/serialization/', 'src/base/']),
    only('reduction-below-the-collectives', '^reduction/', ['reduction/', 'src/base/']),
    only('dividable-below-the-collectives', '^dividable/', ['dividable/', 'reduction/', 'src/serialization/', 'src/base/']),
    only('transport-below-the-engine', '^transport/', ['transport/', 'src/security/', 'src/base/']),
    only('engine-below-the-collectives', '^src/engine/', ['src/engine/', 'transport/', 'src/serialization/', 'src/base/']),
    only('collectives-below-the-api', '^src/collectives/', ['src/collectives/', 'src/engine/', 'transport/', 'dividable/', 'reduction/', 'src/serialization/', 'src/base/']),
    only('runtime-beside-the-api', '^src/(runtime|cli)/', ['src/runtime/', 'src/cli/', 'src/collectives/', 'src/engine/', 'transport/', 'dividable/', 'reduction/', 'src/serialization/', 'src/security/', 'src/base/']),
    {
      name: 'runtime-below-the-cli',
      severity: 'error',
      comment: 'the CLI uses the job runtime, never the other way',
      from: { path: '^src/runtime/' },
      to: { path: '^src/cli/' },
    },
    only('api-below-the-entry', '^groups/', ['groups/', 'src/runtime/', 'src/collectives/', 'src/engine/', 'transport/', 'dividable/', 'reduction/', 'src/serialization/', 'src/security/', 'src/base/']),
    {
      name: 'frame-contract-below-the-devices',
      severity: 'error',
      comment: "the frame contract at transport/'s root knows no device",
      from: { path: '^transport/[^/]+$' },
      to: { path: '^transport/[^/]+/' },
    },
    {
      name: 'devices-apart',
      severity: 'error',
      comment: 'a device imports the frame contract, never another device',
      from: { path: '^transport/([^/]+)/' },
      to: { path: '^transport/[^/]+/', pathNot: '^transport/$1/' },
    },
    {
      name: 'no-cycle-across-folders',
      severity: 'error',
      comment: 'a cycle of imports stays inside one folder',
      from: { path: '^(.+)/[^/]+$' },
      to: { circular: true, viaSomeNot: '^$1/[^/]+$' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
