/**
 * Phase 6 of the search: the result. The incumbent (already polished, given its network settings
 * and checked independently as it was adopted: consider.ts, adopt.ts), the bound valid for every
 * plan of the space, the solver's report, and why nothing fits when nothing does.
 */
import type { Refined } from './refine';
import { globalBound, tally, type SearchState } from './state';
import type { SearchResult } from './types';

export function finishSearch(state: SearchState, refined: Refined): SearchResult {
  const { incumbent, candidates, reasons, scenario, framework } = state;
  const lowerBoundS = globalBound(state);
  const time = incumbent?.evaluation.predicted.iterationTimeS;
  const gap = time === undefined ? Infinity : Math.max(0, (time - Math.min(lowerBoundS, time)) / time);
  if (!incumbent && Number.isFinite(lowerBoundS) && lowerBoundS >= state.requiredS) {
    reasons.set(`every plan takes at least ${lowerBoundS.toFixed(3)} s, over training.maxIterationTimeS ${scenario.training.maxIterationTimeS}`, candidates.length);
  }
  if (candidates.length === 0) tally(reasons, 'no configuration in the search space fits the sites (tp x cp x pp larger than every site, or no valid degree)');
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
    },
    reasons: [...reasons.entries()].map(([reason, count]) => `${reason} (${count} of ${candidates.length} configurations)`),
  };
}
