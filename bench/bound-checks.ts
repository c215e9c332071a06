/**
 * The closed-form bounds of one (configuration, dp) candidate, and the check that none of them
 * exceeds the candidate's least time found by exhaustive search.
 */
import { capacityLowerBound } from '../src/formulation/capacity-bound';
import { forcedSpanningLowerBound, outerLowerBound } from '../src/formulation/closed-form-bounds';
import { layoutCapacityLowerBound } from '../src/formulation/layout-capacity-bound';
import { ringPatternLowerBound } from '../src/formulation/ring-pattern-bound';
import { buildPlacementMip, provenIterationBoundS } from '../src/formulation/placement-mip';
import type { Scenario } from '../src/model/scenario';
import type { Candidate } from '../src/solve/candidates';
import type { HighsWorkerBackend } from '../src/solve/highs-worker-backend';

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

/**
 * Every closed-form bound and the placement MIP's proven bound (solved to optimality) of each
 * fitting candidate at most its exhaustive least time; throws naming the first that is not.
 */
export async function assertCandidateBoundsAtMostLeastTimes(
  scenario: Scenario, fitting: readonly { readonly candidate: Candidate; readonly leastS: number }[], highs: HighsWorkerBackend,
): Promise<void> {
  for (const { candidate, leastS } of fitting) {
    assertAtMostLeastTime({ ...closedFormBounds(candidate, scenario) }, leastS, candidate);
    const placement = buildPlacementMip(scenario, candidate.coefficients(), 0);
    if (!placement) throw new Error(`no placement MIP for ${JSON.stringify(candidate.config)} dp ${candidate.dp}`);
    const solution = await highs.solve(placement.mip, { timeLimitS: 20, relativeGap: 0 });
    if (!solution.boundProven) throw new Error(`placement MIP bound not proven for ${JSON.stringify(candidate.config)} dp ${candidate.dp}`);
    assertAtMostLeastTime({ MIP: provenIterationBoundS(placement, solution.dualBound) }, leastS, candidate);
  }
}
