/**
 * Cost-model numbers the placement MIP needs for one outer configuration and data-parallel
 * degree, computed with the cost model's own functions under placement-optimistic assumptions
 * (no pod oversubscription, full link capacity), so that every MIP term is a lower bound of the
 * cost model's value for every placement (docs/formulation.md §2).
 */
import { CALIBRATION } from '../model/calibration-constants';
import { routeLatencyS } from '../model/cross-site';
import { activationsGiB, microbatchesInFlight, stageMemoryTotalGiB, type StageMemoryBasis } from '../model/memory';
import { allReduceS, dataParallelTier } from '../model/network';
import {
  chainCrossings, exposedSyncS, fewestScheduleMicrobatches, fillDrainS, forwardPartS, roundTripFloorS, roundTripProfile, scheduleMicrobatchProblem,
  shortPipelineS, type ChainBoundary, type RoundTripProfile,
} from '../model/pipeline';
import { isVShaped } from '../model/schedule-chain';
import type { StageLayout } from '../model/placement';
import { expertDataParallel, type PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { BF16_BYTES, gBpsToBytesPerS } from '../model/units';
import { divisors, toPlan, type ParallelConfig, type ReplicaLayout } from './search-space';
import type { SiteStageTimes, EnumerationTables } from './enumeration-tables';

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
 * least `fewest` (see {@link fewestMicrobatches}). `divisorsOfTotal` (divisors of M, ascending)
 * may be passed when the caller has them.
 */
export function microbatchCounts(totalMicrobatches: number, dp: number, fewest = 1, divisorsOfTotal: readonly number[] = divisors(totalMicrobatches)): number[] {
  const even = totalMicrobatches / dp;
  return divisorsOfTotal.filter((k) => k >= fewest && k >= even / 4 && k <= even * 4 && k <= totalMicrobatches - (dp - 1));
}

/** The fewest microbatches a replica may run: pp for the interleaved schedules, 2pp - 1 for ZBV, else 1 (fewestScheduleMicrobatches). */
export const fewestMicrobatches = (config: Pick<ParallelConfig, 'schedule' | 'pp'>): number => fewestScheduleMicrobatches(config.schedule, config.pp);

/**
 * The fewest microbatches the busiest replica can run: replicas average M/dp, so one runs at
 * least that many, and replica counts come from {@link microbatchCounts}. Infinity when none fits.
 * That is the least divisor of M at or above M/dp if it is within the counts' upper limits (a
 * larger divisor cannot be: the limits are upper bounds, and M/dp is above the lower one).
 */
export function busiestReplicaMicrobatches(totalMicrobatches: number, dp: number, fewest = 1, divisorsOfTotal: readonly number[] = divisors(totalMicrobatches)): number {
  const even = totalMicrobatches / dp;
  for (const k of divisorsOfTotal) {
    if (k < even || k < fewest) continue;
    return k <= even * 4 && k <= totalMicrobatches - (dp - 1) ? k : Infinity;
  }
  return Infinity;
}

/** The plan fields of a configuration with a data-parallel degree (no placement); written out field by field (an object spread measured several times slower here). */
export function configPlan(config: ParallelConfig, dp: number): PlanSpec {
  const plan: PlanSpec = {
    tp: config.tp, cp: config.cp, ep: config.ep, pp: config.pp, dp, microBatchSeqs: config.microBatchSeqs,
    schedule: config.schedule, virtualStages: config.virtualStages, recompute: config.recompute, zero: config.zero,
  };
  if (config.expertTp !== config.tp) plan.expertTp = config.expertTp;
  if (config.recomputeModules !== undefined) plan.recomputeModules = [...config.recomputeModules];
  return plan;
}

/** Largest number of replicas the sites can hold (split layouts use the same GPUs per replica). */
export const maxReplicas = (scenario: Scenario, config: ParallelConfig): number =>
  scenario.sites.reduce((sum, site) => sum + Math.floor(site.gpus / (config.tp * config.cp * config.pp)), 0);

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
  const bubbleS = fillDrainS(steps, forwards, plan);
  // One microbatch short of pp: the gap each missing microbatch leaves (non-decreasing in the stage times too).
  const shortPipelineGapS = shortPipelineS(steps, forwards, steps.length - 1, plan);
  const route = tables.layoutValue(layout, `route ${plan.virtualStages}${isVShaped(plan.schedule) ? ' v' : ''}`, () => layoutRoute(scenario, layout, plan));
  // The link steps depend on the placement; at zero the floor is at most any placement's.
  const boundaries: ChainBoundary[] = [];
  for (let q = 0; q + 1 < layout.stageSite.length; q++) {
    const from = layout.stageSite[q]!;
    const to = layout.stageSite[q + 1]!;
    if (from !== to) boundaries.push({ virtualStage: q, latencyS: routeLatencyS(scenario, from, to), stepS: 0 });
  }
  const roundTrip = roundTripProfile(steps, forwards, plan, boundaries);
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
    gpusPerSite: footprint.gpusPerSite, maxReplicas: footprint.maxReplicas, backwardWindowS, forwardWindowS, ...(roundTrip ? { roundTrip } : {}),
  };
}

