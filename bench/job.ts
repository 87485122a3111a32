/** Starts a benchmark as a job of `processes` processes on this machine, or on hosts through ccjrun; resolves with rank 0's output. */
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** bin/ccjrun.js of this package (this file is dist/bench/job.js). */
const CCJRUN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'ccjrun.js');

export async function freeLoopbackPort(): Promise<number> {
  const server = net.createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs `script args` in a child; resolves with its stdout, rejects on a non-zero exit. */
export function runScript(script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, onOutput?: (text: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      onOutput?.(chunk.toString());
    });
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${script} ${args.join(' ')} exited with ${code}`))));
  });
}

/** Runs `script` as every rank of a job of `processes` processes (TCP between them); `onOutput` sees rank 0's output as it comes. */
export async function runJob(script: string, processes: number, args: readonly string[], transport = 'tcp', onOutput?: (text: string) => void): Promise<string> {
  const coordinator = `127.0.0.1:${await freeLoopbackPort()}`;
  const outputs = await Promise.all(
    Array.from({ length: processes }, (_, rank) =>
      runScript(script, args, { CCJS_RANK: String(rank), CCJS_SIZE: String(processes), CCJS_COORDINATOR: coordinator, CCJS_TRANSPORT: transport }, rank === 0 ? onOutput : undefined),
    ),
  );
  return outputs[0];
}

/**
 * Runs `script` as every rank of a job on `hosts` (ccjrun's --hosts list, e.g. "a:2,b:2") started
 * through `launchAgent`; `onOutput` sees rank 0's output as it comes, without ccjrun's prefix.
 */
export async function runHostsJob(script: string, hosts: string, launchAgent: string, args: readonly string[], transport: string, onOutput?: (text: string) => void): Promise<string> {
  let output = '';
  const rankZero = lineReader((line) => {
    if (!line.startsWith('[0] ')) return;
    const mine = `${line.slice(4)}\n`;
    output += mine;
    onOutput?.(mine);
  });
  await runScript(CCJRUN, ['--hosts', hosts, '--launch-agent', launchAgent, script, ...args], { CCJS_TRANSPORT: transport }, rankZero);
  return output;
}

/** Calls `onLine` with each whole line of a stream given in chunks. */
export function lineReader(onLine: (line: string) => void): (chunk: string) => void {
  let pending = '';
  return (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() as string;
    lines.forEach(onLine);
  };
}

/** Runs `script` as one process of `threads` endpoints (its main thread and worker threads); resolves with endpoint 0's output. */
export async function runThreads(script: string, threads: number, args: readonly string[], transport?: string): Promise<string> {
  const coordinator = `127.0.0.1:${await freeLoopbackPort()}`;
  const env = { CCJS_RANK: '0', CCJS_SIZE: '1', CCJS_THREADS: String(threads), CCJS_COORDINATOR: coordinator };
  return runScript(script, args, transport === undefined ? env : { ...env, CCJS_TRANSPORT: transport });
}
