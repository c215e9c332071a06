/**
 * Phase 5b of the search, with the time left once every MIP has answered and the gap is still
 * open (docs/formulation.md §4, step 6): the placement MIP is a relaxation of the cost model's
 * cross-site terms (F10), so its optimum can sit more than the target gap below every placement
 * the cost model times, and no re-solve lifts it. The candidates holding the bound down are then
 * enumerated placement by placement (the exhaustive reference's walk, exhaustive-placements.ts:
 * every placement up to the cost model's site symmetries, choices and partial placements pruned
 * by valid bounds). A walk that completes bounds its candidate by the least of the threshold and
 * the plans it timed; one the time cut short, or its outlook gave up (candidate-walk.ts), claims
 * nothing and ends the phase.
 */
import { placementWalkSymmetries } from '../site-symmetry';
import type { Evaluation } from '../../model/evaluate';
import type { PlanSpec } from '../../model/plan-schema';
import { walkCandidate } from './candidate-walk';
import { consider } from './consider';
import type { SolvedMip } from './mip-queue';
import { gapNow, haveFirstFit, raiseBound, report, threshold, type SearchState } from './state';

/** The engine named for a plan the walk found. */
const ENGINE = 'placement enumeration';

/** Each candidate's walk may take at most this share of the time left (the rest stays for the next). */
const WALK_SHARE = 0.5;

/** Enumerates the placements of the solved candidates under the threshold, least bound first, while the gap is open. */
export function exhaustBoundHolders(state: SearchState, solved: readonly SolvedMip[]): void {
  const { bounds, options } = state;
  // Within a GPU budget the walk would time plans the budget leaves out (docs/formulation.md §10).
  if (options.gpuBudget || state.timedOut || haveFirstFit(state)) return;
  const gapClosed = () => gapNow(state) <= options.gap * (1 + 1e-9);
  const symmetries = placementWalkSymmetries(state.scenario, state.framework);
  const queue = [...solved].sort((a, b) => bounds[a.index]! - bounds[b.index]!);
  const onPlan = (plan: PlanSpec, evaluation: Evaluation) => {
    // The post-solver may give the placement other network settings; the walk's own plan is kept if faster.
    consider(state, plan, ENGINE);
    if (!state.incumbent || evaluation.predicted.iterationTimeS < state.incumbent.evaluation.predicted.iterationTimeS) state.incumbent = { plan, evaluation, engine: ENGINE };
  };
  for (const { index, coefficients } of queue) {
    if (gapClosed() || Date.now() >= state.deadlineMs) return;
    if (bounds[index]! >= threshold(state)) continue;
    const deadline = Math.min(state.deadlineMs, Date.now() + (state.deadlineMs - Date.now()) * WALK_SHARE);
    const walk = walkCandidate(state.scenario, options.restriction, coefficients, symmetries, () => threshold(state), deadline, onPlan);
    if (walk.complete) raiseBound(state, index, walk.boundS, 'enumerated');
    report(state);
    // The least bound now stays at most this candidate's, below every later one's: their walks
    // could raise none that decides the gap.
    if (!walk.complete) return;
  }
}