/**
 * Which microbatch choices fit stage j at each site: fits[j][site][i] for choice i. Not a prefix:
 * with the interleaved schedule the warm-up depends on Megatron's microbatch group size, which is
 * not monotone in the count (13 microbatches on 4 stages need groups of 7, 16 need groups of 4).
 */
function fittingChoices(scenario: Scenario, plan: PlanSpec, bases: readonly StageMemoryBasis[], microbatchChoices: readonly number[]): boolean[][][] {
  const capacities = scenario.sites.map((site) => site.gpu.memoryGiB);
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
 */
export function computeCoefficients(
  scenario: Scenario,
  config: ParallelConfig,
  dp: number,
  layouts: readonly ReplicaLayout[],
  tables: EnumerationTables,
  equalMicrobatches = false,
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
      fittingMicrobatches: fits, backwardWindowS: shape.backwardWindowS, forwardWindowS: shape.forwardWindowS, ...(shape.roundTrip ? { roundTrip: shape.roundTrip } : {}),
    };
  });

  const compression = scenario.search?.allowGradientCompression ? 0.5 : 1;
  const gradBytesPerGpu = memoryBases.map(({ params }) => BF16_BYTES * (params.dense + params.expert));
  // Ring time is non-decreasing in the rank count; the fastest site's tier gives the lower bound.
  const ringLowerBound = (bytes: number, ranks: number) =>
    Math.min(...scenario.sites.map((site) => allReduceS(bytes, ranks, dataParallelTier(site, ranks, config.tp, false))));
  const siteCount = scenario.sites.length;
  // Usable bytes/s of each link at its best, and of the links touching each site.
  const linkBytesPerS = scenario.links.map((link) => link.bandwidthBytesPerS * CALIBRATION.crossSiteLinkEfficiency);
  const siteLinkBytesPerS = scenario.sites.map((site) =>
    scenario.links.filter((l) => l.siteA === site.index || l.siteB === site.index).map((l) => linkBytesPerS[l.index]!));
  const fastestHbm = Math.max(...scenario.sites.map((s) => s.gpu.hbmGBps));
  const optimizerS = Math.max(...memoryBases.map(({ params }) => {
    const shards = config.zero >= 1 ? dp * config.cp : 1;
    const owned = params.dense / shards + params.expert / Math.max(1, config.zero >= 1 ? expertDataParallel({ ...config, dp }) : 1);
    return (owned * CALIBRATION.optimizerBytesPerParam) / gBpsToBytesPerS(fastestHbm);
  }));

  return {
    config,
    dp,
    totalMicrobatches,
    stages,
    layouts: layoutCoefficients,
    sendBytes: config.microBatchSeqs * scenario.training.seqLen * scenario.model.hidden * BF16_BYTES,
    linkBytesPerS,
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

/**
 * ZeRO-3 gathers the weights for every microbatch: each step of stage j lasts at least 1.5 x
 * that stage's gradient sync (evaluate.ts, zero3Exposed: step = max(compute, 1.5 x sync)), the
 * sync at least intraSyncSpreadS[j] (some site holds ceil(dp / sites) of the stage's replicas),
 * and the busiest replica runs at least k microbatches, each through every stage. 0 below ZeRO-3.
 */
export function zero3GatherLowerBound(c: ConfigCoefficients): number {
  if (c.config.zero < 3) return 0;
  const k = busiestReplicaMicrobatches(c.totalMicrobatches, c.dp, fewestMicrobatches(c.config));
  if (!Number.isFinite(k)) return 0;
  return k * 1.5 * Math.max(0, ...c.intraSyncSpreadS);
}

/**
 * Stage j's largest backward and forward compute windows over the candidate's layouts: the most
 * sync any replica group could hide behind its compute, so bounds that use them hold for every group.
 */
export function largestWindowsS(c: ConfigCoefficients, j: number): [number, number] {
  let backwardS = -Infinity;
  let forwardS = -Infinity;
  for (const l of c.layouts) {
    backwardS = Math.max(backwardS, l.backwardWindowS[j]!);
    forwardS = Math.max(forwardS, l.forwardWindowS[j]!);
  }
  return [backwardS, forwardS];
}

/** The cost model's exposed sync for this candidate's ZeRO stage and overlap setting. */
const exposureOf = (c: ConfigCoefficients, syncS: number, backwardWindowS: number, forwardWindowS: number): number =>
  exposedSyncS(c.config, c.overlapDp, syncS, backwardWindowS, forwardWindowS);

/**
 * A lower bound on the iteration time of every placement of (config, dp) (docs/formulation.md
 * §4). Either every stage keeps all its replicas on one site — then all replicas share one
 * layout, and that layout's pipeline with ceil(M/dp) microbatches, its link load and its in-site
 * sync bound the time — or some stage spans sites, and the fluid pipeline bound plus the least
 * cross-site sync any stage can pay bound it. `pipelineBoundS` bounds every placement's pipeline
 * phase (the candidate's quick bound).
 */
export function outerLowerBound(c: ConfigCoefficients, pipelineBoundS: number): number {
  const k = busiestReplicaMicrobatches(c.totalMicrobatches, c.dp, fewestMicrobatches(c.config));
  if (!Number.isFinite(k)) return Infinity;
  let oneLayout = Infinity;
  for (const layout of c.layouts) {
    if (!layout.fittingMicrobatches.some((m) => m >= k) || layout.maxReplicas < c.dp) continue;
    let linkStep = 0;
    // Fill and drain: the crossings routed over a link each take at least its step.
    let fillSteps = 0;
    for (const [link, crossings] of layout.crossingsPerLink) {
      const step = (c.dp * crossings * c.sendBytes) / c.linkBytesPerS[link]!;
      linkStep = Math.max(linkStep, step);
      fillSteps = Math.max(fillSteps, 2 * crossings * step);
    }
    // ZB-H1's short-pipeline gaps shrink as k grows, but never faster than k x maxStep grows: k is the least.
    const shortS = Math.max(0, c.config.pp - k) * layout.shortPipelineGapS;
    const pipeline = k * Math.max(layout.maxStepS, linkStep) + layout.bubbleS + shortS + 2 * layout.crossingLatencyS + fillSteps;
    let exposed = 0;
    c.stages.forEach((_, j) => {
      // Every replica here: stage j's ring has all dp replicas at its site, past a pod if they overflow one.
      const site = layout.layout.stageSite[j]!;
      const ring = c.ringS(j, site, c.dp, c.dp * layout.gpusPerSite.get(site)! > c.podGpus[site]!);
      exposed = Math.max(exposed, exposureOf(c, ring, layout.backwardWindowS[j]!, layout.forwardWindowS[j]!));
    });
    oneLayout = Math.min(oneLayout, pipeline + exposed);
  }
  let spanning = Infinity;
  // Some replica runs at least k microbatches, so some layout must fit k or more in memory.
  const usable = c.layouts.some((l) => l.fittingMicrobatches.some((m) => m >= k));
  // A spanning stage's ring hop leaves its site over one link: the fastest single link bounds it.
  const widest = Math.max(0, ...c.siteWidestLinkBytesPerS);
  if (usable && c.siteIncidentBytesPerS.length > 1 && widest > 0 && c.dp > 1) {
    // Every stage has an in-site ring over at least ceil(dp / sites) replicas somewhere; the stage
    // that spans also pays the cross-site phase.
    // A spanning stage's whole class spans over the same ring (stageClasses): its hops carry the
    // class's bytes, and every stage of the class pays the phase.
    let leastSpanExposure = Infinity;
    let inSiteExposure = 0;
    for (const cls of stageClasses(c)) {
      const crossS = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0) / widest + 2 * c.minLinkLatencyS;
      let classExposure = 0;
      for (const j of cls) {
        const [windowB, windowF] = largestWindowsS(c, j);
        classExposure = Math.max(classExposure, exposureOf(c, c.intraSyncSpreadS[j]! + crossS, windowB, windowF));
        inSiteExposure = Math.max(inSiteExposure, exposureOf(c, c.intraSyncSpreadS[j]!, windowB, windowF));
      }
      leastSpanExposure = Math.min(leastSpanExposure, classExposure);
    }
    spanning = pipelineBoundS + Math.max(leastSpanExposure, inSiteExposure);
  }
  return Math.min(oneLayout, spanning) + c.optimizerS;
}

