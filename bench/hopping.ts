/**
 * Timing hops (half a round trip) between two members, for the hop benchmarks: a series is a
 * value ping-ponged between ranks 0 and 1 of a group, rank 0 timing repetitions of many round
 * trips after a warm-up, rank 1 echoing.
 */
import { ColGroupMaster, ColMember } from '../src/index.js';
import type { MasterOptions } from '../src/index.js';

export type Samples = Record<string, number[]>;

export interface Repeats {
  /** Round trips per repetition. */
  readonly trips: number;
  readonly repetitions: number;
  readonly warmUp: number;
}

/** Round trips of the device benchmarks for small messages, 1 MiB and 16 MiB (fewer with --quick). */
export function hopRepeats(quick: boolean): { readonly small: Repeats; readonly oneMiB: Repeats; readonly sixteenMiB: Repeats } {
  return quick
    ? { small: { trips: 2_000, repetitions: 3, warmUp: 2_000 }, oneMiB: { trips: 20, repetitions: 3, warmUp: 10 }, sixteenMiB: { trips: 4, repetitions: 3, warmUp: 2 } }
    : { small: { trips: 20_000, repetitions: 7, warmUp: 20_000 }, oneMiB: { trips: 100, repetitions: 5, warmUp: 50 }, sixteenMiB: { trips: 10, repetitions: 5, warmUp: 5 } };
}

/** µs per hop of each repetition of `trips` round trips of `roundTrip` (two hops each). */
export async function timeHops(roundTrip: () => Promise<void>, { trips, repetitions, warmUp }: Repeats): Promise<number[]> {
  for (let i = 0; i < warmUp; i += 1) await roundTrip();
  const samples: number[] = [];
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < trips; i += 1) await roundTrip();
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / trips / 2);
  }
  return samples;
}

/** Round trips the echoing side serves for one series. */
export function echoes({ trips, repetitions, warmUp }: Repeats): number {
  return warmUp + repetitions * trips;
}

export interface Series {
  readonly name: string;
  readonly value: unknown;
  readonly repeats: Repeats;
  /** Send with sendSync (MPI_Send's contract for large messages: no copy at the sender) rather than sendAsync. */
  readonly sync?: boolean;
  /** Receive into one buffer of the value's size, as MPI_Recv and mpi4py's Recv do, rather than into new memory each time. */
  readonly into?: boolean;
}

/** Ping-pongs each series' value between ranks 0 and 1 of group 'hops'; rank 0 keeps the samples. */
export class Hopper extends ColMember {
  readonly samples: Samples = {};

  constructor(
    private readonly master: ColGroupMaster,
    private readonly series: readonly Series[],
  ) {
    super();
  }

  override async run(): Promise<void> {
    const group = await this.master.getGroup('hops', 2);
    const rank = group.getRank(this);
    for (const { name, value, repeats, sync, into } of this.series) {
      const send = (message: unknown, to: number) => (sync === true ? this.sendSync(group, message, to) : this.sendAsync(group, message, to));
      const options = into === true && ArrayBuffer.isView(value) ? { into: new Uint8Array(value.byteLength) } : undefined;
      if (rank === 0) {
        this.samples[name] = await timeHops(async () => {
          await send(value, 1);
          await this.receive(group, 1, options);
        }, repeats);
      } else {
        for (let i = echoes(repeats); i > 0; i -= 1) await send(await this.receive(group, 0, options), 0);
      }
    }
  }
}

/** Runs Hoppers: both in this endpoint (`both`), or one here with its peer elsewhere; rank 0's samples. */
export async function hop(master: ColGroupMaster, both: boolean, series: readonly Series[]): Promise<Samples> {
  const members = Array.from({ length: both ? 2 : 1 }, () => new Hopper(master, series));
  for (const member of members) master.addMember('hops', member);
  await Promise.all(members.map((member) => member.start()));
  return members.reduce((samples, member) => ({ ...samples, ...member.samples }), {});
}

/** One endpoint of a two-endpoint job (processes or threads): endpoint 0 prints the samples, prefixed. */
export async function hopEndpoint(prefix: string, series: readonly Series[], options: MasterOptions = {}): Promise<void> {
  const master = await ColGroupMaster.create(options);
  const samples = await hop(master, false, series);
  if (master.rank === 0) process.stdout.write(`${JSON.stringify(prefixed(prefix, samples))}\n`);
}

/** Samples of a whole run, and how to add one measurement's. */
export function collectSamples(): { readonly all: Samples; keep(samples: Samples): void } {
  const all: Samples = {};
  return {
    all,
    keep(samples) {
      for (const [name, values] of Object.entries(samples)) (all[name] ??= []).push(...values);
    },
  };
}

export function prefixed(prefix: string, samples: Samples): Samples {
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [`${prefix} ${name}`, values]));
}
