/**
 * The job secret every connection of a job proves it knows (src/security/handshake.ts). ccjrun
 * makes one per job; elsewhere it comes from CCJS_SECRET or CCJS_SECRET_FILE. A job that listens
 * on loopback only may go without: its secret is then derived from what its launcher gives every
 * process (the job key), which keeps single-host jobs working with no setup (docs/API.md says
 * what that protects against).
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { ConfigError } from '../base/errors.js';

/** Secrets shorter than this (in bytes) are refused: they could be guessed. */
const MIN_SECRET_BYTES = 16;

const HOW_TO_SET =
  'set CCJS_SECRET to the same 64 hex digits in every process (e.g. from `openssl rand -hex 32`), ' +
  'or CCJS_SECRET_FILE to a file only its owner can read (chmod 600) holding them; ccjrun does this by itself';

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The job's secret. `exposed` names the first non-loopback address the job listens on, if any;
 * without a configured secret such a job refuses to start. Throws ConfigError (never quoting the secret).
 */
export function resolveSecret(env: Environment, jobKey: string, exposed: string | undefined): Buffer {
  const text = env.CCJS_SECRET || undefined;
  const file = env.CCJS_SECRET_FILE || undefined;
  if (text !== undefined && file !== undefined) throw new ConfigError(`CCJS_SECRET and CCJS_SECRET_FILE are both set; set only one`);
  if (text !== undefined) return parseSecret(text, 'CCJS_SECRET');
  if (file !== undefined) return parseSecret(readSecretFile(file), `the file ${file} (CCJS_SECRET_FILE)`);
  if (exposed !== undefined) throw new ConfigError(`this job listens on ${exposed}, which is not loopback, but has no job secret: ${HOW_TO_SET}`);
  return createHash('sha256').update('ccjs job secret derived from the job key\0').update(jobKey).digest();
}

function readSecretFile(file: string): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    throw new ConfigError(`CCJS_SECRET_FILE=${file} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  if (!stat.isFile()) throw new ConfigError(`CCJS_SECRET_FILE=${file} is not a file`);
  if ((stat.mode & 0o077) !== 0) {
    throw new ConfigError(`CCJS_SECRET_FILE=${file} may be read by group or others (mode ${(stat.mode & 0o777).toString(8)}); make it private with chmod 600 ${file}`);
  }
  return fs.readFileSync(file, 'utf8');
}

function parseSecret(text: string, source: string): Buffer {
  const hex = text.trim();
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) throw new ConfigError(`${source} does not hold a job secret in hex digits: ${HOW_TO_SET}`);
  const secret = Buffer.from(hex, 'hex');
  if (secret.length < MIN_SECRET_BYTES) throw new ConfigError(`${source} holds a job secret of ${secret.length} bytes, fewer than ${MIN_SECRET_BYTES}: ${HOW_TO_SET}`);
  return secret;
}