/**
 * Forced-spanning bound (docs/formulation.md §4): stage j of all dp replicas is hosted on at least
 * k_j sites in every placement, where k_j is the larger of
 * - the fewest sites whose GPUs (largest first) hold dp x tp x cp, the stage alone; and
 * - the fewest sites that can hold stage j of all dp replicas: a replica with stage j at site s
 *   puts at least the fewest GPUs any such layout puts at s there, since a layout's run of stages
 *   at s around j comes with it (with one cut per replica, a middle stage brings half the
 *   pipeline), so s holds at most G_s / that many of them (fewestHostingSites).
 * Stages of one class (stageClasses) share their sites, so they span together, and their rings'
 * hops carry the class's bytes together. Every stage with k_j >= 2 pays the cross-site phase: its
 * class's ring sends 2(k_j - 1)/k_j of the class's bytes on each hop (at most the widest link's
 * speed), the rings' hops together put sum k_j 2(k_j - 1)/k_j bytes_j on link directions (at most
 * all links' capacity both ways), and the hop latencies add up to at least 2 (k - 1) x the
 * shortest link latency. With the in-site ring over ceil(dp / sites)
 * replicas (intraSyncSpreadS) and each stage's largest windows, the exposed sync of the worst such
 * stage, on top of every placement's pipeline bound, bounds the iteration. -Infinity when no stage
 * must span.
 */
