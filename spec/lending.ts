/** What the lentOrCopied scenario must show over a device that lends (shm, ucx). */
import { expect } from 'chai';
import type { LentOrCopiedReport } from './scenarios/rings.js';

export function expectLentOrCopied([[sender], [received]]: [[LentOrCopiedReport], [number]]): void {
  expect(received).to.equal(sender.awaited + 1);
  // A receiver that waits clears the message within the sender's spin, most times on a busy machine.
  if (sender.spinning) expect(sender.copiedWhileAwaited, `copies of ${sender.awaited} messages lent to a waiting receiver`).to.be.below(sender.awaited / 2);
  else expect(sender.copiedWhileAwaited).to.equal(sender.awaited);
  expect(sender.copiedWhileBusy).to.equal(1);
}
