/**
 * Phase 4 of the search: the placement MIPs of the refined candidates, on lanes. The first
 * backend and each concurrent one take the next MIP in queue order as they free up (HiGHS runs
 * in worker threads, so two lanes use two cores); the incumbent and the threshold are shared.
 */
import type { MipBackend } from '../mip-backend';
import { solveCandidateMip } from './candidate-mip';
import { runningSolves, takeNextMip, type MipQueue, type SolvedMip } from './mip-queue';
import { mipOutlookTooLong } from './mip-outlook';
import { haveFirstFit, type SearchState } from './state';
import type { SearchOptions } from './types';

/** The first backend of each lane: the first of the chain, then each concurrent backend. */
export const laneBackends = (options: SearchOptions): MipBackend[] => [options.backends[0]!, ...(options.concurrentBackends ?? [])];

/** Solves the queue's MIPs until it is empty, the time runs out or feasibility mode has its plan. Returns the candidates whose MIP answered. */
export async function solvePlacements(state: SearchState, queue: MipQueue): Promise<SolvedMip[]> {
  const backends = laneBackends(state.options);
  const phaseStartMs = Date.now();
  let finished = 0;
  const lanes = backends.map(async (primary, lane) => {
    while (!queue.stopped) {
      if (queue.next < queue.order.length) {
        const position = takeNextMip(state, queue);
        if (await solveCandidateMip(state, queue, position, queue.order[position]!, primary) === 'stop') queue.stopped = true;
        // A baseline whose queue cannot be worked through in its time gives its MIPs up (mip-outlook.ts).
        else if (mipOutlookTooLong(state, queue, ++finished, phaseStartMs, backends.length)) {
          queue.stopped = true;
          state.timedOut = true;
          for (const [, stop] of runningSolves(queue)) stop.abort();
        }
        continue;
      }
      // Nothing left to start: help the in-flight MIP with the least bound, solving it again
      // with another random seed (measured: HiGHS's time to a good placement on the symmetric
      // 4-site MIPs varies several-fold with its path).
      if (!state.incumbent || (state.faultCounts.get(primary) ?? 0) >= 2) break;
      const open = [...queue.inFlight.entries()].filter(([, f]) => !f.helped).sort((a, b) => state.bounds[a[0]]! - state.bounds[b[0]]!)[0];
      if (!open) break;
      open[1].helped = true;
      if (await solveCandidateMip(state, queue, open[1].position, open[0], primary, lane + 1) === 'stop') queue.stopped = true;
    }
  });
  await Promise.all(lanes);
  if (!state.timedOut && queue.waiting.size > 0 && !haveFirstFit(state)) state.timedOut = true;
  return queue.solved;
}
