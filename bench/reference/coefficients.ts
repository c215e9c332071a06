// Frozen copy of src/formulation/coefficients.ts at commit da25fb5 (main before the enumeration perf work, after the pipeline-schedule
// change): the reference the equivalence test (test/candidates-equivalence.test.ts) and bench/enumeration-speed.ts compare against.
// Added the same ZB-H1 short-pipeline term as src (LayoutCoefficients.shortPipelineGapS and its use in outerLowerBound).
// Added the same link-step surplus as src (ConfigCoefficients.linkStepSurplusS, docs/formulation.md eq. 2.1, and its use in outerLowerBound).
// Takes the optimizer step's bytes per parameter from src (they follow training.gradientDtype).
/**
 * Cost-model numbers the placement MIP needs for one outer configuration and data-parallel
 * degree, computed with the cost model's own functions under placement-optimistic assumptions
 * (no pod oversubscription, full link capacity), so that every MIP term is a lower bound of the
 * cost model's value for every placement (docs/formulation.md §2).
 */
import { CALIBRATION } from '../../src/model/calibration-constants';
import { routeLatencyS } from '../../src/model/cross-site';
import { optimizerBytesPerParam } from '../../src/model/memory';
import { pipelineLinkStepSurplusS } from '../../src/formulation/link-step-surplus';
import { stageMemory, stageParams } from './memory';
import { allReduceS, dataParallelTier } from '../../src/model/network';
import { chainCrossings, fillDrainS, forwardPartS, roundTripProfile, shortPipelineS, type RoundTripProfile } from '../../src/model/pipeline';
import { hasStageFloor } from '../../src/model/pipeline-stage-floor';
import { stageFloorCoefficients, type StageFloorCoefficients } from '../../src/formulation/stage-floor-coefficients';
import { balancedLayers, buildStages, type StageLayout } from './placement';
import type { PlanSpec } from '../../src/model/plan-schema';
import type { Scenario } from '../../src/model/scenario';
import { stageTime, type StageTime } from './stage-cost';
import { BF16_BYTES, gBpsToBytesPerS } from '../../src/model/units';
import { divisors, type ParallelConfig, type ReplicaLayout } from '../../src/formulation/search-space';

/** Per-layout constants. */
export interface LayoutCoefficients {
  readonly layout: ReplicaLayout;
  /** Slowest stage step per microbatch, s. */
  readonly maxStepS: number;
  /** Fill/drain bubble, s. */
  readonly bubbleS: number;
  // Added to the frozen copy with the same change as src (ZB-H1 short-pipeline gaps in the MIP).
  readonly shortPipelineGapS: number;
  /** Cross-site boundaries along the chain, per link index: count of crossings routed over it. */
  readonly crossingsPerLink: ReadonlyMap<number, number>;
  /** Crossings along the chain. */
  readonly crossings: number;
  /** Sum over crossings of the route's one-way latency, s. */
  readonly crossingLatencyS: number;
  /** GPUs one replica uses at each site. */
  readonly gpusPerSite: ReadonlyMap<number, number>;
  /** Replicas of this layout the sites can hold. */
  readonly maxReplicas: number;
  /** Microbatch counts k for which every stage fits in memory. */
  readonly fittingMicrobatches: readonly number[];
  /** Compute windows (backward, forward) before stage j's gradient sync, s. */
  readonly backwardWindowS: readonly number[];
  readonly forwardWindowS: readonly number[];
  /** 1F1B and ZB-H1: eq. 5.9's row terms (src/formulation/stage-floor-coefficients.ts). */
  readonly stageFloor?: StageFloorCoefficients;
  /** Eq. 5.8's profile at zero link step, with stageFloor (not compared: coefficientDifference skips it). */
  readonly roundTrip?: RoundTripProfile;
  /** With `roundTrip`: per boundary q (stage q to q + 1), the links its route takes (none inside a site). */
  readonly boundaryLinks?: readonly (readonly number[])[];
}

