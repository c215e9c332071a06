/**
 * The cheapest of a plan's images under the cost model's site symmetries (site-symmetry.ts):
 * each image takes the same time (the symmetries preserve everything the cost model reads), but
 * the sites' prices are not part of that, so two alike buildings at different prices give the
 * same plan two prices. Each image is re-evaluated by the cost model and kept only if it fits
 * and takes no longer.
 */
import { evaluate, type Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import { planCost } from '../model/prices';
import type { Scenario } from '../model/scenario';
import { costModelSiteSymmetries, type SitePermutation } from './site-symmetry';

/** The plan with every site name s replaced by sigma(s). */
function imageOf(scenario: Scenario, plan: PlanSpec, sigma: SitePermutation): PlanSpec {
  const index = new Map(scenario.sites.map((site) => [site.name, site.index]));
  const moved = (name: string) => scenario.sites[sigma.sites[index.get(name)!]!]!.name;
  const placement = plan.placement && {
    ...plan.placement,
    replicaGroups: plan.placement.replicaGroups.map((g) => ({ ...g, stageSites: g.stageSites.map((r) => ({ ...r, site: moved(r.site) })) })),
  };
  // Each link's settings under the image link's name, its ends in the order the scenario lists them.
  const listed = new Set(scenario.links.map((link) => `${scenario.sites[link.siteA]!.name}\u0000${scenario.sites[link.siteB]!.name}`));
  const network = plan.network?.map((s) => {
    const [a, b] = [moved(s.between[0]), moved(s.between[1])];
    return { ...s, between: (listed.has(`${a}\u0000${b}`) ? [a, b] : [b, a]) as [string, string] };
  });
  return { ...plan, ...(placement ? { placement } : {}), ...(network ? { network } : {}) };
}

/** The cheapest per iteration of `plan` and its site-symmetric images (the plan itself when none is cheaper). */
export function cheapestSymmetricPlan(scenario: Scenario, plan: PlanSpec, evaluation: Evaluation): { plan: PlanSpec; evaluation: Evaluation } {
  const costOf = (p: PlanSpec, e: Evaluation) => planCost(scenario, layOutPlan(scenario, p), e)?.usdPerIteration ?? 0;
  let best = { plan, evaluation, usd: costOf(plan, evaluation) };
  const timeS = evaluation.predicted.iterationTimeS;
  for (const sigma of costModelSiteSymmetries(scenario).slice(1)) {
    const image = imageOf(scenario, plan, sigma);
    const imageEvaluation = evaluate(scenario, JSON.parse(JSON.stringify(image)));
    if (!imageEvaluation.fits || imageEvaluation.predicted.iterationTimeS > timeS * (1 + 1e-9)) continue;
    const usd = costOf(image, imageEvaluation);
    if (usd < best.usd * (1 - 1e-12)) best = { plan: image, evaluation: imageEvaluation, usd };
  }
  return { plan: best.plan, evaluation: best.evaluation };
}
