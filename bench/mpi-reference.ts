/**
 * The MPI references of the side-by-side benchmarks (bench/shm.ts, bench/manycore.ts): Open MPI in
 * C (bench/reference/*.c, compiled here with mpicc, or found prebuilt in $MC_CCJS/bin-ref/, where
 * ../shared/manycore/pack.sh puts them for a machine without a compiler) and mpi4py
 * (bench/reference/*.py), run under mpirun over shared memory (ob1 and vader): $MPIRUN when set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface References {
  /** mpirun and its flags. */
  readonly mpirun: readonly string[];
  /** The C programs that could be built or were found, by name (pingpong for pingpong.c). */
  readonly programs: ReadonlyMap<string, string>;
  /** A python3 that imports mpi4py under mpirun; undefined when none does. */
  readonly python: string | undefined;
  /** What is missing, and how to get it, for the results' notes. */
  readonly missing: readonly string[];
}

/** bench/reference/<file> of this checkout. */
export function referenceFile(file: string): string {
  return path.join(ROOT, 'bench', 'reference', file);
}

function mpirunCommand(): string[] {
  const fromEnvironment = process.env.MPIRUN?.trim();
  if (fromEnvironment) return fromEnvironment.split(/\s+/);
  // Not bound to cores, as ccjs's processes are not; the shared-memory BTL, not UCX.
  return ['mpirun', ...(process.getuid?.() === 0 ? ['--allow-run-as-root'] : []), '--oversubscribe', '--bind-to', 'none', '--mca', 'pml', 'ob1', '--mca', 'btl', 'self,vader'];
}

/** The program built from bench/reference/<name>.c: prebuilt in $MC_CCJS/bin-ref, else compiled now; a string saying why not otherwise. */
function program(name: string): string | { readonly why: string } {
  const prebuilt = path.join(process.env.MC_CCJS ?? ROOT, 'bin-ref', name);
  if (fs.existsSync(prebuilt)) return prebuilt;
  const built = path.join(os.tmpdir(), `ccjs-bench-${name}`);
  const compiled = spawnSync('mpicc', ['-O2', '-o', built, referenceFile(`${name}.c`)], { encoding: 'utf8' });
  return compiled.status === 0 ? built : { why: compiled.error?.message ?? compiled.stderr.trim() };
}

/** Finds mpirun's flags, builds (or finds) the C programs `names`, and looks for mpi4py. */
export function findReferences(names: readonly string[]): References {
  const mpirun = mpirunCommand();
  const missing: string[] = [];
  const programs = new Map<string, string>();
  for (const name of names) {
    const found = program(name);
    if (typeof found === 'string') programs.set(name, found);
    else missing.push(`Open MPI's ${name} (mpicc: ${found.why}; apt-get install openmpi-bin libopenmpi-dev)`);
  }
  const [command, ...flags] = mpirun as [string, ...string[]];
  const python = ['python3', '/usr/bin/python3'].find((candidate) => spawnSync(command, [...flags, '-n', '1', candidate, '-c', 'from mpi4py import MPI'], { encoding: 'utf8' }).status === 0);
  if (python === undefined) missing.push('mpi4py (no python3 here imports it under mpirun; apt-get install python3-mpi4py)');
  return { mpirun, programs, python, missing };
}

/** Runs `command` on `processes` ranks under mpirun; returns what it printed on stdout. */
export function mpiOutput(references: References, processes: number, command: readonly string[]): string {
  const [mpirun, ...flags] = references.mpirun as [string, ...string[]];
  return execFileSync(mpirun, [...flags, '-n', String(processes), ...command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

/** Runs an MPI program on `processes` ranks whose rank 0 prints one number per line (a repetition's time). */
export function mpiSamples(references: References, processes: number, command: readonly string[]): number[] {
  return mpiOutput(references, processes, command)
    .split('\n')
    .filter((line) => /^[\d.]+$/.test(line.trim()))
    .map(Number);
}