export function forcedSpanningLowerBound(c: ConfigCoefficients, siteGpus: readonly number[], pipelineBoundS: number): number {
  const largestFirst = [...siteGpus].sort((a, b) => b - a);
  const need = c.dp * c.config.tp * c.config.cp;
  let held = 0;
  let sitesForAnyStage = 0;
  while (sitesForAnyStage < largestFirst.length && held < need) held += largestFirst[sitesForAnyStage++]!;
  const widest = Math.max(0, ...c.siteWidestLinkBytesPerS);
  const allLinksBothWays = c.linkBytesPerS.reduce((sum, bw) => sum + 2 * bw, 0);
  if (held < need || widest <= 0 || allLinksBothWays <= 0 || siteGpus.length < 2) return -Infinity;
  // A class's stages share their sites (stageClasses): one that must span makes all of them span,
  // over the same ring, so each hop carries the class's bytes together.
  const sitesOfStage = c.stages.map(() => sitesForAnyStage);
  let largestHopBytes = 0;
  let hopBytes = 0;
  let mostSites = 2;
  for (const cls of stageClasses(c)) {
    const k = Math.max(sitesForAnyStage, ...cls.map((j) => fewestHostingSites(c, siteGpus, j)));
    if (!Number.isFinite(k)) return Infinity; // the sites cannot hold this class of every replica
    if (k < 2) continue;
    for (const j of cls) sitesOfStage[j] = k;
    const share = (2 * (k - 1)) / k;
    const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
    largestHopBytes = Math.max(largestHopBytes, share * bytes);
    hopBytes += k * share * bytes;
    mostSites = Math.max(mostSites, k);
  }
  if (sitesOfStage.every((k) => k < 2)) return -Infinity;
  const crossS = Math.max(largestHopBytes / widest, hopBytes / allLinksBothWays) + 2 * (mostSites - 1) * c.minLinkLatencyS;
  let exposed = 0;
  c.stages.forEach((_, j) => {
    const [windowB, windowF] = largestWindowsS(c, j);
    exposed = Math.max(exposed, exposureOf(c, c.intraSyncSpreadS[j]! + (sitesOfStage[j]! >= 2 ? crossS : 0), windowB, windowF));
  });
  return pipelineBoundS + exposed + c.optimizerS;
}

