/**
 * Phase 6 of the search: the result. The incumbent (already polished, given its network settings
 * and checked independently as it was adopted: consider.ts, adopt.ts), the bound valid for every
 * plan of the space, the solver's report, and why nothing fits when nothing does.
 */
import { enumerateConfigs } from '../../formulation/search-space';
import type { Refined } from './refine';
import { globalBound, tally, threshold, type SearchState } from './state';
import type { SearchResult } from './types';
import type { BoundHolder } from '../plan-result';

export function finishSearch(state: SearchState, refined: Refined): SearchResult {
  const { incumbent, candidates, reasons, scenario, framework } = state;
  const lowerBoundS = globalBound(state);
  const time = incumbent?.evaluation.predicted.iterationTimeS;
  const gap = time === undefined ? Infinity : Math.max(0, (time - Math.min(lowerBoundS, time)) / time);
  if (!incumbent && Number.isFinite(lowerBoundS) && lowerBoundS >= state.requiredS) {
    reasons.set(`every plan takes at least ${lowerBoundS.toFixed(3)} s, over training.maxIterationTimeS ${scenario.training.maxIterationTimeS}`, candidates.length);
  }
  if (candidates.length === 0) {
    // Named only where it is what empties the space: without it some configuration is left.
    const evenOnly = scenario.search?.evenLayerSplit === true && enumerateConfigs(scenario, state.options.restriction).length === 0
      && enumerateConfigs({ ...scenario, search: { ...scenario.search, evenLayerSplit: false } }, state.options.restriction).length > 0;
    const even = evenOnly ? `; search.evenLayerSplit leaves no stage split with the same layers in every stage and chunk of the model's ${scenario.model.layers} layers` : '';
    tally(reasons, `no configuration in the search space fits the sites (tp x cp x pp larger than every site, or no valid degree${even})`);
  }
  if (!incumbent && framework !== undefined && state.frameworkRejects > 0) {
    reasons.set(`${state.frameworkRejects} plan(s) that fit were left out: ${framework} cannot launch them as placed (ranks of two sites on one node)`, candidates.length);
  }
  return {
    plan: incumbent?.plan,
    evaluation: incumbent?.evaluation,
    bound: { lowerBoundS: time === undefined ? lowerBoundS : Math.min(lowerBoundS, time), gap, proven: true },
    solver: {
      engine: incumbent?.engine ?? 'none',
      timeS: (Date.now() - state.startedMs) / 1000,
      fallbacksUsed: [...state.fallbacksUsed],
      faults: state.faults,
      candidates: candidates.length,
      mipsSolved: state.mipsSolved,
      // Candidates after the refine phase's break are pruned by the sorted quick bound.
      pruned: state.pruned + refined.unrefined,
      timedOut: state.timedOut,
      ...(Number.isFinite(lowerBoundS) ? { boundHolder: boundHolderOf(state) } : {}),
    },
    reasons: [...reasons.entries()].map(([reason, count]) => (candidates.length === 0 ? reason : `${reason} (${count} of ${candidates.length} configurations)`)),
  };
}

/** The candidate holding the global bound (the first of the least), and how many are still open. */
function boundHolderOf(state: SearchState): BoundHolder {
  const { bounds, candidates, boundSources } = state;
  const i = bounds.indexOf(globalBound(state));
  const { tp, cp, ep, pp, microBatchSeqs, schedule, virtualStages, recompute, zero } = candidates[i]!.config;
  const config = `tp ${tp} cp ${cp} ep ${ep} pp ${pp} mbs ${microBatchSeqs} ${schedule}${virtualStages > 1 ? ` v ${virtualStages}` : ''} recompute ${recompute} zero ${zero}`;
  const stopAt = threshold(state);
  return { config, dp: candidates[i]!.dp, boundS: bounds[i]!, source: boundSources[i]!, open: bounds.filter((b) => b < stopAt).length };
}
