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
import { planOfGroups, type ConfigCoefficients, type LayoutCoefficients } from '../formulation/coefficients';
import { capacityLowerBound } from '../formulation/capacity-bound';
import { forcedSpanningLowerBound, outerLowerBound, zero3GatherLowerBound } from '../formulation/closed-form-bounds';
import { layoutCapacityLowerBound } from '../formulation/layout-capacity-bound';
import { choicePipelineS } from '../formulation/placement-mip-replicas';
import { ringPatternSearch } from '../formulation/ring-pattern-bound';
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan, withNetworkSettings, type PlanLayout } from '../model/placement';
import type { LinkSettingsSpec, PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { enumerateCandidates, type Candidate } from './candidates';
import { greedyPlacement } from './heuristic';
import { FLOWS_PER_GPU_PAIR, linkSettingOptions } from './network-post-solver';
import type { ExhaustiveCoverage } from './plan-result';
import { costModelSiteSymmetries, type SitePermutation } from './site-symmetry';

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

/**
 * Bounds prune only above the best time by this relative margin: the closed-form bounds and the
 * cost model add the same terms in different orders, so a bound equal to a plan's time may come
 * out an ulp above it. A pruned plan is then at most 1e-9 (relative) faster than the best found.
 */
const BOUND_SLACK = 1e-9;

/** Candidates whose greedy placement seeds the best plan (reduced mode). */
const SEED_CANDIDATES = 20;

interface Choice {
  readonly layout: LayoutCoefficients;
  readonly k: number;
  readonly upper: number;
  /** GPUs one replica of the layout uses, over all its sites. */
  readonly gpus: number;
  /** The least time of any plan with a replica on this choice: the least choicePipelineS over its orbit. */
  boundS: number;
}

/**
 * The reduced enumeration (docs/formulation.md §9): candidates best quick bound first, each
 * skipped when a proven lower bound on its plans is not below the best plan so far; within a
 * candidate, a depth-first search over replica counts per (layout, microbatch count) choice that
 * leaves out choices whose single replica already takes as long as the best plan, abandons
 * partial placements the remaining choices cannot complete, and evaluates only the
 * lexicographically greatest placement of each orbit of the cost model's site symmetries.
 */
function reducedSearch(given: Scenario, restriction: SpaceRestriction, timeLimitS: number, bounds: boolean, candidateBounds: boolean): ExhaustiveResult {
  const started = Date.now();
  const scenario = scenarioForSpace(given, restriction);
  const deadline = started + timeLimitS * 1000;
  const requiredS = scenario.training.maxIterationTimeS ?? Infinity;
  // In a framework's space a placement is kept only if its ranks put no two sites on one node, which
  // depends on the order of groups in the plan, not only on the placement: no symmetry is claimed there.
  const symmetries = restriction.framework === undefined ? costModelSiteSymmetries(scenario) : costModelSiteSymmetries(scenario).slice(0, 1);
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

/**
 * Each site symmetry as a permutation of the candidate's choices (a layout moved site by site,
 * the same microbatch count), identity first; only the identity when some image is not a choice
 * (then the candidate is enumerated without symmetry).
 */
function choicePermutations(choices: readonly Choice[], symmetries: readonly SitePermutation[]): number[][] {
  const key = (stageSite: readonly number[], k: number) => `${stageSite.join(',')}/${k}`;
  const index = new Map(choices.map((ch, i) => [key(ch.layout.layout.stageSite, ch.k), i]));
  const identity = choices.map((_, i) => i);
  const permutations: number[][] = [identity];
  for (const sigma of symmetries.slice(1)) {
    const image: number[] = [];
    for (const ch of choices) {
      const j = index.get(key(ch.layout.layout.stageSite.map((s) => sigma.sites[s]!), ch.k));
      if (j === undefined || choices[j]!.upper !== ch.upper || choices[j]!.gpus !== ch.gpus) return [identity];
      image.push(j);
    }
    permutations.push(image);
  }
  return permutations;
}

/**
 * Depth-first over replica counts per choice (every placement of the candidate up to symmetry
 * and bounds). False when the time limit stopped it.
 */
function enumeratePlacements(
  scenario: Scenario, restriction: SpaceRestriction, c: ConfigCoefficients, symmetries: readonly SitePermutation[],
  prunes: (boundS: number) => boolean, bounds: boolean, bestS: () => number, onPlan: (plan: PlanSpec, evaluation: Evaluation) => void,
  deadline: number, tally: { choicesPrunedByBound: number; partialPlacementsPruned: number; placementsCovered: number; placementsEvaluated: number; plansCovered: number; plansEvaluated: number },
): boolean {
  const all: Choice[] = [];
  for (const layout of c.layouts) {
    let capacity = c.dp;
    let gpus = 0;
    for (const [site, perReplica] of layout.gpusPerSite) {
      capacity = Math.min(capacity, Math.floor(scenario.sites[site]!.gpus / perReplica));
      gpus += perReplica;
    }
    for (const k of layout.fittingMicrobatches) {
      const upper = Math.min(capacity, Math.floor(c.totalMicrobatches / k));
      // A valid lower bound on the iteration time of every plan with a replica running this choice
      // (the MIP's F0/F6 term: the replica's own pipeline, bubble, fill crossings and optimizer,
      // each at its most favourable value; docs/formulation.md §2-3).
      if (upper >= 1) all.push({ layout, k, upper, gpus, boundS: choicePipelineS(c, layout, k) });
    }
  }
  const perms = choicePermutations(all, symmetries);
  // Images of a choice share its bound (their least), so that leaving choices out keeps every orbit whole.
  // (The orbit of choice i is {pi(i)} over the group's permutations.)
  const own = all.map((ch) => ch.boundS);
  all.forEach((ch, i) => { for (const pi of perms) ch.boundS = Math.min(ch.boundS, own[pi[i]!]!); });
  const order: number[] = [];
  all.forEach((ch, i) => { if (prunes(ch.boundS)) tally.choicesPrunedByBound++; else order.push(i); });
  // Least bound first: the first placements reached are the likeliest to be fast.
  order.sort((a, b) => all[a]!.boundS - all[b]!.boundS || a - b);
  const n = order.length;
  // What the choices from position i on can do for the replicas still to place.
  const mostK = Array<number>(n + 1).fill(-Infinity);
  const leastK = Array<number>(n + 1).fill(Infinity);
  const leastGpus = Array<number>(n + 1).fill(Infinity);
  for (let i = n - 1; i >= 0; i--) {
    const ch = all[order[i]!]!;
    mostK[i] = Math.max(mostK[i + 1]!, ch.k);
    leastK[i] = Math.min(leastK[i + 1]!, ch.k);
    leastGpus[i] = Math.min(leastGpus[i + 1]!, ch.gpus);
  }
  const counts = all.map(() => 0);
  const image = all.map(() => 0);
  const free = scenario.sites.map((s) => s.gpus);
  let freeTotal = free.reduce((a, b) => a + b, 0);
  let steps = 0;

  /** Orbit size of the placement when it is its orbit's lexicographically greatest, else 0. */
  const orbitIfCanonical = (): number => {
    let fixed = 1;
    for (let p = 1; p < perms.length; p++) {
      const pi = perms[p]!;
      for (let i = 0; i < counts.length; i++) image[pi[i]!] = counts[i]!;
      let cmp = 0;
      for (let i = 0; i < counts.length && cmp === 0; i++) cmp = counts[i]! - image[i]!;
      if (cmp < 0) return 0;
      if (cmp === 0) fixed++;
    }
    return perms.length / fixed;
  };

  const leaf = (): boolean => {
    const orbit = orbitIfCanonical();
    if (orbit === 0) return true;
    // Groups in the naive enumeration's order (layouts, then microbatch counts), so that a plan is
    // written, and ranked for a framework's node check, exactly as the naive enumeration writes it.
    const groups = all.flatMap((ch, i) => (counts[i]! > 0 ? [{ layout: ch.layout.layout, microbatches: ch.k, replicas: counts[i]! }] : []));
    const plan = toPlan(c.config, scenario, groups);
    const laidOut = layOutPlan(scenario, plan);
    tally.placementsCovered += orbit;
    tally.placementsEvaluated++;
    if (restriction.framework !== undefined && frameworkIssues(restriction.framework, scenario, laidOut).length > 0) return true;
    const base = evaluateLayout(scenario, laidOut, 'closed-form');
    const loaded = base.predicted.links.map((l) => l.bytesPerIteration > 0);
    tally.plansCovered += orbit * networkCombinationCount(scenario, restriction, loaded);
    return timeNetworkSettings(scenario, restriction, plan, laidOut, loaded, bounds, bestS, onPlan, deadline, tally);
  };

  const visit = (i: number, replicasLeft: number, microbatchesLeft: number, chosenBoundS: number): boolean => {
    if (++steps % 4096 === 0 && Date.now() >= deadline) return false;
    // A chosen replica's own bound may have reached a better plan found meanwhile.
    if (prunes(chosenBoundS)) { tally.partialPlacementsPruned++; return true; }
    if (replicasLeft === 0) return microbatchesLeft === 0 ? leaf() : true;
    // Feasibility of the rest with the choices left (pure counting: exact).
    if (i === n || microbatchesLeft > replicasLeft * mostK[i]! || microbatchesLeft < replicasLeft * leastK[i]! || replicasLeft * leastGpus[i]! > freeTotal) {
      tally.partialPlacementsPruned++;
      return true;
    }
    // The replicas still to place run the microbatches left, so one of them runs at least
    // ceil(left / replicas): some choice from i on with at least that many is used, and its own
    // bound bounds every completion (the least such bound).
    if (bounds) {
      const busiest = Math.ceil(microbatchesLeft / replicasLeft);
      let least = Infinity;
      for (let p = i; p < n; p++) {
        const ch = all[order[p]!]!;
        if (ch.k >= busiest && ch.boundS < least) least = ch.boundS;
      }
      if (prunes(least)) { tally.partialPlacementsPruned++; return true; }
    }
    const ch = all[order[i]!]!;
    // The best plan may have improved since the choice was kept.
    let most = prunes(ch.boundS) ? 0 : Math.min(ch.upper, replicasLeft, Math.floor(microbatchesLeft / ch.k));
    for (const [site, gpus] of ch.layout.gpusPerSite) most = Math.min(most, Math.floor(free[site]! / gpus));
    const index = order[i]!;
    for (let count = most; count >= 0; count--) {
      counts[index] = count;
      for (const [site, gpus] of ch.layout.gpusPerSite) free[site]! -= count * gpus;
      freeTotal -= count * ch.gpus;
      const goOn = visit(i + 1, replicasLeft - count, microbatchesLeft - count * ch.k, count > 0 ? Math.max(chosenBoundS, ch.boundS) : chosenBoundS);
      for (const [site, gpus] of ch.layout.gpusPerSite) free[site]! += count * gpus;
      freeTotal += count * ch.gpus;
      counts[index] = 0;
      if (!goOn) return false;
    }
    return true;
  };
  return visit(0, c.dp, c.totalMicrobatches, -Infinity);
}

/** Times a placement under every network setting of its loaded links; false when the time limit stopped it. */
function timeNetworkSettings(
  scenario: Scenario, restriction: SpaceRestriction, plan: PlanSpec, laidOut: PlanLayout, loaded: readonly boolean[], undominatedOnly: boolean,
  bestS: () => number, onPlan: (plan: PlanSpec, evaluation: Evaluation) => void, deadline: number, tally: { plansEvaluated: number },
): boolean {
  for (const network of networkCombinations(scenario, restriction, loaded, undominatedOnly)) {
    if ((tally.plansEvaluated & 1023) === 1023 && Date.now() >= deadline) return false;
    const withNetwork = withNetworkSettings(laidOut, network);
    // The closed form is a lower bound on the cost model's time (docs/cost-model.md §5): only a
    // plan whose closed form beats the best so far is timed op by op.
    const closedForm = evaluateLayout(scenario, withNetwork, 'closed-form');
    tally.plansEvaluated++;
    if (!closedForm.fits || closedForm.predicted.iterationTimeS >= bestS()) continue;
    const evaluation = evaluateLayout(scenario, withNetwork);
    if (evaluation.fits && evaluation.predicted.iterationTimeS < bestS()) onPlan({ ...plan, network }, evaluation);
  }
  return true;
}

/** How many combinations networkCombinations yields. */
function networkCombinationCount(scenario: Scenario, restriction: SpaceRestriction, loaded: readonly boolean[]): number {
  if (restriction.defaultNetworkOnly || scenario.links.length === 0) return 1;
  let count = 1;
  scenario.links.forEach((link, i) => {
    if (loaded[i]) count *= linkSettingOptions(scenario, [scenario.sites[link.siteA]!.name, scenario.sites[link.siteB]!.name]).length;
  });
  return count;
}

/**
 * Every combination of per-link settings, generated lazily (odometer order): each loaded link
 * takes every option, unloaded links keep the defaults. Just the defaults when the space fixes them.
 */
function* networkCombinations(scenario: Scenario, restriction: SpaceRestriction, loaded: readonly boolean[], undominatedOnly = false): Generator<LinkSettingsSpec[] | undefined> {
  if (restriction.defaultNetworkOnly || scenario.links.length === 0) { yield undefined; return; }
  const options = scenario.links.map((link, i) => {
    const all = linkSettingOptions(scenario, [scenario.sites[link.siteA]!.name, scenario.sites[link.siteB]!.name]);
    if (!loaded[i]) return all.filter(isDefault);
    return undominatedOnly ? all.filter((option) => undominated(option, link.lossRate)) : all;
  });
  const digits = options.map(() => 0);
  for (;;) {
    yield digits.map((d, i) => options[i]![d]!);
    let i = 0;
    while (i < digits.length && ++digits[i]! === options[i]!.length) digits[i++] = 0;
    if (i === digits.length) return;
  }
}

/**
 * The settings of a loaded link no other setting dominates (docs/formulation.md §9): the most flows
 * per GPU pair for each transport, collective shape and compression, and on a lossless link RoCE
 * only. The settings act on the plan's time only through the link's usable bytes/s
 * (linkBytesPerS, given the GPU pairs, which do not depend on the settings), plus the collective
 * shape and compression, which are kept: that rate never falls with more flows (TCP: flows x a
 * per-flow cap, up to the capacity; RoCE: capacity / (1 + loss x max(1, window packets)), the
 * window per flow shrinking with flows), and without loss RoCE reaches the capacity, which TCP's
 * min(capacity, ...) cannot pass. The iteration time never falls as a link's rate falls (every
 * link busy time is bytes over that rate, and every path from it to the time is a sum or a max, or
 * the op-by-op schedule's finish times, which are max-plus in the op durations), so a dominated
 * setting's plan is never faster than its dominator's, which is timed.
 */
const undominated = (s: LinkSettingsSpec, lossRate: number): boolean =>
  s.flowsPerGpuPair === FLOWS_PER_GPU_PAIR[FLOWS_PER_GPU_PAIR.length - 1] && (s.transport === 'roce' || lossRate > 0);

const isDefault = (s: LinkSettingsSpec): boolean =>
  s.transport === 'roce' && s.flowsPerGpuPair === 1 && s.collectives === 'hierarchical' && s.gradientCompression === 'none';
