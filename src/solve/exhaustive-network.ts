/**
 * The network settings of a placement in the exhaustive mode (exhaustive.ts): every combination
 * of per-link settings of its loaded links, or only the undominated ones (docs/formulation.md §9),
 * each plan screened by the closed form and timed op by op.
 */
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { withNetworkSettings, type PlanLayout } from '../model/placement';
import type { LinkSettingsSpec, PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import type { SpaceRestriction } from '../formulation/search-space';
import { FLOWS_PER_GPU_PAIR, linkSettingOptions } from './network-post-solver';

/** Times a placement under every network setting of its loaded links; false when the time limit stopped it. */
export function timeNetworkSettings(
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
export function networkCombinationCount(scenario: Scenario, restriction: SpaceRestriction, loaded: readonly boolean[]): number {
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
export function* networkCombinations(scenario: Scenario, restriction: SpaceRestriction, loaded: readonly boolean[], undominatedOnly = false): Generator<LinkSettingsSpec[] | undefined> {
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
