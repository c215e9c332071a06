/**
 * Bytes each cross-site link carries in one iteration, each direction on its own: what the cost
 * model puts on the links (docs/cost-model.md §4, §8), summed over every replica group with its
 * own microbatch count. Pipeline boundaries send activations forward and their gradients back
 * (group-pipelines.ts, the same route and bytes per crossing; each of DualPipe's two chains
 * carries half the microbatches); the gradient sync's cross-site
 * phase adds its ring traffic (data-parallel-sync.ts, after compression). Pure.
 */
import { addRouteLoad, emptyLoads, linkSettings } from './cross-site';
import { dataParallelSync } from './data-parallel-sync';
import { pipelineSendBytes } from './group-pipelines';
import { chainCrossings } from './pipeline';
import { siteOccupancy, type PlanLayout } from './placement';
import type { Scenario } from './scenario';
import { chainMicrobatches } from './schedule-chain';

/** Bytes over one link in one iteration, per direction (A and B are the link's ends as the scenario lists them). */
export interface LinkBytesPerIteration {
  readonly aToBBytes: number;
  readonly bToABytes: number;
}

/** Bytes per iteration on every link of `scenario` (indexed as scenario.links) under the laid-out plan. */
export function linkBytesPerIteration(scenario: Scenario, layout: PlanLayout): LinkBytesPerIteration[] {
  const { plan, groups } = layout;
  const pipeline = emptyLoads(scenario);
  const sendBytes = pipelineSendBytes(scenario, plan);
  for (const group of groups) {
    for (const hop of chainCrossings(group.stageSite, plan)) {
      addRouteLoad(scenario, pipeline, hop.from, hop.to, group.replicas * chainMicrobatches(plan.schedule, group.microbatches) * sendBytes, 0, true);
    }
  }
  const { usedPerSite, replicasOfStageAtSite } = siteOccupancy(scenario, layout);
  const sync = dataParallelSync(scenario, layout, replicasOfStageAtSite, usedPerSite, linkSettings(scenario, plan));
  return scenario.links.map((_, i) => ({
    aToBBytes: pipeline[i]!.aToB + sync.crossLoads[i]!.aToB,
    bToABytes: pipeline[i]!.bToA + sync.crossLoads[i]!.bToA,
  }));
}
