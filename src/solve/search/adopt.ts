/**
 * What a placement MIP's answer does to the state: its plan checked and offered to the incumbent
 * (polished on the cost model when the MIP misjudged it), its dual bound recorded for the
 * candidate; and the polished greedy placement that may stand in for a MIP.
 */
import { planOfGroups, type ConfigCoefficients, type LayoutGroup } from '../../formulation/coefficients';
import { objectiveCutoff, provenIterationBoundS, type PlacementMip } from '../../formulation/placement-mip';
import { evaluateLayout } from '../../model/evaluate';
import { layOutPlan } from '../../model/placement';
import { checkMipPlan } from '../independent-check';
import type { MipSolution } from '../mip-backend';
import { polishPlacement, type PolishResult } from '../placement-polish';
import { consider } from './consider';
import { greedyOf, raiseBound, tally, threshold, type SearchState } from './state';

/** Share of the search's elapsed time that placement polishing may take. */
const POLISH_SHARE = 0.2;
/** Cost-model evaluations one placement polish may spend (about 0.2-0.6 ms each). */
const POLISH_EVALUATIONS = 300;

/** Decodes a MIP solution, checks it against the cost model, and keeps it if it is the best. */
export function adoptMipPlan(state: SearchState, coefficients: ConfigCoefficients, placement: PlacementMip, solution: MipSolution, engine: string): void {
  const { scenario } = state;
  const groups = decodeGroups(placement, solution.values!);
  const plan = planOfGroups(coefficients, scenario, groups);
  // The closed form screens: the MIP is a relaxation of the cost model (docs/formulation.md §2),
  // whose span floor (eq. 5.11) only the op-by-op timing reaches, so the check takes that timing
  // where the screen is below the MIP's bound.
  const laidOut = layOutPlan(scenario, plan);
  const evaluation = evaluateLayout(scenario, laidOut, 'closed-form');
  const provenS = solution.boundProven ? provenIterationBoundS(placement, solution.dualBound) : -Infinity;
  const checked = evaluation.predicted.iterationTimeS >= provenS ? evaluation : evaluateLayout(scenario, laidOut);
  checkMipPlan(scenario, placement, solution.values!, provenS, checked, coefficients.sendBytes);
  consider(state, plan, engine, evaluation);
  // The MIP thought this placement beats the incumbent, the cost model disagrees by more than
  // the target gap: its rings share links the MIP saw as spread (§4, placement polish).
  const mipS = solution.objective ?? Infinity;
  const timeS = evaluation.predicted.iterationTimeS;
  if (!evaluation.fitsResources || !(timeS > mipS * (1 + state.options.gap)) || (state.incumbent && mipS >= state.incumbent.evaluation.predicted.iterationTimeS)) return;
  const polished = budgetedPolish(state, coefficients, groups);
  if (polished && polished.moves > 0) consider(state, polished.plan, `${engine} + cost-model polish`, polished.evaluation);
}

/**
 * What a MIP built with F0 at `fasterThanS` proves about candidate i: its dual bound, capped there
 * (F0). 'Infeasible' under an objective cutoff proves nothing past the cutoff, which its dual
 * bound then is: at least the incumbent, so at least `fasterThanS` whenever the gap is not
 * negative (the library's `plan` does not forbid one).
 */
export function recordMipBound(state: SearchState, i: number, fasterThanS: number, placement: PlacementMip, solution: MipSolution): void {
  const provenS = solution.boundProven && Number.isFinite(solution.dualBound) ? Math.min(fasterThanS, provenIterationBoundS(placement, solution.dualBound)) : undefined;
  if (solution.status === 'infeasible') noneFaster(state, i, provenS ?? fasterThanS);
  else if (provenS !== undefined) raiseBound(state, i, provenS, provenS >= fasterThanS ? 'threshold' : 'mip');
}

/** No placement of candidate i is faster than `fasterThanS` (none at all when it is infinite). */
export function noneFaster(state: SearchState, i: number, fasterThanS: number): void {
  if (Number.isFinite(fasterThanS)) raiseBound(state, i, fasterThanS, 'threshold');
  else { raiseBound(state, i, Infinity, 'threshold'); tally(state.reasons, 'no placement fits the GPUs and the batch'); }
}

/**
 * Placements no faster than the pruning threshold (the incumbent less the target gap) are of no
 * use to a MIP: the solver prunes by it (§4, step 4), and a MIP with nothing below it ends
 * 'infeasible', which is the prune. A placement between the threshold and the incumbent would
 * improve the plan by less than the gap the search proves anyway.
 */
export function cutoffFor(state: SearchState, placement: PlacementMip): number | undefined {
  return state.incumbent ? objectiveCutoff(placement, threshold(state)) : undefined;
}

/** The greedy placement of candidate i, polished on the cost model, as a heuristic plan. */
export function polishGreedy(state: SearchState, i: number, coefficients: ConfigCoefficients): void {
  const groups = greedyOf(state, i, coefficients);
  if (!groups) return;
  const polished = budgetedPolish(state, coefficients, groups);
  if (polished) consider(state, polished.plan, polished.moves > 0 ? 'heuristic + cost-model polish' : 'heuristic', polished.evaluation);
}

/**
 * Polishing is a heuristic: it may take at most a fifth of the search's time so far (measured
 * on the 3-site row: 2.1-2.2 s unbudgeted, 1.20-1.37 s with this budget, the same plan; the
 * 4-site MoE row, whose MIPs run for seconds, keeps every polish it had).
 */
function budgetedPolish(state: SearchState, coefficients: ConfigCoefficients, start: readonly LayoutGroup[]): PolishResult | undefined {
  if (state.polishedS > POLISH_SHARE * ((Date.now() - state.startedMs) / 1000)) return undefined;
  const began = Date.now();
  try {
    return polishPlacement(state.scenario, coefficients, start, POLISH_EVALUATIONS);
  } finally {
    state.polishedS += (Date.now() - began) / 1000;
  }
}

/** The placement a MIP solution describes: replicas per (layout, microbatch) choice. */
function decodeGroups(placement: PlacementMip, values: readonly number[]): LayoutGroup[] {
  return placement.choices
    .map((choice) => ({ layout: choice.layout, microbatches: choice.microbatches, replicas: Math.round(values[choice.replicasColumn]!) }))
    .filter((g) => g.replicas > 0);
}
