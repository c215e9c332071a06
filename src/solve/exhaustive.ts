/**
 * Exhaustive mode: every plan of the search space, one by one, through the cost model — the
 * same configurations, data-parallel degrees, (layout, microbatch) choices and network settings
 * the MIP search covers, with no pruning. The reference for correctness and speed; exponential.
 */
import { scenarioForSpace, toPlan, type SpaceRestriction } from '../formulation/search-space';
import { frameworkIssues } from '../model/framework-issues';
import type { LayoutCoefficients } from '../formulation/coefficients';
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan, withNetworkSettings } from '../model/placement';
import type { LinkSettingsSpec, PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { enumerateCandidates, type Candidate } from './candidates';
import { linkSettingOptions } from './network-post-solver';

export interface ExhaustiveResult {
  readonly plan?: PlanSpec;
  readonly evaluation?: Evaluation;
  /** Plans evaluated (each placement times each network setting combination). */
  readonly plansEvaluated: number;
  readonly timeS: number;
  /** False when the time limit stopped the enumeration: the result is then not the optimum. */
  readonly complete: boolean;
}

/**
 * `onCandidate` receives each fully enumerated candidate with the least time of its fitting plans
 * (Infinity when none fits): the reference the closed-form bounds are tested against.
 */
export function exhaustiveSearch(given: Scenario, restriction: SpaceRestriction, timeLimitS = Infinity, onCandidate?: (candidate: Candidate, leastTimeS: number) => void): ExhaustiveResult {
  const started = Date.now();
  const scenario = scenarioForSpace(given, restriction);
  const deadline = started + timeLimitS * 1000;
  let best: { plan: PlanSpec; evaluation: Evaluation } | undefined;
  let plansEvaluated = 0;
  let complete = true;

  outer: for (const candidate of enumerateCandidates(scenario, restriction)) {
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
    onCandidate?.(candidate, candidateLeastS);
  }
  return { plan: best?.plan, evaluation: best?.evaluation, plansEvaluated, timeS: (Date.now() - started) / 1000, complete };
}

/**
 * Every combination of per-link settings, generated lazily (odometer order): each loaded link
 * takes every option, unloaded links keep the defaults. Just the defaults when the space fixes them.
 */
function* networkCombinations(scenario: Scenario, restriction: SpaceRestriction, loaded: readonly boolean[]): Generator<LinkSettingsSpec[] | undefined> {
  if (restriction.defaultNetworkOnly || scenario.links.length === 0) { yield undefined; return; }
  const options = scenario.links.map((link, i) => {
    const all = linkSettingOptions(scenario, [scenario.sites[link.siteA]!.name, scenario.sites[link.siteB]!.name]);
    return loaded[i] ? all : all.filter(isDefault);
  });
  const digits = options.map(() => 0);
  for (;;) {
    yield digits.map((d, i) => options[i]![d]!);
    let i = 0;
    while (i < digits.length && ++digits[i]! === options[i]!.length) digits[i++] = 0;
    if (i === digits.length) return;
  }
}

const isDefault = (s: LinkSettingsSpec): boolean =>
  s.transport === 'roce' && s.flowsPerGpuPair === 1 && s.collectives === 'hierarchical' && s.gradientCompression === 'none';
