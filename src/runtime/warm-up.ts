/**
 * Cold start (issue 31, item 6): the first calls of a job ran many times slower than later ones
 * (the first 100 allReduce calls of 8 B between two processes on shared memory ~5× the later
 * ones, the first 1,000 hops ~4×), mostly in code not yet compiled and tuned by V8: the engine's
 * sending, matching and spinning, the device's rings. So before create() returns, the endpoints
 * of each host pass WARM_UP_STEPS small messages around a ring of theirs (each sends to the next,
 * and waits for the previous one's, as a hop does), through the devices and paths the job's
 * calls take.
 *
 * Only where the endpoints spin (a core each, see spinning.ts): that is where a call costs a hop
 * and the compiled code shows; a host with more endpoints than cores pays a wake-up per step
 * anyway. Every endpoint of a host decides alike, from the world alone, so none waits for a
 * message that no one sends. The messages name context 0, which no group has: its route exists
 * from before the devices connect (so no early message is taken for a lie) until the warm-up ends.
 */
import { SendMode } from '../engine/calls.js';
import type { Route } from '../engine/calls.js';
import type { Engine } from '../engine/engine.js';
import type { World } from '../engine/endpoints.js';
import { Delivery, MemberReceive, POINT_TO_POINT, messageFrame } from '../engine/messages.js';
import type { Serializer } from '../serialization/serializer.js';
import { oversubscribed } from './spinning.js';

/** Messages each endpoint sends (and receives) in the warm-up: enough for V8 to compile the paths of a hop. */
export const WARM_UP_STEPS = 300;
const WARM_UP_CONTEXT = 0;

/** The endpoints of `rank`'s host that warm up together, in rank order; empty where there is no warm-up. */
function ringOf(world: World, rank: number): number[] {
  const host = (world.endpoints[rank] as World['endpoints'][number]).host;
  const ring = world.endpoints.filter((endpoint) => endpoint.host === host).map((endpoint) => endpoint.rank);
  return ring.length < 2 || oversubscribed(world, rank) ? [] : ring;
}

/** Before the devices connect: the route of the warm-up's messages, where this endpoint warms up. */
export function warmUpRoute(engine: Engine, world: World, rank: number): Route | undefined {
  if (ringOf(world, rank).length === 0) return undefined;
  return engine.route(WARM_UP_CONTEXT, 'warm-up', Int32Array.from(world.endpoints, (endpoint) => endpoint.rank));
}

/** Runs the warm-up over `route` (warmUpRoute's), then forgets it: later messages of context 0 are lies again. */
export async function warmUp(engine: Engine, route: Route, world: World, rank: number, serializer: Serializer): Promise<void> {
  const ring = ringOf(world, rank);
  const at = ring.indexOf(rank);
  const next = ring[(at + 1) % ring.length] as number;
  const previous = ring[(at - 1 + ring.length) % ring.length] as number;
  const value = new Float64Array(1);
  try {
    for (let step = 0; step < WARM_UP_STEPS; step += 1) {
      const receive = new MemberReceive(route, 'warm-up', undefined, rank, previous, 0, serializer, Delivery.Value, undefined);
      engine.post(receive);
      const sent = engine.send(route, messageFrame(serializer, value, 0, WARM_UP_CONTEXT, rank, next, 0, POINT_TO_POINT), SendMode.Captured, undefined, 'warm-up');
      await receive.result(true);
      await sent;
    }
  } finally {
    engine.forgetRoute(WARM_UP_CONTEXT);
  }
}
