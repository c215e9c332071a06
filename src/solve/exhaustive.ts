/**
 * Exhaustive mode: the reference `plan` is checked against. Two enumerations of the same space
 * (the configurations, data-parallel degrees, (layout, microbatch) choices and network settings
 * the MIP search covers), both through the cost model only, never the MIP:
 * - `naive`: every plan one by one, with no pruning (exponential; kept as the reference of the
 *   reduced one, and for the per-candidate least times the bound tests compare with);
 * - `reduced` (the default without `onCandidate`): one placement per orbit of the cost model's
 *   site symmetries (site-symmetry.ts), counted with its orbit, and pruning by the planner's
 *   closed-form lower bounds against the best plan so far (docs/formulation.md §9). It finds the
 *   same least time: a pruned candidate, choice or partial placement has a proven lower bound not
 *   below a plan already evaluated, and a skipped placement has the time of one evaluated.
 */
import { scenarioForSpace, toPlan, type SpaceRestriction } from '../formulation/search-space';
import { frameworkIssues } from '../model/framework-issues';
import type { LayoutCoefficients } from '../formulation/coefficients';
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan, withNetworkSettings } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { enumerateCandidates, type Candidate } from './candidates';
import { networkCombinations } from './exhaustive-network';
import { reducedSearch } from './exhaustive-reduced';
import type { ExhaustiveCoverage } from './plan-result';

export type { ExhaustiveCoverage } from './plan-result';

export interface ExhaustiveOptions {
  /** `reduced` (symmetry and bounds) or `naive` (every plan). Default: naive with `onCandidate`, else reduced. */
  readonly mode?: 'reduced' | 'naive';
  /**
   * Reduced mode only: false turns off every bound (candidates, choices, dominated network
   * settings), leaving the site symmetry alone: then it covers exactly the naive enumeration's
   * placements and plans (test/exhaustive-reduced.test.ts). Default true.
   */
  readonly bounds?: boolean;
  /**
   * Reduced mode only: false skips the candidate-level closed-form bounds (rule 2 of §9: quick,
   * outer, capacity, forced spanning, layout capacity, ring pattern), so that the reference shares
   * no candidate bound with the planner it checks; only the per-replica choice bounds, symmetry and
   * dominated network settings prune. Slower. Default true.
   */
  readonly candidateBounds?: boolean;
}

export interface ExhaustiveResult {
  readonly plan?: PlanSpec;
  readonly evaluation?: Evaluation;
  /** Plans evaluated (each placement times each network setting combination). */
  readonly plansEvaluated: number;
  readonly timeS: number;
  /** False when the time limit stopped the enumeration: the result is then not the optimum. */
  readonly complete: boolean;
  /** What the enumeration covered and how (both modes). */
  readonly coverage: ExhaustiveCoverage;
}

/**
 * `onCandidate` receives each fully enumerated candidate with the least time of its fitting plans
 * (Infinity when none fits): the reference the closed-form bounds are tested against.
 */
export function exhaustiveSearch(
  given: Scenario, restriction: SpaceRestriction, timeLimitS = Infinity,
  onCandidate?: (candidate: Candidate, leastTimeS: number) => void, options: ExhaustiveOptions = {},
): ExhaustiveResult {
  const mode = options.mode ?? (onCandidate ? 'naive' : 'reduced');
  if (mode === 'reduced') {
    // Pruned candidates have no exact least time of their own: per-candidate references need the naive mode.
    if (onCandidate) throw new Error('exhaustiveSearch: onCandidate needs mode naive (the reduced mode prunes candidates)');
    return reducedSearch(given, restriction, timeLimitS, options.bounds ?? true, options.candidateBounds ?? true);
  }
  return naiveSearch(given, restriction, timeLimitS, onCandidate);
}