export interface ConfigCoefficients {
  readonly config: ParallelConfig;
  readonly dp: number;
  /** Total microbatches M = globalBatchSeqs / microBatchSeqs. */
  readonly totalMicrobatches: number;
  readonly stages: readonly StageLayout[];
  readonly layouts: readonly LayoutCoefficients[];
  /** Bytes of one pipeline boundary transfer per microbatch (all tp x cp ranks together). */
  readonly sendBytes: number;
  /** Usable bytes/s of each link at its best (capacity x link efficiency). */
  readonly linkBytesPerS: readonly number[];
  readonly linkStepSurplusS: readonly number[];
  /** Gradient bytes of stage j summed over its tp ranks, as sent across sites (compression applied when allowed). */
  readonly crossGradientBytes: readonly number[];
  /** Lower bound of stage j's in-site gradient sync when its replicas are spread over the sites. */
  readonly intraSyncSpreadS: readonly number[];
  /** GPUs of one full-bisection pod at each site (pod oversubscription applies past it; Infinity when none). */
  readonly podGpus: readonly number[];
  /** Usable bytes/s of all links touching each site. */
  readonly siteIncidentBytesPerS: readonly number[];
  /** Usable bytes/s of the fastest single link touching each site (one ring hop leaves over one link). */
  readonly siteWidestLinkBytesPerS: readonly number[];
  /** Ring all-reduce time of stage j's gradients over `replicas` x cp ranks at a site, with or without pod oversubscription. */
  readonly ringS: (stage: number, site: number, replicas: number, spansPods: boolean) => number;
  /** Smallest one-way latency of any link, s. */
  readonly minLinkLatencyS: number;
  /** Lower bound of the optimizer step, s. */
  readonly optimizerS: number;
  /** Whether data-parallel communication overlaps compute (training.overlap.dataParallel). */
  readonly overlapDp: boolean;
}

/**
 * Microbatch counts a replica may run when dp replicas share M microbatches: divisors of M
 * within a factor 4 of the even share M/dp (uneven shares let faster sites do more), and at
 * least `fewest` (see {@link fewestMicrobatches}).
 */
export function microbatchCounts(totalMicrobatches: number, dp: number, fewest = 1): number[] {
  const even = totalMicrobatches / dp;
  return divisors(totalMicrobatches).filter((k) => k >= fewest && k >= even / 4 && k <= even * 4 && k <= totalMicrobatches - (dp - 1));
}

/** The fewest microbatches a replica may run: pp for the interleaved schedule (Megatron-LM's microbatch groups), else 1. */
export const fewestMicrobatches = (config: Pick<ParallelConfig, 'schedule' | 'pp'>): number => (config.schedule === 'interleaved' ? config.pp : 1);

/**
 * The fewest microbatches the busiest replica can run: replicas average M/dp, so one runs at
 * least that many, and replica counts come from {@link microbatchCounts}. Infinity when none fits.
 */
export function busiestReplicaMicrobatches(totalMicrobatches: number, dp: number, fewest = 1): number {
  return microbatchCounts(totalMicrobatches, dp, fewest).find((k) => k >= totalMicrobatches / dp) ?? Infinity;
}

/** The plan fields of a configuration with a data-parallel degree (no placement). */
export const configPlan = (config: ParallelConfig, dp: number): PlanSpec => ({ ...config, dp });

/** Largest number of replicas the sites can hold: the stages (tp x cp GPUs each) of all sites, pp to a replica (a split replica takes stages from two sites). */
export const maxReplicas = (scenario: Scenario, config: ParallelConfig): number =>
  Math.floor(scenario.sites.reduce((stages, site) => stages + Math.floor(site.gpus / (config.tp * config.cp)), 0) / config.pp);

/** Most replicas the sites hold whole, each on one site. */
export const wholeReplicas = (scenario: Scenario, config: ParallelConfig): number =>
  scenario.sites.reduce((replicas, site) => replicas + Math.floor(site.gpus / (config.tp * config.cp * config.pp)), 0);

