/**
 * The reduced exhaustive enumeration (exhaustive.ts, docs/formulation.md §9): one placement per
 * orbit of the cost model's site symmetries, pruned by the planner's closed-form lower bounds
 * against the best plan so far.
 */
import { planOfGroups, type ConfigCoefficients } from '../formulation/coefficients';
import { capacityLowerBound } from '../formulation/capacity-bound';
import { forcedSpanningLowerBound, outerLowerBound, zero3GatherLowerBound } from '../formulation/closed-form-bounds';
import { layoutCapacityLowerBound } from '../formulation/layout-capacity-bound';
import { ringPatternSearch } from '../formulation/ring-pattern-bound';
import { scenarioForSpace, type SpaceRestriction } from '../formulation/search-space';
import { frameworkIssues } from '../model/framework-issues';
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { enumerateCandidates, type Candidate } from './candidates';
import { timeNetworkSettings } from './exhaustive-network';
import { emptyPlacementTally, enumeratePlacements } from './exhaustive-placements';
import { greedyPlacement } from './heuristic';
import type { ExhaustiveCoverage } from './plan-result';
import { placementWalkSymmetries } from './site-symmetry';
import type { ExhaustiveResult } from './exhaustive';

/**
 * Bounds prune only above the best time by this relative margin: the closed-form bounds and the
 * cost model add the same terms in different orders, so a bound equal to a plan's time may come
 * out an ulp above it. A pruned plan is then at most 1e-9 (relative) faster than the best found.
 */
export const BOUND_SLACK = 1e-9;

/** Candidates whose greedy placement seeds the best plan (reduced mode). */
const SEED_CANDIDATES = 20;

/** Milliseconds of placement walk per seed candidate before the full enumeration. */
const SEED_WALK_MS = 50;

/**
 * The reduced enumeration (docs/formulation.md §9): candidates best quick bound first, each
 * skipped when a proven lower bound on its plans is not below the best plan so far; within a
 * candidate, a depth-first search over replica counts per (layout, microbatch count) choice that
 * leaves out choices whose single replica already takes as long as the best plan, abandons
 * partial placements the remaining choices cannot complete, and evaluates only the
 * lexicographically greatest placement of each orbit of the cost model's site symmetries.
 */
