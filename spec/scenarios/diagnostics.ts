/** Bodies that leave calls pending on purpose, for the forgotten-await and watchdog diagnostics. */
import type { Body } from './p2p.js';

/**
 * Rank 0 starts a receive (tag 7) from rank 1 and returns without awaiting it; rank 1 sends
 * nothing, and stays a while (were it to close at once, the receive would fail with PeerLostError
 * before rank 0's run() returned: over shared memory that takes microseconds).
 */
export const forgottenAwait: Body<null> = async (member, group, rank) => {
  if (rank === 0 && group.size() > 1) void member.receive(group, 1, { tag: 7 });
  else await new Promise((resolve) => setTimeout(resolve, 300));
  return null;
};

/**
 * Every member waits for a message (tag 1) from the next rank that the next rank sends only after
 * `stallMs`: the whole job looks hung for that long, then finishes normally.
 */
export function stalledExchange(stallMs: number): Body<string> {
  return async (member, group, rank) => {
    const size = group.size();
    const next = (rank + 1) % size;
    const previous = (rank + size - 1) % size;
    const late = new Promise((resolve) => setTimeout(resolve, stallMs)).then(() => member.sendAsync(group, 'late', previous, { tag: 1 }));
    const received = await member.receive<string>(group, next, { tag: 1 });
    await late;
    return received;
  };
}
