/**
 * Cost-model numbers the placement MIP needs for one outer configuration and data-parallel
 * degree, computed with the cost model's own functions under placement-optimistic assumptions
 * (no pod oversubscription, full link capacity), so that every MIP term is a lower bound of the
 * cost model's value for every placement (docs/formulation.md §2). The bounds built on them are
 * in closed-form-bounds.ts, capacity-bound.ts, layout-capacity-bound.ts and ring-pattern-bound.ts;
 * stage classes and windows in stage-classes.ts; microbatch counts in microbatch-counts.ts.
 */
import { CALIBRATION } from '../model/calibration-constants';
import { routeLatencyS } from '../model/cross-site';
import { activationsGiB, microbatchesInFlight, optimizerBytesPerParam, stageMemoryTotalGiB, syncBytesPerGpu, type StageMemoryBasis } from '../model/memory';
import { allReduceS, dataParallelTier } from '../model/network';
import { chainCrossings, fillDrainS, forwardPartS, shortPipelineS } from '../model/pipeline';
import { roundTripFloorLine, roundTripFloorS, roundTripProfile, type ChainBoundary, type FloorLine, type RoundTripProfile } from '../model/pipeline-round-trip';
import { scheduleMicrobatchProblem } from '../model/pipeline-schedule-rules';
import { isVShaped } from '../model/schedule-chain';
import type { StageLayout } from '../model/placement';
import { dataParallelRankSpacing, DEFAULT_RANK_ORDER, expertDataParallel, type PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { BF16_BYTES, gBpsToBytesPerS } from '../model/units';
import { toPlan, type ParallelConfig, type ReplicaLayout } from './search-space';
import type { SiteStageTimes, EnumerationTables } from './enumeration-tables';
import { fewestMicrobatches, microbatchCounts } from './microbatch-counts';
import { stageFloorCoefficients, type StageFloorCoefficients } from './stage-floor-coefficients';
import { hasStageFloor } from '../model/pipeline-stage-floor';
import { pipelineLinkStepSurplusS } from './link-step-surplus';

/** Per-layout constants. */
export interface LayoutCoefficients {
  readonly layout: ReplicaLayout;
  /** Slowest stage step per microbatch, s. */
  readonly maxStepS: number;
  /** Fill/drain bubble, s. */
  readonly bubbleS: number;
  /** ZB-H1 with k < pp microbatches: each missing one leaves a drain gap this long (eq. 5.3), s; 0 for other schedules. */
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
  /** Eq. 5.8's constants at these stage times, crossing latencies and no link step (1F1B and ZB-H1; absent otherwise). */
  readonly roundTrip?: RoundTripProfile;
  /** With `roundTrip`: per boundary q of the chain (stage q to q + 1), the links its route takes (none inside a site). */
  readonly boundaryLinks?: readonly (readonly number[])[];
  /** Eq. 5.9's row terms (1F1B and ZB-H1, whose bubble is then eq. 5.9a's; absent otherwise). */
  readonly stageFloor?: StageFloorCoefficients;
}

/** Eq. 5.8 per profile and microbatch count: O(pp^2) each, asked for by several MIP rows of one choice. */
const floorCache = new WeakMap<RoundTripProfile, Map<number, number>>();

/** Eq. 5.8: a lower bound on the pipeline phase of a replica of this layout with k microbatches (0 where it has no profile). */
export function roundTripFloorOf(layout: Pick<LayoutCoefficients, 'roundTrip'>, k: number): number {
  const profile = layout.roundTrip;
  if (!profile) return 0;
  let byK = floorCache.get(profile);
  if (!byK) { byK = new Map(); floorCache.set(profile, byK); }
  let floorS = byK.get(k);
  if (floorS === undefined) { floorS = roundTripFloorS(profile, k); byK.set(k, floorS); }
  return floorS;
}

/**
 * Eq. 5.8 of k microbatches as a line in link `link`'s step, taken where every boundary routed
 * over the link waits `atStepS` (roundTripFloorLine): the tangent rows of F6.
 */
export function roundTripFloorLineOf(layout: Pick<LayoutCoefficients, 'roundTrip' | 'boundaryLinks'>, k: number, link: number, atStepS: number): FloorLine {
  const onLink = (layout.boundaryLinks ?? []).map((links) => links.includes(link));
  return roundTripFloorLine(layout.roundTrip, k, onLink, atStepS);
}

/** Replicas running one layout with one microbatch count: a placement is a list of these. */
export interface LayoutGroup {
  readonly layout: LayoutCoefficients;
  readonly microbatches: number;
  readonly replicas: number;
}

/** The plan of candidate `c` placed as `groups`. */
export function planOfGroups(c: ConfigCoefficients, scenario: Scenario, groups: readonly LayoutGroup[]): PlanSpec {
  return toPlan(c.config, scenario, groups.map((g) => ({ layout: g.layout.layout, microbatches: g.microbatches, replicas: g.replicas })));
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
  /**
   * Seconds each link's pipeline step takes, at least, beyond the crossing bytes over
   * `linkBytesPerS` (eq. 2.1, link-step-surplus.ts; 0 unless the space keeps the default settings).
   */
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

/** The plan fields of a configuration with a data-parallel degree (no placement); written out field by field (an object spread measured several times slower here). */
export function configPlan(config: ParallelConfig, dp: number): PlanSpec {
  const plan: PlanSpec = {
    tp: config.tp, cp: config.cp, ep: config.ep, pp: config.pp, dp, microBatchSeqs: config.microBatchSeqs,
    schedule: config.schedule, virtualStages: config.virtualStages, recompute: config.recompute, zero: config.zero,
  };
  if (config.expertTp !== config.tp) plan.expertTp = config.expertTp;
  if (config.recomputeModules !== undefined) plan.recomputeModules = [...config.recomputeModules];
  if (config.rankOrder !== undefined && config.rankOrder !== DEFAULT_RANK_ORDER) plan.rankOrder = config.rankOrder;
  return plan;
}

/**
 * Largest number of replicas the sites can hold: the stages (tp x cp GPUs each) all sites can
 * host, pp to a replica. A replica split between two sites takes its stages from both, so the
 * GPUs one site has beyond its whole replicas can carry stages of a replica that ends on another
 * site: 6 + 2 GPUs hold two replicas of 4 stages of one GPU, whole replicas alone one. Which
 * split layouts actually carry them is the placement's question (docs/formulation.md §1): the
 * count is an upper bound (a replica splits once, between two linked sites).
 */
export const maxReplicas = (scenario: Scenario, config: ParallelConfig): number =>
  Math.floor(scenario.sites.reduce((stages, site) => stages + Math.floor(site.gpus / (config.tp * config.cp)), 0) / config.pp);

/** Most replicas the sites hold whole, each on one site: {@link maxReplicas} without split replicas. */
export const wholeReplicas = (scenario: Scenario, config: ParallelConfig): number =>
  scenario.sites.reduce((replicas, site) => replicas + Math.floor(site.gpus / (config.tp * config.cp * config.pp)), 0);

/** The dp-independent constants of one layout under one configuration (all of LayoutCoefficients but the fitting microbatch counts). */
type LayoutShape = Omit<LayoutCoefficients, 'fittingMicrobatches'>;

/** Cross-site boundaries of a layout's chain of virtual stages (layout and virtual stage count only). */
type LayoutRoute = Pick<LayoutCoefficients, 'crossingsPerLink' | 'crossings' | 'crossingLatencyS'>;

function layoutRoute(scenario: Scenario, layout: ReplicaLayout, plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>): LayoutRoute {
  const crossingsPerLink = new Map<number, number>();
  let crossingLatencyS = 0;
  const hops = chainCrossings(layout.stageSite, plan);
  for (const hop of hops) {
    crossingLatencyS += routeLatencyS(scenario, hop.from, hop.to);
    for (const link of scenario.routes[hop.from]![hop.to]!) crossingsPerLink.set(link, (crossingsPerLink.get(link) ?? 0) + 1);
  }
  return { crossingsPerLink, crossings: hops.length, crossingLatencyS };
}

/** GPUs one replica of a layout uses per site, and how many replicas the sites hold (layout and tp x cp only). */
type LayoutFootprint = Pick<LayoutCoefficients, 'gpusPerSite' | 'maxReplicas'>;

function layoutFootprint(scenario: Scenario, layout: ReplicaLayout, gpusPerStage: number): LayoutFootprint {
  const gpusPerSite = new Map<number, number>();
  for (const site of layout.stageSite) gpusPerSite.set(site, (gpusPerSite.get(site) ?? 0) + gpusPerStage);
  let maxReplicas = Infinity;
  for (const [site, gpus] of gpusPerSite) maxReplicas = Math.min(maxReplicas, Math.floor(scenario.sites[site]!.gpus / gpus));
  return { gpusPerSite, maxReplicas };
}

/** A layout's constants under a configuration: every dp of it shares them (cached by the configuration object, so they take no dp). */
function layoutShape(scenario: Scenario, plan: ParallelConfig, layout: ReplicaLayout, times: SiteStageTimes['times'], tables: EnumerationTables): LayoutShape {
  const steps = layout.stageSite.map((site, j) => times[site]![j]!.totalS);
  // The m-independent part of the bubble, non-decreasing in the (optimistic) stage times.
  const forwards = steps.map((step, j) => forwardPartS(step, times[layout.stageSite[j]!]![j]!));
  let bubbleS = fillDrainS(steps, forwards, plan);
  // One microbatch short of pp: the gap each missing microbatch leaves (non-decreasing in the stage times too).
  let shortPipelineGapS = shortPipelineS(steps, forwards, steps.length - 1, plan);
  const route = tables.layoutValue(layout, `route ${plan.virtualStages}${isVShaped(plan.schedule) ? ' v' : ''}`, () => layoutRoute(scenario, layout, plan));
  // The link steps depend on the placement; at zero the floor is at most any placement's.
  const boundaries: ChainBoundary[] = [];
  const boundaryLinks: (readonly number[])[] = [];
  for (let q = 0; q + 1 < layout.stageSite.length; q++) {
    const from = layout.stageSite[q]!;
    const to = layout.stageSite[q + 1]!;
    boundaryLinks.push(from === to ? [] : scenario.routes[from]![to]!);
    if (from !== to) boundaries.push({ virtualStage: q, latencyS: routeLatencyS(scenario, from, to), stepS: 0 });
  }
  const roundTrip = roundTripProfile(steps, forwards, plan, boundaries);
  // 1F1B and ZB-H1: the rows are built on eq. 5.8-5.9, not on eq. 5.1 and 5.3 (docs/formulation.md §2).
  let stageFloor: StageFloorCoefficients | undefined;
  if (roundTrip && hasStageFloor(plan)) {
    ({ bubbleS, stageFloor } = stageFloorCoefficients(scenario, layout, roundTrip, steps));
    shortPipelineGapS = 0;
  }
  const gpusPerStage = plan.tp * plan.cp;
  const footprint = tables.layoutValue(layout, `footprint ${gpusPerStage}`, () => layoutFootprint(scenario, layout, gpusPerStage));
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
    layout, maxStepS: Math.max(...steps), bubbleS, shortPipelineGapS, crossingsPerLink: route.crossingsPerLink, crossings: route.crossings, crossingLatencyS: route.crossingLatencyS,
    gpusPerSite: footprint.gpusPerSite, maxReplicas: footprint.maxReplicas, backwardWindowS, forwardWindowS, ...(roundTrip ? { roundTrip, boundaryLinks } : {}),
    ...(stageFloor ? { stageFloor } : {}),
  };
}

/**
 * Which microbatch choices fit stage j at each site: fits[j][site][i] for choice i. Not a prefix:
 * with the interleaved schedule the warm-up depends on Megatron's microbatch group size, which is
 * not monotone in the count (13 microbatches on 4 stages need groups of 7, 16 need groups of 4).
 */
function fittingChoices(scenario: Scenario, plan: PlanSpec, bases: readonly StageMemoryBasis[], microbatchChoices: readonly number[]): boolean[][][] {
  const capacities = scenario.sites.map((site) => site.memoryCapacityGiB);
  return bases.map((basis, j) => {
    // A count the schedule cannot run (torch's interleaved zero-bubble rounds) fits nowhere.
    const needs = microbatchChoices.map((k) => (scheduleMicrobatchProblem(plan.schedule, k, plan.pp) === undefined
      ? stageMemoryTotalGiB(basis, plan, activationsGiB(basis, microbatchesInFlight(plan, j, k))) : Infinity));
    return capacities.map((capacity) => needs.map((need) => need <= capacity));
  });
}

/**
 * The coefficients of (config, dp). `tables` holds the scenario's stages, stage times and memory
 * bases, and the layout constants of each configuration, shared by all its dp (a fresh
 * `new EnumerationTables(scenario)` gives the same numbers). `equalMicrobatches`: only M / dp
 * microbatches per replica (a framework's space), else the uneven shares of {@link microbatchCounts}.
 * `defaultNetworkOnly`: the space keeps every link's default settings (the baselines), which
 * gives the link steps a surplus (eq. 2.1).
 */
export function computeCoefficients(
  scenario: Scenario,
  config: ParallelConfig,
  dp: number,
  layouts: readonly ReplicaLayout[],
  tables: EnumerationTables,
  equalMicrobatches = false,
  defaultNetworkOnly = false,
): ConfigCoefficients {
  const plan = configPlan(config, dp);
  const { times: { stages, times }, memoryBases } = tables.forConfig(config);
  const totalMicrobatches = scenario.training.globalBatchSeqs / config.microBatchSeqs;
  // A framework's space (search-space.ts, equalMicrobatchesOnly): every replica runs M / dp.
  const microbatchChoices = equalMicrobatches
    ? (totalMicrobatches % dp === 0 && totalMicrobatches / dp >= fewestMicrobatches(config) ? [totalMicrobatches / dp] : [])
    : microbatchCounts(totalMicrobatches, dp, fewestMicrobatches(config), tables.divisors(totalMicrobatches));

  // Memory depends on the stage and k, not on the site; compare with each site's capacity.
  // GPipe holds every microbatch: memory grows with k; the other schedules are capped by pp.
  const fitting = fittingChoices(scenario, plan, memoryBases, microbatchChoices);
  const shapes = tables.configValue(config, layouts, () => layouts.map((layout) => layoutShape(scenario, config, layout, times, tables)));
  const layoutCoefficients = shapes.map((shape): LayoutCoefficients => {
    const fits = microbatchChoices.filter((_, i) => shape.layout.stageSite.every((site, j) => fitting[j]![site]![i]));
    return {
      layout: shape.layout, maxStepS: shape.maxStepS, bubbleS: shape.bubbleS, shortPipelineGapS: shape.shortPipelineGapS, crossingsPerLink: shape.crossingsPerLink, crossings: shape.crossings,
      crossingLatencyS: shape.crossingLatencyS, gpusPerSite: shape.gpusPerSite, maxReplicas: shape.maxReplicas,
      fittingMicrobatches: fits, backwardWindowS: shape.backwardWindowS, forwardWindowS: shape.forwardWindowS, ...(shape.roundTrip ? { roundTrip: shape.roundTrip, boundaryLinks: shape.boundaryLinks ?? [] } : {}),
      ...(shape.stageFloor ? { stageFloor: shape.stageFloor } : {}),
    };
  });

  // Half the sync bytes where fp8 compression may be chosen: the evaluator's compressed hop moves
  // 1 byte per parameter, at least this (equal without fp8 parameter gather).
  const compression = scenario.search?.allowGradientCompression ? 0.5 : 1;
  const gradBytesPerGpu = memoryBases.map((basis) => syncBytesPerGpu(basis.params, basis.fp8OnlyWeights ? basis.fp8Params : undefined));
  // Ring time is non-decreasing in the rank count; the fastest site's tier gives the lower bound.
  const ringLowerBound = (bytes: number, ranks: number) =>
    Math.min(...scenario.sites.map((site) => allReduceS(bytes, ranks, dataParallelTier(site, ranks, dataParallelRankSpacing(config), false))));
  const siteCount = scenario.sites.length;
  // Usable bytes/s of each link at its best, and of the links touching each site.
  const linkBytesPerS = scenario.links.map((link) => link.bandwidthBytesPerS * CALIBRATION.crossSiteLinkEfficiency);
  const siteLinkBytesPerS = scenario.sites.map((site) =>
    scenario.links.filter((l) => l.siteA === site.index || l.siteB === site.index).map((l) => linkBytesPerS[l.index]!));
  const sendBytes = config.microBatchSeqs * scenario.training.seqLen * scenario.model.hidden * BF16_BYTES;
  const fastestHbm = Math.max(...scenario.sites.map((s) => s.gpu.hbmGBps));
  const optimizerS = Math.max(...memoryBases.map(({ params }) => {
    const shards = config.zero >= 1 ? dp * config.cp : 1;
    const owned = params.dense / shards + params.expert / Math.max(1, config.zero >= 1 ? expertDataParallel({ ...config, dp }) : 1);
    return (owned * optimizerBytesPerParam(scenario, config.zero)) / gBpsToBytesPerS(fastestHbm);
  }));

  return {
    config,
    dp,
    totalMicrobatches,
    stages,
    layouts: layoutCoefficients,
    sendBytes,
    linkBytesPerS,
    linkStepSurplusS: pipelineLinkStepSurplusS(scenario, sendBytes, config.tp * config.cp, defaultNetworkOnly),
    crossGradientBytes: gradBytesPerGpu.map((g) => config.tp * g * compression),
    podGpus: scenario.sites.map((site) => (site.podOversubscription > 1 ? site.podGpus : Infinity)),
    intraSyncSpreadS: gradBytesPerGpu.map((g) => ringLowerBound(g, Math.ceil(dp / siteCount) * config.cp)),
    siteWidestLinkBytesPerS: siteLinkBytesPerS.map((links) => Math.max(0, ...links)),
    siteIncidentBytesPerS: siteLinkBytesPerS.map((links) => links.reduce((sum, bw) => sum + bw, 0)),
    ringS: (stage, site, replicas, spansPods) =>
      allReduceS(gradBytesPerGpu[stage]!, replicas * config.cp, dataParallelTier(scenario.sites[site]!, replicas * config.cp, dataParallelRankSpacing(config), spansPods)),
    minLinkLatencyS: scenario.links.length > 0 ? Math.min(...scenario.links.map((l) => l.rttS / 2)) : 0,
    optimizerS,
    overlapDp: scenario.training.overlap.dataParallel,
  };
}
