/**
 * How an endpoint leaves its job once its members are done: it says what arrived but was never
 * received, closes its engine and devices and its part of the trace file, says goodbye to the
 * coordinator (endpoint 0 then closes it and joins the trace file's parts), and stops the heartbeats.
 */
import type { Joined } from './bootstrap.js';
import type { HeartbeatThread } from './heartbeat.js';
import { workerThreadsEnded } from './threads.js';

export async function leaveJob(job: Joined): Promise<void> {
  const { engine, label, traceFile, client, coordinator, heartbeat } = job;
  // Nothing is dropped silently: say what arrived but was never received.
  for (const [key, count] of engine.unreceived()) {
    process.stderr.write(`ccjs: ${label} closes with ${count} unreceived message(s) for context/source/destination/tag ${key}\n`);
  }
  await engine.close();
  // Written before the goodbye: once every endpoint has said it, endpoint 0 joins the parts.
  traceFile?.close();
  // The process's goodbye to the heartbeats, once its last endpoint is done: not awaited but by
  // process 0, whose heartbeat thread serves until the coordinator has every goodbye.
  if (coordinator === undefined) void stopHeartbeat(heartbeat);
  await client.bye();
  await coordinator?.close();
  if (coordinator !== undefined) {
    await stopHeartbeat(heartbeat);
    traceFile?.join(job.world.endpoints.length);
  }
  job.stopListening?.();
}

async function stopHeartbeat(heartbeat: HeartbeatThread | undefined): Promise<void> {
  if (heartbeat === undefined) return;
  await workerThreadsEnded();
  await heartbeat.stop();
}
