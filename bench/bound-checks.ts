/**
 * The closed-form bounds of one (configuration, dp) candidate, and the check that none of them
 * exceeds the candidate's least time found by exhaustive search.
 */
import { capacityLowerBound, forcedSpanningLowerBound, outerLowerBound } from '../src/formulation/coefficients';
import { layoutCapacityLowerBound } from '../src/formulation/layout-capacity-bound';
import { ringPatternLowerBound } from '../src/formulation/ring-pattern-bound';
import type { Scenario } from '../src/model/scenario';
import type { Candidate } from '../src/solve/candidates';

export interface ClosedFormBounds {
  readonly quick: number;
  readonly outer: number;
  readonly capacity: number;
  readonly layoutCapacity: number;
  readonly forcedSpanning: number;
  readonly ringPattern: number;
}

export function closedFormBounds(candidate: Candidate, scenario: Scenario): ClosedFormBounds {
  const c = candidate.coefficients();
  const siteGpus = scenario.sites.map((s) => s.gpus);
  return {
    quick: candidate.quickBoundS,
    outer: outerLowerBound(c, candidate.quickBoundS),
    capacity: capacityLowerBound(c, siteGpus),
    layoutCapacity: layoutCapacityLowerBound(c, siteGpus),
    forcedSpanning: forcedSpanningLowerBound(c, siteGpus, candidate.quickBoundS),
    ringPattern: ringPatternLowerBound(scenario, c, siteGpus, candidate.quickBoundS),
  };
}

/** Throws, naming the bound and the candidate, if a bound exceeds the least time (relative tolerance 1e-9). */
export function assertAtMostLeastTime(bounds: Readonly<Record<string, number>>, leastS: number, candidate: Candidate): void {
  for (const [name, bound] of Object.entries(bounds)) {
    if (bound > leastS * (1 + 1e-9)) throw new Error(`${name} bound ${bound} > least time ${leastS} for ${JSON.stringify(candidate.config)} dp ${candidate.dp}`);
  }
}