/** Every plan one by one (the enumeration before symmetry and bounds, unchanged). */
function naiveSearch(given: Scenario, restriction: SpaceRestriction, timeLimitS: number, onCandidate?: (candidate: Candidate, leastTimeS: number) => void): ExhaustiveResult {
  const started = Date.now();
  const scenario = scenarioForSpace(given, restriction);
  const deadline = started + timeLimitS * 1000;
  let best: { plan: PlanSpec; evaluation: Evaluation } | undefined;
  let plansEvaluated = 0;
  let complete = true;
  let placements = 0;
  let candidatesEnumerated = 0;
  const candidates = enumerateCandidates(scenario, restriction);

  outer: for (const candidate of candidates) {
    if (Date.now() >= deadline) { complete = false; break; }
    const c = candidate.coefficients();
    let candidateLeastS = Infinity;
    const choices: { layout: LayoutCoefficients; k: number; upper: number }[] = [];
    for (const layout of c.layouts) {
      let capacity = c.dp;
      for (const [site, gpus] of layout.gpusPerSite) capacity = Math.min(capacity, Math.floor(scenario.sites[site]!.gpus / gpus));
      for (const k of layout.fittingMicrobatches) {
        const upper = Math.min(capacity, Math.floor(c.totalMicrobatches / k));
        if (upper >= 1) choices.push({ layout, k, upper });
      }
    }
    const counts = choices.map(() => 0);
    const free = scenario.sites.map((s) => s.gpus);
    // Depth-first over choices: counts[i] replicas of choice i; replicas and microbatches must come out exact.
    let steps = 0;
    const visit = (i: number, replicasLeft: number, microbatchesLeft: number): boolean => {
      if (++steps % 4096 === 0 && Date.now() >= deadline) return false;
      if (replicasLeft === 0 || i === choices.length) {
        if (replicasLeft !== 0 || microbatchesLeft !== 0) return true;
        const groups = choices.flatMap((ch, j) => (counts[j]! > 0 ? [{ layout: ch.layout.layout, microbatches: ch.k, replicas: counts[j]! }] : []));
        const plan = toPlan(c.config, scenario, groups);
        // Settings of a link that carries nothing cannot change the plan's time: enumerate only the loaded links.
        // Laid out once: each network combination only swaps its settings in.
        const laidOut = layOutPlan(scenario, plan);
        placements++;
        // A framework's space: placements it cannot launch (ranks of two sites on one node) are not in it.
        if (restriction.framework !== undefined && frameworkIssues(restriction.framework, scenario, laidOut).length > 0) return true;
        const base = evaluateLayout(scenario, laidOut, 'closed-form');
        const loaded = base.predicted.links.map((l) => l.bytesPerIteration > 0);
        for (const network of networkCombinations(scenario, restriction, loaded)) {
          // One placement on a mesh has (links x settings) combinations by the million: keep to the limit within it too.
          if ((plansEvaluated & 1023) === 1023 && Date.now() >= deadline) return false;
          const withNetwork: PlanSpec = { ...plan, network };
          // The closed form is a lower bound on the cost model's time (docs/cost-model.md §5): a plan
          // whose closed form is not below this candidate's least time so far is not timed op by op.
          const closedForm = evaluateLayout(scenario, withNetworkSettings(laidOut, network), 'closed-form');
          plansEvaluated++;
          if (!closedForm.fits || closedForm.predicted.iterationTimeS >= candidateLeastS) continue;
          const evaluation = evaluateLayout(scenario, withNetworkSettings(laidOut, network));
          if (evaluation.fits) candidateLeastS = Math.min(candidateLeastS, evaluation.predicted.iterationTimeS);
          if (evaluation.fits && (!best || evaluation.predicted.iterationTimeS < best.evaluation.predicted.iterationTimeS)) {
            best = { plan: withNetwork, evaluation };
          }
        }
        return Date.now() < deadline;
      }
      const ch = choices[i]!;
      let most = Math.min(ch.upper, replicasLeft, Math.floor(microbatchesLeft / ch.k));
      for (const [site, gpus] of ch.layout.gpusPerSite) most = Math.min(most, Math.floor(free[site]! / gpus));
      for (let n = most; n >= 0; n--) {
        counts[i] = n;
        for (const [site, gpus] of ch.layout.gpusPerSite) free[site]! -= n * gpus;
        const goOn = visit(i + 1, replicasLeft - n, microbatchesLeft - n * ch.k);
        for (const [site, gpus] of ch.layout.gpusPerSite) free[site]! += n * gpus;
        counts[i] = 0;
        if (!goOn) return false;
      }
      return true;
    };
    if (!visit(0, c.dp, c.totalMicrobatches)) { complete = false; break outer; }
    candidatesEnumerated++;
    onCandidate?.(candidate, candidateLeastS);
  }
  const coverage: ExhaustiveCoverage = {
    mode: 'naive', siteSymmetries: 1, candidates: candidates.length, candidatesEnumerated, candidatesPrunedByBound: 0,
    choicesPrunedByBound: 0, partialPlacementsPruned: 0,
    placementsCovered: placements, placementsEvaluated: placements, plansCovered: plansEvaluated, plansEvaluated,
  };
  return { plan: best?.plan, evaluation: best?.evaluation, plansEvaluated, timeS: (Date.now() - started) / 1000, complete, coverage };
}
