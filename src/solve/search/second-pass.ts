/**
 * Phase 5 of the search, with the time left: the MIPs stopped at the target gap on their own
 * objective, which slightly underestimates the cost model; the candidates that hold the global
 * bound down are solved again, four times tighter, until the gap closes or time runs out. On
 * every lane: each takes the next candidate, and the first to close the gap stops the others
 * (measured on the 3-site row in a fresh process: two re-solves of 0.56 and 0.28 s had run one
 * after the other).
 */
import { buildPlacementMip } from '../../formulation/placement-mip';
import { adoptMipPlan, cutoffFor, noneFaster, recordMipBound } from './adopt';
import { solveWithFallbacks } from './fallbacks';
import type { SolvedMip } from './mip-queue';
import { laneBackends } from './placements';
import { gapNow, haveFirstFit, report, threshold, type SearchState } from './state';

/** Re-solves the solved candidates, least bound first, until the gap is within the target. */
export async function secondPass(state: SearchState, solved: readonly SolvedMip[]): Promise<void> {
  const { scenario, options, bounds } = state;
  const gapClosed = () => gapNow(state) <= options.gap * (1 + 1e-9);
  const queue = [...solved].sort((a, b) => bounds[a.index]! - bounds[b.index]!);
  const done = new AbortController();
  await Promise.all(laneBackends(options).map(async (primary) => {
    for (let entry = queue.shift(); entry; entry = queue.shift()) {
      if (state.timedOut || haveFirstFit(state) || gapClosed() || Date.now() >= state.deadlineMs) break;
      const stopAt = threshold(state);
      if (bounds[entry.index]! >= stopAt) continue;
      // Rebuilt with today's threshold: the incumbent has usually improved, so fewer choices remain (F0).
      const placement = buildPlacementMip(scenario, entry.coefficients, bounds[entry.index]!, stopAt, options.gpuBudget);
      if (!placement) { noneFaster(state, entry.index, stopAt); continue; }
      const answer = await solveWithFallbacks(placement, { ...options, gap: options.gap / 4, backends: [primary, ...options.backends.slice(1)] },
        { timeLimitS: Math.max(0.05, (state.deadlineMs - Date.now()) / 1000), stopWhenBoundAtLeast: stopAt, haveIncumbent: state.incumbent !== undefined, abort: done.signal, objectiveCutoff: cutoffFor(state, placement) }, state);
      if (!answer) continue;
      const { solution, engine } = answer;
      recordMipBound(state, entry.index, stopAt, placement, solution);
      if (solution.values) adoptMipPlan(state, entry.coefficients, placement, solution, engine);
      if (gapClosed()) done.abort();
      report(state);
    }
  }));
}
