/**
 * Data-parallel gradient sync per stage (docs/cost-model.md §3, DP; §4): the in-site ring at each site
 * hosting the stage and, for a stage whose replicas span sites, the shared cross-site phase with
 * the load it puts on each link. Under DualPipe every stage's weights are on two GPUs of each
 * replica (GPU j and pp - 1 - j hold the same two stages, schedule-chain.ts), whose gradients are
 * summed too: their rings take both GPUs' replicas, 2 x dp x cp ranks, wherever they are.
 */
import { addRouteLoad, emptyLoads, linkBusyS, linkSettings, ringHops, routeLatencyS, type LinkLoad } from './cross-site';
import { fp8CopiedParams, gathersParamsInFp8, stageParams, syncBytesPerGpu } from './memory';
import { dataParallelTier, reduceScatterS } from './network';
import type { PlanLayout } from './placement';
import { dataParallelRankSpacing } from './plan-schema';
import { isBidirectional } from './schedule-chain';
import type { Scenario } from './scenario';
import { FP8_BYTES } from './units';

/** Gradient sync time per stage: intra-site ring(s) plus the shared cross-site phase. */
export function dataParallelSync(
  scenario: Scenario,
  layout: PlanLayout,
  replicasOfStageAtSite: readonly (readonly number[])[],
  usedPerSite: readonly number[],
  settings: ReturnType<typeof linkSettings>,
) {
  const { plan, stages } = layout;
  const crossLoads: LinkLoad[] = emptyLoads(scenario);
  const intraS: number[] = [];
  const siteSets: number[][] = [];
  let maxHopLatencyS = 0;
  let maxRingSites = 1;
  const copies = isBidirectional(plan.schedule) ? 2 : 1;
  const fp8Gather = gathersParamsInFp8(scenario, plan);
  // Replicas at each site of the GPUs that hold stage j's weights: its own, and under DualPipe its mirror's.
  const ringReplicas = replicasOfStageAtSite.map((atSite, j) => (copies === 1 ? atSite : atSite.map((r, site) => r + replicasOfStageAtSite[stages.length - 1 - j]![site]!)));
  stages.forEach((stage, j) => {
    const params = stageParams(scenario, plan, stage);
    const gradBytesPerGpu = syncBytesPerGpu(params, fp8Gather ? fp8CopiedParams(scenario, plan, stage) : undefined);
    // fp8 compression on a link sends both halves at 1 byte per parameter, the fp8-gathered weights included.
    const compressedBytesPerGpu = FP8_BYTES * (params.dense + params.expert);
    const sites = ringReplicas[j]!.flatMap((replicas, site) => (replicas > 0 ? [site] : []));
    siteSets.push(sites);
    const totalRanks = copies * plan.dp * plan.cp;
    let intra = 0;
    for (const site of sites) {
      const ranks = ringReplicas[j]![site]! * plan.cp;
      const where = scenario.sites[site]!;
      const tier = dataParallelTier(where, ranks, dataParallelRankSpacing(plan), usedPerSite[site]! > where.podGpus);
      // Hierarchical: reduce-scatter then all-gather inside the site; single site: the same two halves of an all-reduce.
      intra = Math.max(intra, 2 * reduceScatterS(gradBytesPerGpu, sites.length > 1 ? ranks : totalRanks, tier));
    }
    intraS.push(intra);
    if (sites.length < 2) return;
    maxRingSites = Math.max(maxRingSites, sites.length);
    for (const hop of ringHops(sites)) {
      const link = scenario.routes[hop.from]![hop.to]![0]!;
      const hopBytesPerGpu = settings[link]!.gradientCompression === 'fp8' ? compressedBytesPerGpu : gradBytesPerGpu;
      const flat = settings[link]!.collectives === 'flat';
      const k = sites.length;
      const bytes = flat
        ? plan.tp * plan.cp * (2 * (totalRanks - 1) / totalRanks) * hopBytesPerGpu
        : plan.tp * (2 * (k - 1) / k) * hopBytesPerGpu;
      const pairs = flat ? plan.tp * plan.cp : ringReplicas[j]![hop.from]! * plan.tp * plan.cp;
      addRouteLoad(scenario, crossLoads, hop.from, hop.to, bytes, pairs);
      maxHopLatencyS = Math.max(maxHopLatencyS, routeLatencyS(scenario, hop.from, hop.to));
    }
  });
  const crossBusyS = linkBusyS(scenario, settings, crossLoads);
  const crossS = crossBusyS.length > 0 && crossBusyS.some((t) => t > 0)
    ? Math.max(...crossBusyS) + 2 * (maxRingSites - 1) * maxHopLatencyS
    : 0;
  // Only a stage whose replicas span sites pays the cross-site phase.
  const crossPerStageS = stages.map((_, j) => (siteSets[j]!.length > 1 ? crossS : 0));
  const syncS = stages.map((_, j) => intraS[j]! + crossPerStageS[j]!);
  return { syncS, crossS, crossPerStageS, crossLoads, crossBusyS };
}