/** Per-site stage times for a configuration (independent of dp), with the optimistic pod assumption. */
export function siteStageTimes(scenario: Scenario, config: ParallelConfig): { stages: StageLayout[]; times: StageTime[][] } {
  const plan = configPlan(config, 1);
  const stages = buildStages(scenario, plan, balancedLayers(scenario.model.layers, config.pp));
  const times = scenario.sites.map((site) => stages.map((stage) => stageTime(scenario, plan, stage, site, 0)));
  return { stages, times };
}

export function computeCoefficients(
  scenario: Scenario,
  config: ParallelConfig,
  dp: number,
  layouts: readonly ReplicaLayout[],
  siteTimes: { stages: StageLayout[]; times: StageTime[][] },
  defaultNetworkOnly = false,
): ConfigCoefficients {
  const plan = configPlan(config, dp);
  const { stages, times } = siteTimes;
  const totalMicrobatches = scenario.training.globalBatchSeqs / config.microBatchSeqs;
  const microbatchChoices = microbatchCounts(totalMicrobatches, dp, fewestMicrobatches(config));
  const gpusPerStage = config.tp * config.cp;

  // Memory depends on the stage and k, not on the site; compare with each site's capacity.
  const memoryGiB = stages.map(() => new Map<number, number>());
  const memoryFits = (stage: StageLayout, site: number, k: number) => {
    let need = memoryGiB[stage.index]!.get(k);
    if (need === undefined) {
      need = stageMemory(scenario, plan, stage, k).totalGiB;
      memoryGiB[stage.index]!.set(k, need);
    }
    return need <= scenario.sites[site]!.gpu.memoryGiB;
  };
  const layoutCoefficients = layouts.map((layout): LayoutCoefficients => {
    const steps = layout.stageSite.map((site, j) => times[site]![j]!.totalS);
    // The m-independent part of the bubble, non-decreasing in the (optimistic) stage times.
    const forwards = steps.map((step, j) => forwardPartS(step, times[layout.stageSite[j]!]![j]!));
    let bubbleS = fillDrainS(steps, forwards, plan);
    let shortPipelineGapS = shortPipelineS(steps, forwards, steps.length - 1, plan);
    // 1F1B and ZB-H1: eq. 5.9a's bubble and the rows' stage-floor terms, at zero link step.
    let stageFloor: StageFloorCoefficients | undefined;
    let roundTrip: RoundTripProfile | undefined;
    let boundaryLinks: (readonly number[])[] = [];
    if (hasStageFloor(plan)) {
      const boundaries = layout.stageSite.slice(1).map((to, q) => ({ virtualStage: q, latencyS: to === layout.stageSite[q] ? 0 : routeLatencyS(scenario, layout.stageSite[q]!, to), stepS: 0 }))
        .filter((b) => layout.stageSite[b.virtualStage] !== layout.stageSite[b.virtualStage + 1]);
      roundTrip = roundTripProfile(steps, forwards, plan, boundaries)!;
      boundaryLinks = layout.stageSite.slice(1).map((to, q) => (to === layout.stageSite[q] ? [] : scenario.routes[layout.stageSite[q]!]![to]!));
      ({ bubbleS, stageFloor } = stageFloorCoefficients(scenario, layout, roundTrip, steps));
      shortPipelineGapS = 0;
    }
    const crossingsPerLink = new Map<number, number>();
    let crossingLatencyS = 0;
    const hops = chainCrossings(layout.stageSite, config);
    for (const hop of hops) {
      crossingLatencyS += routeLatencyS(scenario, hop.from, hop.to);
      for (const link of scenario.routes[hop.from]![hop.to]!) crossingsPerLink.set(link, (crossingsPerLink.get(link) ?? 0) + 1);
    }
    const gpusPerSite = new Map<number, number>();
    for (const site of layout.stageSite) gpusPerSite.set(site, (gpusPerSite.get(site) ?? 0) + gpusPerStage);
    let layoutReplicas = Infinity;
    for (const [site, gpus] of gpusPerSite) layoutReplicas = Math.min(layoutReplicas, Math.floor(scenario.sites[site]!.gpus / gpus));
    // GPipe holds every microbatch: memory grows with k; the other schedules are capped by pp.
    const fittingMicrobatches = microbatchChoices.filter((k) => layout.stageSite.every((site, j) => memoryFits(stages[j]!, site, k)));
    let backward = 0;
    let forward = 0;
    const backwardWindowS: number[] = [];
    const forwardWindowS: number[] = [];
    layout.stageSite.forEach((site, j) => {
      const t = times[site]![j]!;
      backward += t.backwardS + t.recomputeS;
      forward += t.forwardS;
      backwardWindowS.push(backward);
      forwardWindowS.push(forward);
    });
    return {
      layout, maxStepS: Math.max(...steps), bubbleS, shortPipelineGapS, crossingsPerLink, crossings: hops.length, crossingLatencyS,
      gpusPerSite, maxReplicas: layoutReplicas, fittingMicrobatches, backwardWindowS, forwardWindowS, ...(stageFloor ? { roundTrip, boundaryLinks, stageFloor } : {}),
    };
  });

  const compression = scenario.search?.allowGradientCompression ? 0.5 : 1;
  const gradBytesPerGpu = stages.map((stage) => {
    const params = stageParams(scenario, plan, stage);
    return BF16_BYTES * (params.dense + params.expert);
  });
  // Ring time is non-decreasing in the rank count; the fastest site's tier gives the lower bound.
  const ringLowerBound = (bytes: number, ranks: number) =>
    Math.min(...scenario.sites.map((site) => allReduceS(bytes, ranks, dataParallelTier(site, ranks, config.tp, false))));
  const siteCount = scenario.sites.length;
  // Usable bytes/s of each link at its best, and of the links touching each site.
  const linkBytesPerS = scenario.links.map((link) => link.bandwidthBytesPerS * CALIBRATION.crossSiteLinkEfficiency);
  const siteLinkBytesPerS = scenario.sites.map((site) =>
    scenario.links.filter((l) => l.siteA === site.index || l.siteB === site.index).map((l) => linkBytesPerS[l.index]!));
  const optimizerS = Math.max(...stages.map((stage) => {
    const params = stageParams(scenario, plan, stage);
    const shards = config.zero >= 1 ? dp * config.cp : 1;
    const owned = params.dense / shards + params.expert / Math.max(1, config.zero >= 1 ? (config.tp * config.cp * dp) / (config.ep * config.expertTp) : 1);
    const fastestHbm = Math.max(...scenario.sites.map((s) => s.gpu.hbmGBps));
    return (owned * optimizerBytesPerParam(scenario, config.zero)) / gBpsToBytesPerS(fastestHbm);
  }));

  return {
    config,
    dp,
    totalMicrobatches,
    stages,
    layouts: layoutCoefficients,
    sendBytes: config.microBatchSeqs * scenario.training.seqLen * scenario.model.hidden * BF16_BYTES,
    linkBytesPerS,
    linkStepSurplusS: pipelineLinkStepSurplusS(scenario, config.microBatchSeqs * scenario.training.seqLen * scenario.model.hidden * BF16_BYTES, config.tp * config.cp, defaultNetworkOnly),
    crossGradientBytes: gradBytesPerGpu.map((g) => config.tp * g * compression),
    podGpus: scenario.sites.map((site) => (site.podOversubscription > 1 ? site.podGpus : Infinity)),
    intraSyncSpreadS: gradBytesPerGpu.map((g) => ringLowerBound(g, Math.ceil(dp / siteCount) * config.cp)),
    siteWidestLinkBytesPerS: siteLinkBytesPerS.map((links) => Math.max(0, ...links)),
    siteIncidentBytesPerS: siteLinkBytesPerS.map((links) => links.reduce((sum, bw) => sum + bw, 0)),
    ringS: (stage, site, replicas, spansPods) =>
      allReduceS(gradBytesPerGpu[stage]!, replicas * config.cp, dataParallelTier(scenario.sites[site]!, replicas * config.cp, config.tp, spansPods)),
    minLinkLatencyS: scenario.links.length > 0 ? Math.min(...scenario.links.map((l) => l.rttS / 2)) : 0,
    optimizerS,
    overlapDp: scenario.training.overlap.dataParallel,
  };
}

export { capacityLowerBound, outerLowerBound } from './bounds';