export function reducedSearch(given: Scenario, restriction: SpaceRestriction, timeLimitS: number, bounds: boolean, candidateBounds: boolean): ExhaustiveResult {
  const started = Date.now();
  const scenario = scenarioForSpace(given, restriction);
  const deadline = started + timeLimitS * 1000;
  const requiredS = scenario.training.maxIterationTimeS ?? Infinity;
  const symmetries = placementWalkSymmetries(scenario, restriction.framework);
  const siteGpus = scenario.sites.map((site) => site.gpus);
  let best: { plan: PlanSpec; evaluation: Evaluation } | undefined;
  let complete = true;
  const tally = {
    candidatesEnumerated: 0, candidatesPrunedByBound: 0, choicesPrunedByBound: 0, partialPlacementsPruned: 0,
    placementsCovered: 0, placementsEvaluated: 0, plansCovered: 0, plansEvaluated: 0,
  };
  // No plan with a time at or above a bound that prunes can be strictly better than the best so
  // far (beyond BOUND_SLACK), nor fit a required iteration time it exceeds.
  const prunes = (boundS: number): boolean => bounds && (
    boundS > requiredS * (1 + BOUND_SLACK) || (best !== undefined && boundS > best.evaluation.predicted.iterationTimeS * (1 + BOUND_SLACK)));

  const candidates = enumerateCandidates(scenario, restriction);
  const onPlan = (plan: PlanSpec, evaluation: Evaluation) => {
    if (!best || evaluation.predicted.iterationTimeS < best.evaluation.predicted.iterationTimeS) best = { plan, evaluation };
  };
  const bestS = () => best?.evaluation.predicted.iterationTimeS ?? Infinity;
  // A first best plan, so that the bounds prune from the start: the greedy placement of the
  // candidates with the least quick bounds (heuristic.ts), each a plan of the space timed by the
  // cost model like any other. It only ever lowers the best time pruning compares against; it
  // decides nothing about which plans are optimal.
  for (const candidate of candidates.slice(0, SEED_CANDIDATES)) {
    if (!Number.isFinite(candidate.quickBoundS) || Date.now() >= deadline) break;
    const c = candidate.coefficients();
    const groups = greedyPlacement(scenario, c);
    if (!groups) continue;
    const plan = planOfGroups(c, scenario, groups);
    const laidOut = layOutPlan(scenario, plan);
    if (restriction.framework !== undefined && frameworkIssues(restriction.framework, scenario, laidOut).length > 0) continue;
    const loaded = evaluateLayout(scenario, laidOut, 'closed-form').predicted.links.map((l) => l.bytesPerIteration > 0);
    timeNetworkSettings(scenario, restriction, plan, laidOut, loaded, bounds, bestS, onPlan, deadline, { plansEvaluated: 0 });
  }
  // Then a short look at each seed candidate's own placements, least-bound choices first (the
  // walk below, cut off after SEED_WALK_MS): where the greedy placement is far from a candidate's
  // best (one microbatch per replica, groups over sites of unlike GPUs), this finds a near-optimal
  // plan before the full walk starts on candidates whose placements are many.
  for (const candidate of candidates.slice(0, SEED_CANDIDATES)) {
    if (!Number.isFinite(candidate.quickBoundS) || Date.now() >= deadline) break;
    if (prunes(candidate.quickBoundS)) continue;
    enumeratePlacements(scenario, restriction, candidate.coefficients(), symmetries, prunes, bounds, bestS, onPlan, Math.min(deadline, Date.now() + SEED_WALK_MS), emptyPlacementTally());
  }
  for (const candidate of candidates) {
    if (Date.now() >= deadline) { complete = false; break; }
    // The quick bound (Infinity when no stage fits memory with one microbatch in flight).
    if (candidateBounds && prunes(candidate.quickBoundS)) { tally.candidatesPrunedByBound++; continue; }
    const c = candidate.coefficients();
    if (bounds && candidateBounds && prunes(candidateBoundS(scenario, restriction, candidate, c, siteGpus, prunes))) { tally.candidatesPrunedByBound++; continue; }
    if (!enumeratePlacements(scenario, restriction, c, symmetries, prunes, bounds, bestS, onPlan, deadline, tally)) { complete = false; break; }
    tally.candidatesEnumerated++;
  }
  const coverage: ExhaustiveCoverage = { mode: 'reduced', siteSymmetries: symmetries.length, candidates: candidates.length, ...tally };
  return { plan: best?.plan, evaluation: best?.evaluation, plansEvaluated: tally.plansEvaluated, timeS: (Date.now() - started) / 1000, complete, coverage };
}

/**
 * The planner's refined closed-form bounds of a candidate (docs/formulation.md §4, step 3: outer,
 * capacity, forced spanning, layout capacity, ring pattern; ZeRO-3 gathers in a framework's
 * space), each a lower bound on every plan of the candidate, checked against the naive
 * enumeration candidate by candidate in test/bounds-per-candidate.test.ts and on random
 * scenarios. The costlier ones are computed only while the cheaper ones do not prune.
 */
function candidateBoundS(scenario: Scenario, restriction: SpaceRestriction, candidate: Candidate, c: ConfigCoefficients, siteGpus: readonly number[], prunes: (boundS: number) => boolean): number {
  let bound = Math.max(candidate.quickBoundS, outerLowerBound(c, candidate.quickBoundS), capacityLowerBound(c, siteGpus), forcedSpanningLowerBound(c, siteGpus, candidate.quickBoundS));
  if (restriction.framework !== undefined) bound = Math.max(bound, zero3GatherLowerBound(c));
  if (prunes(bound)) return bound;
  bound = Math.max(bound, layoutCapacityLowerBound(c, siteGpus, bound));
  if (prunes(bound)) return bound;
  return Math.max(bound, ringPatternSearch(scenario, c, siteGpus, candidate.quickBoundS).boundS);
}
