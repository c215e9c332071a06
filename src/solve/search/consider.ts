/**
 * How every phase offers a plan to the incumbent: screened by the closed-form timing, given its
 * network settings by the post-solver, checked against the framework, then timed op by op.
 */
import { layoutWithinBudget } from '../../formulation/gpu-budget';
import { frameworkIssues } from '../../model/framework-issues';
import { evaluateLayout, type Evaluation } from '../../model/evaluate';
import { layOutBuiltPlan, type PlanLayout } from '../../model/placement';
import type { PlanSpec } from '../../model/plan-schema';
import { chooseNetworkSettings } from '../network-post-solver';
import type { SearchState } from './state';

/**
 * Keeps a plan if it beats the incumbent. `evaluation`, if given, and every screen here use the
 * closed-form pipeline timing, a lower bound on the cost model's time (docs/cost-model.md §5):
 * only a plan whose closed form beats the incumbent is timed op by op (`timed`), and the
 * incumbent holds the cost model's own evaluation.
 */
export function consider(state: SearchState, plan: PlanSpec, engine: string, evaluation?: Evaluation): void {
  const { scenario, options, framework } = state;
  if (options.gpuBudget && !layoutWithinBudget(scenario, layOutBuiltPlan(scenario, plan), options.gpuBudget)) return;
  // search.allowIdleGpus false: only plans that use every GPU (a sweep neighbour's seed may not).
  if (scenario.search?.allowIdleGpus === false && plan.tp * plan.cp * plan.pp * plan.dp !== scenario.sites.reduce((sum, site) => sum + site.gpus, 0)) return;
  const asGiven = evaluation ?? evaluateLayout(scenario, layOutBuiltPlan(scenario, plan), 'closed-form');
  if (!asGiven.fitsResources) return; // network settings change no memory, GPU count or batch
  let result: { plan: PlanSpec; layout?: PlanLayout; evaluation: Evaluation } = { plan, evaluation: asGiven };
  if (!options.restriction.defaultNetworkOnly && scenario.links.length > 0) {
    // Network settings change only the cross-site time and the gradient sync: a plan that could
    // not beat the incumbent even with both at zero is not worth the post-solver's evaluations.
    const bestCaseS = networkBestCaseS(asGiven);
    if (state.incumbent && bestCaseS >= state.incumbent.evaluation.predicted.iterationTimeS) return;
    // Nor is one that would miss the required iteration time even then.
    if (bestCaseS > state.requiredS) return;
    result = chooseNetworkSettings(scenario, plan, 'closed-form', layOutBuiltPlan(scenario, plan));
  }
  if (!result.evaluation.fits) return;
  if (state.incumbent && result.evaluation.predicted.iterationTimeS >= state.incumbent.evaluation.predicted.iterationTimeS) return;
  // In a framework's space the configurations and microbatch counts are its own already; what is
  // left is per placement (ranks of two sites on one node): such a plan is not kept.
  if (framework !== undefined && frameworkIssues(framework, scenario, result.layout ?? layOutBuiltPlan(scenario, result.plan)).length > 0) { state.frameworkRejects++; return; }
  const timed = evaluateLayout(scenario, result.layout ?? layOutBuiltPlan(scenario, result.plan));
  if (!timed.fits) return;
  if (!state.incumbent || timed.predicted.iterationTimeS < state.incumbent.evaluation.predicted.iterationTimeS) {
    state.incumbent = { plan: result.plan, evaluation: timed, engine };
  }
}

/** A plan offered to {@link considerBestFirst} with a lower bound on its time: its candidate's proven bound (state.bounds). */
export interface BoundedPlan {
  readonly plan: PlanSpec;
  /** At most the cost model's time of the plan with any network settings (0 when none is known). */
  readonly lowerBoundS: number;
}

/**
 * Considers plans in order of the least time the network post-solver could give them (their
 * time less cross-site and sync time), so that the first good one lets the rest skip it. Plans
 * are evaluated lazily, in order of their lower bounds: one whose bound is at least the incumbent's
 * time is never evaluated (its time with any network settings is at least the bound, so it could
 * not replace the incumbent), and the best-case order holds wherever the bounds are below the best
 * cases (an evaluated plan is taken once its best case is at most every bound still pending). The
 * incumbent's time at the end is the one considering every plan gives; between plans of exactly
 * equal time the one kept may differ.
 */
export function considerBestFirst(state: SearchState, plans: readonly BoundedPlan[], engine: string): void {
  const { scenario } = state;
  const pending = [...plans].sort((a, b) => a.lowerBoundS - b.lowerBoundS);
  const ready: { plan: PlanSpec; evaluation: Evaluation; bestCaseS: number }[] = [];
  let next = 0;
  for (;;) {
    const incumbentS = state.incumbent?.evaluation.predicted.iterationTimeS ?? Infinity;
    // A bound within rounding of the incumbent's time does not skip its plan (sorted: the rest are skipped too).
    while (next < pending.length && pending[next]!.lowerBoundS * (1 - 1e-9) >= incumbentS) next = pending.length;
    const pendingBoundS = next < pending.length ? pending[next]!.lowerBoundS : Infinity;
    let best = -1;
    for (let j = 0; j < ready.length; j++) if (best < 0 || ready[j]!.bestCaseS < ready[best]!.bestCaseS) best = j;
    // With nothing pending the bound is infinite, so every evaluated plan is taken before the end.
    if (best >= 0 && ready[best]!.bestCaseS <= pendingBoundS) {
      const [p] = ready.splice(best, 1);
      consider(state, p!.plan, engine, p!.evaluation);
      continue;
    }
    if (next >= pending.length) return;
    const { plan } = pending[next++]!;
    const evaluation = evaluateLayout(scenario, layOutBuiltPlan(scenario, plan), 'closed-form');
    if (evaluation.fitsResources) ready.push({ plan, evaluation, bestCaseS: networkBestCaseS(evaluation) });
  }
}

/** The least time network settings could give a plan: they change only its cross-site time and its gradient sync. */
function networkBestCaseS(evaluation: Evaluation): number {
  const { crossSiteS, dpExposedS } = evaluation.predicted.breakdown;
  return evaluation.predicted.iterationTimeS - Math.max(0, crossSiteS) - Math.max(0, dpExposedS);
}