/**
 * The stages of a class whose exposure rows can bind. Stages of one class share their hosting,
 * spanning and thresholds, and a stage's ring bounds (F14, F14b) grow with its gradient bytes;
 * so stage k's rows E >= a sync_k - window_k are implied by stage j's when j has at least k's
 * bytes and at most its windows (every exposure form grows with the windows). Dropping implied
 * rows leaves the MIP's optimum unchanged and shrinks it (32 stages -> 1-2 per class); the
 * ring-pattern bound's exposures likewise.
 */
export function undominatedStages(c: ConfigCoefficients, cls: readonly number[], windowsOf: (stage: number) => readonly number[]): number[] {
  const bytes = (j: number) => c.crossGradientBytes[j]!;
  const dominates = (j: number, k: number) => bytes(j) >= bytes(k) && windowsOf(j).every((w, i) => w <= windowsOf(k)[i]!);
  return cls.filter((k, ki) => !cls.some((j, ji) => j !== k && dominates(j, k) && (!dominates(k, j) || ji < ki)));
}

/**
 * Stage classes: stages that every layout places on the same site. A class's stages are hosted
 * by the same sites in every placement, so their gradient rings take the same links.
 */
export function stageClasses(c: ConfigCoefficients): number[][] {
  // Classes in order of their first stage; a stage joins the first class whose first stage every
  // layout puts on the same site as it (compared in place: this runs for every refined candidate).
  const classes: number[][] = [];
  for (let j = 0; j < c.stages.length; j++) {
    const same = classes.find((cls) => c.layouts.every((l) => l.layout.stageSite[j] === l.layout.stageSite[cls[0]!]));
    if (same) same.push(j);
    else classes.push([j]);
  }
  return classes;
}

/**
 * The fewest sites that can host stage j of all dp replicas: a replica with stage j at site s
 * brings its whole run of stages there, so s holds at most G_s / (the fewest GPUs a layout with
 * stage j there puts at s) of them, and the sites hosting stage j must hold dp together.
 * Infinity when all the sites together cannot (no placement has stage j anywhere for every replica).
 */
function fewestHostingSites(c: ConfigCoefficients, siteGpus: readonly number[], j: number): number {
  const capacities = siteGpus.map((gpus, s) => {
    let fewest = Infinity;
    for (const l of c.layouts) if (l.layout.stageSite[j] === s) fewest = Math.min(fewest, l.gpusPerSite.get(s)!);
    return Math.floor(gpus / fewest);
  }).sort((a, b) => b - a);
  let held = 0;
  for (let k = 0; k < capacities.length; k++) {
    held += capacities[k]!;
    if (held >= c.dp) return k + 1;
  }
  return Infinity;
}

/**
 * Every replica runs at least the fewest microbatches any layout fits (the interleaved schedule
 * needs pp of them): true when dp replicas of that many exceed the batch, so no placement covers it.
 */
export function batchTooSmallForReplicas(c: ConfigCoefficients): boolean {
  return c.dp * Math.min(...c.layouts.flatMap((l) => l.fittingMicrobatches)) > c.totalMicrobatches;
}

