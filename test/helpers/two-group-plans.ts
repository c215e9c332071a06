/**
 * Every plan of a scenario's search space with exactly two replica groups: for each candidate
 * (configuration, dp), each ordered pair of distinct (layout, fitting microbatch count) choices
 * and each split of the dp replicas between them that covers the batch and fits the sites' GPUs.
 * Both orders of a pair are kept: the first of equal ends is the critical group, so order matters.
 */
import { FULL_SPACE, toPlan } from '../../src/formulation/search-space';
import type { PlanSpec } from '../../src/model/plan-schema';
import type { Scenario } from '../../src/model/scenario';
import { enumerateCandidates } from '../../src/solve/candidates';

export function twoGroupPlans(scenario: Scenario): PlanSpec[] {
  const plans: PlanSpec[] = [];
  for (const candidate of enumerateCandidates(scenario, FULL_SPACE)) {
    const c = candidate.coefficients();
    const choices = c.layouts.flatMap((layout) => layout.fittingMicrobatches.map((k) => ({ layout, k })));
    for (const a of choices) {
      for (const b of choices) {
        if (a === b) continue;
        for (let replicasA = 1; replicasA < c.dp; replicasA++) {
          const replicasB = c.dp - replicasA;
          if (replicasA * a.k + replicasB * b.k !== c.totalMicrobatches) continue;
          const free = scenario.sites.map((site) => site.gpus);
          for (const [site, gpus] of a.layout.gpusPerSite) free[site]! -= replicasA * gpus;
          for (const [site, gpus] of b.layout.gpusPerSite) free[site]! -= replicasB * gpus;
          if (free.some((gpus) => gpus < 0)) continue;
          plans.push(toPlan(c.config, scenario, [
            { layout: a.layout.layout, microbatches: a.k, replicas: replicasA },
            { layout: b.layout.layout, microbatches: b.k, replicas: replicasB },
          ]));
        }
      }
    }
  }
  return plans;
}
