/**
 * A flood for spec/floods.spec.ts: rank 0 sends `count` messages with `await sendAsync` in a loop
 * to rank 1, which sleeps `sleepMs` (its member receives nothing; its endpoint lives) and then
 * receives them all, checking each one's content and place. Messages of `bytes` > 0 are
 * Uint32Arrays with a pattern only their index has (one buffer at the sender, refilled once each
 * send resolved, as sendAsync allows); `bytes` 0 means a small object. Both report their RSS
 * before the flood and the peak the kernel recorded (getrusage's maxrss), which no sampling can miss.
 */
import type { ColGroupMaster } from '../../src/index.js';
import type { Body } from './p2p.js';

export interface FloodMemory {
  readonly rank: number;
  readonly messages: number;
  /** RSS once the group is formed, before the first message (bytes). */
  readonly rssBefore: number;
  /** The most this process's RSS ever was (bytes). */
  readonly peakRss: number;
  readonly seconds: number;
  readonly receiveWindow: number;
  readonly sendBuffer: number;
  /** The engine's high-water mark of unmatched bytes (with their records) at this endpoint. */
  readonly unexpectedHighWater: number;
}

/** Word `word` of message `index`. */
function patternWord(index: number, word: number): number {
  return (Math.imul(index, 0x9e37_79b1) + word) >>> 0;
}

function fill(words: Uint32Array, index: number): Uint32Array {
  const first = patternWord(index, 0);
  for (let word = 0; word < words.length; word += 1) words[word] = (first + word) >>> 0;
  return words;
}

function check(received: unknown, index: number, length: number): void {
  if (!(received instanceof Uint32Array) || received.length !== length) throw new Error(`message ${index}: expected a Uint32Array(${length}), got ${shown(received)}`);
  const first = patternWord(index, 0);
  for (let word = 0; word < length; word += 1) {
    if (received[word] !== ((first + word) >>> 0)) throw new Error(`message ${index} differs at word ${word}: is it message ${index} at all?`);
  }
}

function shown(value: unknown): string {
  return ArrayBuffer.isView(value) ? `${value.constructor.name} of ${value.byteLength} bytes` : JSON.stringify(value).slice(0, 80);
}

interface Small {
  readonly i: number;
  readonly tag: string;
}

const small = (i: number): Small => ({ i, tag: `m${i}` });

export function flood(master: ColGroupMaster, count: number, bytes: number, sleepMs: number): Body<FloodMemory> {
  return async (member, group, rank) => {
    await member.barrier(group);
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    if (rank === 0) {
      if (bytes > 0) {
        const words = new Uint32Array(bytes / 4);
        for (let i = 0; i < count; i += 1) await member.sendAsync(group, fill(words, i), 1);
      } else {
        for (let i = 0; i < count; i += 1) await member.sendAsync(group, small(i), 1);
      }
    } else {
      await new Promise((resolve) => setTimeout(resolve, sleepMs));
      for (let i = 0; i < count; i += 1) {
        const received = await member.receive<unknown>(group, 0);
        if (bytes > 0) check(received, i, bytes / 4);
        else if ((received as Small).i !== i || (received as Small).tag !== `m${i}`) throw new Error(`message ${shown(received)} arrived where ${i} was due`);
      }
    }
    await member.barrier(group);
    const config = master.config;
    return {
      rank,
      messages: count,
      rssBefore,
      peakRss: process.resourceUsage().maxRSS * 1024,
      seconds: (performance.now() - started) / 1000,
      receiveWindow: config.receiveWindow,
      sendBuffer: config.sendBuffer,
      unexpectedHighWater: master.engine.stats.unexpectedHighWater,
    };
  };
}
