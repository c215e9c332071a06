/**
 * A baseline's outlook in the MIP phase (docs/formulation.md §4, step 8): a baseline's search
 * (`comparedWithS`) gives up its MIPs once the candidates still queued under the threshold, at the
 * mean time the phase has taken per candidate so far (a MIP, or a prune when its turn came), would
 * need more than twice the time it has left on its lanes. What it has proven stays proven (the
 * least bound over its open candidates); the time goes back to the caller. The main search never
 * gives up this way: its gap is the answer.
 */
import type { MipQueue } from './mip-queue';
import { threshold, type SearchState } from './state';

/** Candidates the phase finishes (MIP solved or pruned at its turn) before its outlook is judged. */
export const OUTLOOK_PROBE_CANDIDATES = 3;

/** Slack on the projection: pruning by a better incumbent and lifted bounds shrink the queue as it goes. */
const OUTLOOK_SLACK = 2;

/** Whether a baseline's MIP phase, `finished` candidates after `phaseStartMs` on `lanes` lanes, should stop now. */
export function mipOutlookTooLong(state: SearchState, queue: MipQueue, finished: number, phaseStartMs: number, lanes: number): boolean {
  if (state.options.comparedWithS === undefined || finished < OUTLOOK_PROBE_CANDIDATES) return false;
  const nowMs = Date.now();
  const leftS = (state.deadlineMs - nowMs) / 1000;
  const perCandidateS = ((nowMs - phaseStartMs) / 1000) * lanes / finished;
  const cut = threshold(state);
  let queued = queue.inFlight.size;
  for (let p = queue.next; p < queue.order.length; p++) if (state.bounds[queue.order[p]!]! < cut) queued++;
  return (queued * perCandidateS) / lanes > OUTLOOK_SLACK * leftS;
}