/**
 * The least time of a replica of each layout beside its k microbatch steps: bubble, fill/drain
 * latencies, optimizer, and its own exposed gradient sync (F11b: at least the spread in-site ring
 * less what its layout's compute windows hide).
 */
export function replicaFixedS(c: ConfigCoefficients): number[] {
  return c.layouts.map((l) => {
    const ownExposureS = Math.max(0, ...c.stages.map((_, j) => exposureOf(c, c.intraSyncSpreadS[j]!, l.backwardWindowS[j]!, l.forwardWindowS[j]!)));
    return l.bubbleS + 2 * l.crossingLatencyS + c.optimizerS + ownExposureS;
  });
}

/**
 * Capacity bound (docs/formulation.md §4): if every replica finishes by T, a replica with layout
 * l runs at most kmax_l(T) microbatches (the largest fitting k with k x slowest step + bubble +
 * fill latency + optimizer <= T). Spreading each replica's microbatches over its GPUs, a GPU at
 * site s carries at most v_s(T) = max over layouts touching s of kmax_l(T) / (GPUs per replica),
 * so dp replicas carry at most the fractional knapsack of the sites' GPUs by v_s. The least
 * breakpoint T at which that reaches M bounds every placement's iteration time. Infinity when no
 * placement covers M exactly: every replica runs at least its layout's fewest fitting microbatches.
 */
export function capacityLowerBound(c: ConfigCoefficients, siteGpus: readonly number[]): number {
  if (batchTooSmallForReplicas(c)) return Infinity;
  const gpusPerReplica = c.config.tp * c.config.cp * c.config.pp;
  const fixedS = replicaFixedS(c);
  const finishTimesS: number[] = [];
  c.layouts.forEach((l, i) => { for (const k of l.fittingMicrobatches) finishTimesS.push(k * l.maxStepS + fixedS[i]!); });
  const breakpoints = ascendingDistinct(finishTimesS);
  // Scratch arrays reused by every evaluation of carried(T).
  const perGpu = siteGpus.map(() => 0);
  const byValue = siteGpus.map((_, s) => s);
  const carried = (T: number): number => {
    perGpu.fill(0);
    c.layouts.forEach((l, i) => {
      // The largest fitting k done by T (k x step + fixed time grows with k, and k ascends).
      let kmax = 0;
      for (const k of l.fittingMicrobatches) {
        if (k * l.maxStepS + fixedS[i]! > T * (1 + 1e-12)) break;
        kmax = Math.max(kmax, k);
      }
      if (kmax === 0) return;
      for (const site of l.gpusPerSite.keys()) perGpu[site] = Math.max(perGpu[site]!, kmax / gpusPerReplica);
    });
    // Sites by carried microbatches per GPU, most first (stable: ties keep site order).
    for (let s = 0; s < byValue.length; s++) byValue[s] = s;
    byValue.sort((a, b) => perGpu[b]! - perGpu[a]!);
    let gpusLeft = c.dp * gpusPerReplica;
    let total = 0;
    for (const site of byValue) {
      const used = Math.min(gpusLeft, siteGpus[site]!);
      total += used * perGpu[site]!;
      gpusLeft -= used;
    }
    return total;
  };
  let lo = 0;
  let hi = breakpoints.length - 1;
  if (hi < 0 || carried(breakpoints[hi]!) < c.totalMicrobatches * (1 - 1e-12)) return Infinity;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (carried(breakpoints[mid]!) >= c.totalMicrobatches * (1 - 1e-12)) hi = mid;
    else lo = mid + 1;
  }
  return breakpoints[lo]!;
}

/** The distinct values, ascending (a numeric typed-array sort, then adjacent duplicates dropped). */
export function ascendingDistinct(values: readonly number[]): number[] {
  const sorted = Float64Array.from(values).sort();
  const out: number[] = [];
  for (const value of sorted) if (out.length === 0 || value !== out[out.length - 1]) out.push(value);
  return out;
}
