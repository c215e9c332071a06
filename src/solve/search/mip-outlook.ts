/**
 * A baseline's outlook in the MIP phase (docs/formulation.md §4, step 8): a baseline's search
 * (`comparedWithS`) gives up its MIPs once those still queued under the threshold, at the mean
 * time the phase has taken per MIP so far, would need more than twice the time it has left on its
 * lanes. What it has proven stays proven (the least bound over its open candidates); the time
 * goes back to the caller. The main search never gives up this way: its gap is the answer.
 */
import type { MipQueue } from './mip-queue';
import { threshold, type SearchState } from './state';

/** MIPs the phase finishes before its outlook is judged. */
export const OUTLOOK_PROBE_MIPS = 3;

/** Slack on the projection: pruning by a better incumbent and lifted bounds shrink the queue as it goes. */
const OUTLOOK_SLACK = 2;

/** Whether a baseline's MIP phase, `finished` MIPs after `phaseStartMs` on `lanes` lanes, should stop now. */
export function mipOutlookTooLong(state: SearchState, queue: MipQueue, finished: number, phaseStartMs: number, lanes: number): boolean {
  if (state.options.comparedWithS === undefined || finished < OUTLOOK_PROBE_MIPS) return false;
  const nowMs = Date.now();
  const leftS = (state.deadlineMs - nowMs) / 1000;
  const perMipS = ((nowMs - phaseStartMs) / 1000) * lanes / finished;
  const cut = threshold(state);
  let queued = queue.inFlight.size;
  for (let p = queue.next; p < queue.order.length; p++) if (state.bounds[queue.order[p]!]! < cut) queued++;
  return (queued * perMipS) / lanes > OUTLOOK_SLACK * leftS;
}
