/**
 * How ccjrun starts a process on another host: `AGENT HOST node remote.js SPEC`, where SPEC is
 * the process's working directory, environment, script and arguments as base64url JSON. One word
 * of [A-Za-z0-9_-] reads the same to ssh (which joins the words into a remote shell command) and
 * to agents that run the words as they are (`ip netns exec HOST ...`), so nothing needs quoting.
 * This entry then runs the script in this very process. When the launcher goes away, the agent
 * closes our stdin, and the process stops as if ccjrun had stopped it.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../base/errors.js';

export interface RemoteSpec {
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly script: string;
  readonly args: readonly string[];
}

export function encodeRemoteSpec(spec: RemoteSpec): string {
  return Buffer.from(JSON.stringify(spec)).toString('base64url');
}

function decodeRemoteSpec(word: string | undefined): RemoteSpec {
  try {
    const spec = JSON.parse(Buffer.from(word ?? '', 'base64url').toString()) as Partial<RemoteSpec>;
    const strings = (values: unknown): values is string[] => Array.isArray(values) && values.every((value) => typeof value === 'string');
    if (typeof spec.cwd === 'string' && typeof spec.script === 'string' && strings(spec.args) && typeof spec.env === 'object' && spec.env !== null && strings(Object.values(spec.env))) {
      return spec as RemoteSpec;
    }
  } catch {
    // Reported below.
  }
  throw new ConfigError('ccjs remote start: the argument is not a process description made by ccjrun');
}

/** The file that `remoteCommand` runs on the other host (the same path there: installations match, as for mpirun). */
export const REMOTE_ENTRY = path.join(import.meta.dirname, 'remote.js');

/** Runs the described script here; resolves once it was loaded (it then runs on its own). */
async function runRemote(word: string | undefined): Promise<void> {
  const spec = decodeRemoteSpec(word);
  process.chdir(spec.cwd);
  Object.assign(process.env, spec.env);
  // The script, and the worker threads that run it again, see the argv ccjrun would have given.
  process.argv = [process.execPath, spec.script, ...spec.args];
  process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
  process.stdin.on('error', () => process.kill(process.pid, 'SIGTERM'));
  process.stdin.resume();
  // Watching stdin must not keep a finished process alive.
  (process.stdin as unknown as { unref?: () => void }).unref?.();
  await import(pathToFileURL(spec.script).href);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === REMOTE_ENTRY) {
  await runRemote(process.argv[2]).catch((error: unknown) => {
    process.stderr.write(`ccjs remote start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
