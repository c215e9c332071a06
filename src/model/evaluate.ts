/**
 * The cost model's entry point: predicted iteration time with its breakdown, memory per GPU,
 * MFU and link loads of one plan on one scenario, plus every way the plan fails to fit.
 * Pure: no solver values, no I/O. See docs/cost-model.md.
 */
import { CALIBRATION } from './calibration-constants';
import { addRouteLoad, busierDirectionBytes, emptyLoads, linkBusyS, linkSettings, ringHops, routeLatencyS, type LinkLoad } from './cross-site';
import { dataParallelTier, reduceScatterS } from './network';
import { chainCrossings, exposedSyncS, forwardPartS, interleavedGroupSize, pipelineWithHopsS, roundTripFloorS, roundTripProfile, scheduleMicrobatchProblem } from './pipeline';
import { layOutPlan, type PlanLayout, type ReplicaGroupLayout, type StageLayout } from './placement';
import { expertDataParallel, type PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import { stageMemory, stageParams, type StageMemory } from './memory';
import { pipelineSpanS } from './pipeline-span';
import { mayNotFit, memoryInterval, timeInterval, type MemoryInterval, type TimeInterval } from './prediction-interval';
import { stageFlops, stageTime, type StageTime } from './stage-cost';
import { modelFlopsPerIteration } from './transformer';
import { BF16_BYTES, gBpsToBytesPerS, tflopsToFlopPerS } from './units';

/** Where the iteration's time goes; the parts add up to `iterationTimeS`. */
export interface Breakdown {
  /** Forward, backward and recomputation of the bottleneck stage, all microbatches. */
  readonly computeS: number;
  readonly tpExposedS: number;
  readonly cpExposedS: number;
  readonly epExposedS: number;
  /** Pipeline sends inside a site. */
  readonly ppExposedS: number;
  /** Gradient sync (and ZeRO-3 gathers) not hidden behind compute, inside sites. */
  readonly dpExposedS: number;
  /** Pipeline fill and drain. */
  readonly bubbleS: number;
  /** Time added by cross-site links: pipeline sends, their latency, and the cross-site part of gradient sync. */
  readonly crossSiteS: number;
  readonly optimizerS: number;
}

export interface SiteUsage {
  readonly site: string;
  readonly gpuType: string;
  readonly gpusUsed: number;
  readonly gpusIdle: number;
  /** Pipeline stages the site hosts, as (stage index, replicas) pairs. */
  readonly stages: readonly { readonly stage: number; readonly replicas: number }[];
  /** Largest memory per GPU at the site. */
  readonly memoryGiBPerGpu: number;
  readonly memoryCapacityGiB: number;
  /** Where the measured peak memory per GPU at the site should fall (docs/cost-model.md §7). */
  readonly memoryInterval: MemoryInterval;
  /** The site's memory fits the model, but its memory interval reaches past the capacity. */
  readonly mayNotFit: boolean;
  /** The named memory terms of the site's largest stage (docs/cost-model.md §6); absent for an idle site. */
  readonly peakMemory?: StageMemory & { readonly stage: number };
}

export interface LinkUsage {
  readonly link: string;
  /** Bytes per iteration in the busier direction (pipeline + data parallel). */
  readonly bytesPerIteration: number;
  /** Pipeline activations/gradients crossing per microbatch step, per direction. */
  readonly pipelineBytesPerMicrobatch: number;
  /** Gradient-sync bytes per iteration, per direction. */
  readonly gradientSyncBytes: number;
  /** Seconds of the iteration the link is busy, per direction. */
  readonly busyS: number;
  /** busyS / iteration time. */
  readonly utilization: number;
}

export interface Prediction {
  readonly iterationTimeS: number;
  /** Where the measured iteration time should fall, from the calibration residuals (built-in, or the applied profile's; docs/cost-model.md §7). */
  readonly interval: TimeInterval;
  /** Model FLOPs (causal attention, no recomputation) / (time x the used GPUs' dense bf16 peak), in any precision; at most 1. */
  readonly mfu: number;
  readonly tokensPerSecondPerGpu: number;
  /** Model TFLOP/s per used GPU (the FLOPs of mfu). */
  readonly modelTflopsPerGpu: number;
  /** Hardware TFLOP/s per used GPU: the FLOPs the GPUs execute (attention as the kernel runs it, recomputation included). */
  readonly hardwareTflopsPerGpu: number;
  /** Largest memory per GPU over all stages and sites. */
  readonly memoryGiBPerGpu: number;
  /** The interval of memoryGiBPerGpu. */
  readonly memoryInterval: MemoryInterval;
  readonly breakdown: Breakdown;
  readonly gpusUsed: number;
  readonly gpusIdle: number;
  readonly microbatchesPerReplica: number;
  /** Index of the replica group that sets the iteration time (see {@link criticalGroupOf}); the breakdown is its. */
  readonly criticalGroup: number;
  readonly sites: readonly SiteUsage[];
  readonly links: readonly LinkUsage[];
  /** Memory parts of the stage with the largest footprint. */
  readonly peakMemory: StageMemory & { readonly stage: number; readonly site: string };
}

export interface Evaluation {
  readonly fits: boolean;
  /** Fits GPU memory, GPU counts and the batch (fits may still be false for training.maxIterationTimeS). */
  readonly fitsResources: boolean;
  /** Readable reasons the plan does not fit, empty when it does. */
  readonly violations: readonly string[];
  /** Fits, but some site's peak memory lies within the memory interval of its GPUs' capacity: the plan may not fit. */
  readonly mayNotFit: boolean;
  readonly predicted: Prediction;
}

/**
 * How a replica group's pipeline phase is timed (docs/cost-model.md §5): `timeline`, the cost
 * model's answer, is the largest of the closed form (eq. 5.1-5.4), its round-trip floor (eq. 5.8)
 * and the op-by-op span of the schedule (pipeline-timeline.ts); `closed-form`, the larger of the
 * first two, is a lower bound on it, which the planner screens candidates with (no simulation)
 * before timing the few that could be the best.
 */
export type PipelineTiming = 'timeline' | 'closed-form';

/** Evaluates one plan (raw JSON or parsed); throws ScenarioValidationError if the plan is malformed. */
export function evaluate(scenario: Scenario, plan: unknown, pathPrefix = 'plan'): Evaluation {
  return evaluateLayout(scenario, layOutPlan(scenario, plan, pathPrefix));
}

/**
 * Evaluates a plan that has already been laid out. With `closed-form` pipeline timing the
 * iteration time is at most the cost model's (the default, `timeline`), never above it.
 */
export function evaluateLayout(scenario: Scenario, layout: PlanLayout, timing: PipelineTiming = 'timeline'): Evaluation {
  const { plan, stages, groups } = layout;
  const violations: string[] = [];
  const gpusPerReplicaStage = plan.tp * plan.cp;

  // GPUs per site.
  const usedPerSite = scenario.sites.map(() => 0);
  const replicasOfStageAtSite = stages.map(() => scenario.sites.map(() => 0));
  for (const group of groups) {
    group.stageSite.forEach((site, stage) => {
      usedPerSite[site]! += group.replicas * gpusPerReplicaStage;
      replicasOfStageAtSite[stage]![site]! += group.replicas;
    });
  }
  scenario.sites.forEach((site, s) => {
    if (usedPerSite[s]! > site.gpus) violations.push(`${site.name} has ${site.gpus} GPUs, the plan uses ${usedPerSite[s]}`);
  });
  checkBatch(scenario, plan, groups, violations);
  checkSchedule(plan, groups, violations);
  if (plan.network?.some((s) => s.gradientCompression !== 'none') && !scenario.search?.allowGradientCompression) {
    violations.push('gradient compression needs search.allowGradientCompression: true in the scenario');
  }

  // Per-microbatch stage times, per (stage, site).
  const timeCache = new Map<number, StageTime>();
  const siteCount = scenario.sites.length;
  const timeOf = (stage: number, site: number): StageTime => {
    const key = stage * siteCount + site;
    let time = timeCache.get(key);
    if (!time) {
      time = stageTime(scenario, plan, stages[stage]!, scenario.sites[site]!, usedPerSite[site]!);
      timeCache.set(key, time);
    }
    return time;
  };

  // Data-parallel gradient sync per stage (intra-site rings and cross-site link loads).
  const settings = linkSettings(scenario, plan);
  const dp = dataParallelSync(scenario, layout, replicasOfStageAtSite, usedPerSite, settings);

  // Pipeline phase per replica group, with cross-site stage boundaries as link stages.
  const zero3Exposed = (stage: number, site: number): number =>
    plan.zero >= 3 ? Math.max(0, 1.5 * dp.syncS[stage]! - (timeOf(stage, site).totalS)) : 0;
  const { pipelines, ppLoads, ppLinkStepS } = modelGroupPipelines(scenario, layout, settings, timeOf, zero3Exposed, timing);

  const ends = groupEnds(scenario, layout, pipelines, dp, timeOf);
  const critical = ends[criticalGroupOf(ends)]!;
  const criticalPipeline = pipelines[critical.group]!;
  const criticalGroup = groups[critical.group]!;
  const dpExposedS = critical.exposedS;
  const dpCrossShare = critical.crossShare;
  const optimizerS = critical.optimizerS;

  const bottleneckTime = timeOf(criticalPipeline.bottleneckStage, criticalGroup.stageSite[criticalPipeline.bottleneckStage]!);
  const m = criticalPipeline.microbatches;
  const breakdown: Breakdown = {
    computeS: m * (bottleneckTime.forwardS + bottleneckTime.backwardS + bottleneckTime.recomputeS),
    tpExposedS: m * bottleneckTime.tpExposedS,
    cpExposedS: m * bottleneckTime.cpExposedS,
    epExposedS: m * bottleneckTime.epExposedS,
    ppExposedS: m * bottleneckTime.ppSendS,
    dpExposedS: dpExposedS * (1 - dpCrossShare) + m * zero3Exposed(criticalPipeline.bottleneckStage, criticalGroup.stageSite[criticalPipeline.bottleneckStage]!),
    // What the op-by-op span adds beyond the closed form: stalls behind cross-site round trips
    // where the chain crosses sites (the closed form is never below the span without crossings).
    bubbleS: criticalPipeline.bubbleS + (criticalPipeline.hops.length > 0 ? 0 : criticalPipeline.timelineExcessS),
    crossSiteS: m * criticalPipeline.linkExcessS + criticalPipeline.fillCrossS + dpExposedS * dpCrossShare
      + (criticalPipeline.hops.length > 0 ? criticalPipeline.timelineExcessS : 0),
    optimizerS,
  };
  const iterationTimeS = Object.values(breakdown).reduce((sum, part) => sum + part, 0);

  // Memory per (stage, site), against each site's capacity.
  let peak: StageMemory & { stage: number; site: string } | undefined;
  const siteMemory = scenario.sites.map(() => 0);
  const sitePeak: (StageMemory & { stage: number } | undefined)[] = scenario.sites.map(() => undefined);
  const memoryViolations = new Map<string, string>();
  // Memory depends on the stage and the group's microbatch count only: groups share it.
  const memoryByStage = new Map<number, StageMemory>();
  const memoryOf = (stage: number, microbatches: number): StageMemory => {
    const key = stage * 1_000_003 + microbatches;
    let memory = memoryByStage.get(key);
    if (!memory) { memory = stageMemory(scenario, plan, stages[stage]!, microbatches); memoryByStage.set(key, memory); }
    return memory;
  };
  for (const group of groups) {
    group.stageSite.forEach((site, stage) => {
      const memory = memoryOf(stage, group.microbatches);
      const where = scenario.sites[site]!;
      if (memory.totalGiB > siteMemory[site]! || sitePeak[site] === undefined) sitePeak[site] = { ...memory, stage };
      siteMemory[site] = Math.max(siteMemory[site]!, memory.totalGiB);
      if (!peak || memory.totalGiB > peak.totalGiB) peak = { ...memory, stage, site: where.name };
      if (memory.totalGiB > where.gpu.memoryGiB) {
        const key = `${stage}:${site}`;
        if (!memoryViolations.has(key)) {
          memoryViolations.set(key, `stage ${stage} at ${where.name} needs ${memory.totalGiB.toFixed(1)} GiB per GPU, has ${where.gpu.memoryGiB} (${where.gpu.name})`);
        }
      }
    });
  }
  violations.push(...memoryViolations.values());
  const fitsResources = violations.length === 0;
  const deadlineS = scenario.training.maxIterationTimeS;
  if (deadlineS !== undefined && iterationTimeS > deadlineS) {
    violations.push(`iteration takes ${iterationTimeS.toFixed(3)} s, over training.maxIterationTimeS ${deadlineS}`);
  }

  const gpusUsed = usedPerSite.reduce((a, b) => a + b, 0);
  const gpusTotal = scenario.sites.reduce((a, site) => a + site.gpus, 0);
  const peakFlopRate = scenario.sites.reduce((sum, site, s) => sum + usedPerSite[s]! * tflopsToFlopPerS(site.gpu.peakBf16Tflops), 0);
  const modelFlops = modelFlopsPerIteration(scenario.model, scenario.training.seqLen, scenario.training.globalBatchSeqs);
  // Every replica runs the same stages: one replica's FLOPs per microbatch, times all replicas' microbatches.
  const replicaFlopsPerMicrobatch = stages.reduce((sum, stage) => sum + stageFlops(scenario, plan, stage).hardwareFlops, 0);
  const microbatchesRun = groups.reduce((sum, group) => sum + group.replicas * group.microbatches, 0);
  const hardwareFlops = microbatchesRun * gpusPerReplicaStage * replicaFlopsPerMicrobatch;
  const linkLoadsTotal = scenario.links.map((_, i) => Math.max(
    ppLoads[i]!.aToB * m + dp.crossLoads[i]!.aToB,
    ppLoads[i]!.bToA * m + dp.crossLoads[i]!.bToA,
  ));
  const linkBusy = scenario.links.map((_, i) => ppLinkStepS[i]! * m + dp.crossBusyS[i]!);

  const mayNotFitAt = scenario.sites.map((site, s) => usedPerSite[s]! > 0 && mayNotFit(siteMemory[s]!, site.gpu.memoryGiB));
  return {
    fits: violations.length === 0,
    fitsResources,
    violations,
    mayNotFit: fitsResources && mayNotFitAt.some((x) => x),
    predicted: {
      iterationTimeS,
      interval: timeInterval(iterationTimeS),
      mfu: modelFlops / (iterationTimeS * peakFlopRate),
      tokensPerSecondPerGpu: (scenario.training.globalBatchSeqs * scenario.training.seqLen) / iterationTimeS / gpusUsed,
      modelTflopsPerGpu: modelFlops / iterationTimeS / gpusUsed / 1e12,
      hardwareTflopsPerGpu: hardwareFlops / iterationTimeS / gpusUsed / 1e12,
      memoryGiBPerGpu: peak!.totalGiB,
      memoryInterval: memoryInterval(peak!.totalGiB),
      breakdown,
      gpusUsed,
      gpusIdle: Math.max(0, gpusTotal - gpusUsed),
      microbatchesPerReplica: m,
      criticalGroup: critical.group,
      sites: scenario.sites.map((site, s) => ({
        site: site.name,
        gpuType: site.gpu.name,
        gpusUsed: usedPerSite[s]!,
        gpusIdle: Math.max(0, site.gpus - usedPerSite[s]!),
        stages: stages.map((_, stage) => ({ stage, replicas: replicasOfStageAtSite[stage]![s]! })).filter((x) => x.replicas > 0),
        memoryGiBPerGpu: siteMemory[s]!,
        memoryCapacityGiB: site.gpu.memoryGiB,
        memoryInterval: memoryInterval(siteMemory[s]!),
        mayNotFit: mayNotFitAt[s]!,
        ...(sitePeak[s] ? { peakMemory: sitePeak[s] } : {}),
      })),
      links: scenario.links.map((link, i) => ({
        link: link.label,
        bytesPerIteration: linkLoadsTotal[i]!,
        pipelineBytesPerMicrobatch: busierDirectionBytes(ppLoads[i]!),
        gradientSyncBytes: busierDirectionBytes(dp.crossLoads[i]!),
        busyS: linkBusy[i]!,
        utilization: linkBusy[i]! / iterationTimeS,
      })),
      peakMemory: peak!,
    },
  };
}

function checkBatch(scenario: Scenario, plan: PlanSpec, groups: readonly ReplicaGroupLayout[], violations: string[]): void {
  const global = scenario.training.globalBatchSeqs;
  const covered = groups.reduce((sum, g) => sum + g.replicas * g.microbatches * plan.microBatchSeqs, 0);
  const whole = groups.every((g) => Number.isInteger(g.microbatches));
  if (!whole || Math.abs(covered - global) > 1e-9) {
    violations.push(
      `globalBatchSeqs ${global} is not dp x microBatchSeqs x microbatches (${plan.dp} x ${plan.microBatchSeqs} x ${groups.map((g) => +g.microbatches.toFixed(3)).join('/')} = ${+covered.toFixed(3)})`,
    );
  }
}

/** The microbatches each replica group runs must suit the schedule (scheduleMicrobatchProblem; docs/cost-model.md §5). */
function checkSchedule(plan: PlanSpec, groups: readonly ReplicaGroupLayout[], violations: string[]): void {
  const problems = new Map<string, number[]>();
  for (const g of groups) {
    const problem = scheduleMicrobatchProblem(plan.schedule, g.microbatches, plan.pp);
    if (problem !== undefined) problems.set(problem, [...(problems.get(problem) ?? []), g.microbatches]);
  }
  for (const [problem, counts] of problems) violations.push(`${problem}, a replica group runs ${counts.join('/')}`);
}

/** How one replica group's iteration ends (docs/cost-model.md §5). */
export interface GroupEnd {
  readonly group: number;
  /** Gradient sync exposed after the group's pipeline phase (its worst stage), and the cross-site share of it. */
  readonly exposedS: number;
  readonly crossShare: number;
  readonly optimizerS: number;
  /** Pipeline phase + exposed gradient sync + optimizer step. */
  readonly endS: number;
}

/**
 * Every replica group ends its iteration with its own tail: the gradient sync of each stage
 * starts when that group's backward of the stage is done (all replicas join the same rings), so
 * the part not hidden behind the group's remaining backward/forward work is exposed after its
 * pipeline; then the optimizer step. Used by `evaluateLayout` and `groupPipelines` alike.
 */
function groupEnds(
  scenario: Scenario, layout: PlanLayout, pipelines: readonly GroupPipeline[],
  dp: { readonly syncS: readonly number[]; readonly crossPerStageS: readonly number[] },
  timeOf: (stage: number, site: number) => StageTime,
): GroupEnd[] {
  const { plan, stages, groups } = layout;
  const optimizerBytes = largestOwnedParams(scenario, plan, stages) * CALIBRATION.optimizerBytesPerParam;
  return groups.map((group, g) => {
    const slowestHbm = Math.min(...group.stageSite.map((site) => scenario.sites[site]!.gpu.hbmGBps));
    const { exposedS, crossShare } = groupTail(plan, scenario, stages, dp, overlapWindows(group, timeOf));
    const optimizerS = optimizerBytes / gBpsToBytesPerS(slowestHbm);
    return { group: g, exposedS, crossShare, optimizerS, endS: pipelines[g]!.phaseS + exposedS + optimizerS };
  });
}

/**
 * The critical replica group: the one whose iteration ends last (the first of equal ends). It
 * sets the iteration time, its breakdown is the evaluation's, and the report draws its timeline.
 */
export function criticalGroupOf(ends: readonly Pick<GroupEnd, 'endS'>[]): number {
  let worst = 0;
  for (let g = 1; g < ends.length; g++) if (ends[g]!.endS > ends[worst]!.endS) worst = g;
  return worst;
}

/** A group's exposed gradient sync (the worst stage) and the cross-site share of it. */
function groupTail(
  plan: PlanSpec, scenario: Scenario, stages: readonly StageLayout[], dp: { readonly syncS: readonly number[]; readonly crossPerStageS: readonly number[] },
  windows: { readonly backwardS: readonly number[]; readonly forwardS: readonly number[] },
): { exposedS: number; crossShare: number } {
  let exposedS = 0;
  let crossShare = 0;
  stages.forEach((_, stage) => {
    const sync = dp.syncS[stage]!;
    const exposed = exposedSyncS(plan, scenario.training.overlap.dataParallel, sync, windows.backwardS[stage]!, windows.forwardS[stage]!);
    if (exposed > exposedS) {
      exposedS = exposed;
      crossShare = sync > 0 ? dp.crossPerStageS[stage]! / sync : 0;
    }
  });
  return { exposedS, crossShare };
}

/** The largest parameter shard any GPU owns (and steps in the optimizer), over the stages. */
function largestOwnedParams(scenario: Scenario, plan: PlanSpec, stages: readonly StageLayout[]): number {
  const shards = plan.zero >= 1 ? plan.dp * plan.cp : 1;
  let largest = 0;
  for (const stage of stages) {
    const params = stageParams(scenario, plan, stage);
    largest = Math.max(largest, params.dense / shards + params.expert / Math.max(1, plan.zero >= 1 ? expertDataParallel(plan) : 1));
  }
  return largest;
}

/**
 * Compute a stage's gradient sync can hide behind: its last backward plus the backward of the
 * stages before it that drain after it; its parameter gather, the forwards before its first one.
 */
function overlapWindows(group: ReplicaGroupLayout, timeOf: (stage: number, site: number) => StageTime) {
  const backwardS: number[] = [];
  const forwardS: number[] = [];
  let backwardBefore = 0;
  let forwardBefore = 0;
  group.stageSite.forEach((site, stage) => {
    const t = timeOf(stage, site);
    backwardBefore += t.backwardS + t.recomputeS;
    forwardBefore += t.forwardS;
    backwardS[stage] = backwardBefore;
    forwardS[stage] = forwardBefore;
  });
  return { backwardS, forwardS };
}

/** Gradient sync time per stage: intra-site ring(s) plus the shared cross-site phase. */
function dataParallelSync(
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
  stages.forEach((stage, j) => {
    const params = stageParams(scenario, plan, stage);
    const gradBytesPerGpu = BF16_BYTES * (params.dense + params.expert);
    const sites = replicasOfStageAtSite[j]!.flatMap((replicas, site) => (replicas > 0 ? [site] : []));
    siteSets.push(sites);
    const totalRanks = plan.dp * plan.cp;
    let intra = 0;
    for (const site of sites) {
      const ranks = replicasOfStageAtSite[j]![site]! * plan.cp;
      const where = scenario.sites[site]!;
      const tier = dataParallelTier(where, ranks, plan.tp, usedPerSite[site]! > where.podGpus);
      // Hierarchical: reduce-scatter then all-gather inside the site; single site: the same two halves of an all-reduce.
      intra = Math.max(intra, 2 * reduceScatterS(gradBytesPerGpu, sites.length > 1 ? ranks : totalRanks, tier));
    }
    intraS.push(intra);
    if (sites.length < 2) return;
    maxRingSites = Math.max(maxRingSites, sites.length);
    for (const hop of ringHops(sites)) {
      const link = scenario.routes[hop.from]![hop.to]![0]!;
      const compressed = settings[link]!.gradientCompression === 'fp8' ? 0.5 : 1;
      const flat = settings[link]!.collectives === 'flat';
      const k = sites.length;
      const bytes = flat
        ? plan.tp * plan.cp * (2 * (totalRanks - 1) / totalRanks) * gradBytesPerGpu * compressed
        : plan.tp * (2 * (k - 1) / k) * gradBytesPerGpu * compressed;
      const pairs = flat ? plan.tp * plan.cp : replicasOfStageAtSite[j]![hop.from]! * plan.tp * plan.cp;
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

/** A cross-site boundary on one replica's chain of virtual stages. */
export interface ChainHop {
  /** Virtual stage q sends to q + 1 (q = chunk * pp + stage). */
  readonly virtualStage: number;
  readonly fromSite: number;
  readonly toSite: number;
  /** Links on the route, in the direction travelled. */
  readonly links: readonly number[];
  /** One-way latency of the route, seconds. */
  readonly latencyS: number;
  /** Seconds the busiest link on the route needs per microbatch step (all replicas of all groups sending at once). */
  readonly stepS: number;
}

/** The pipeline phase of one replica group as the cost model sees it (docs/cost-model.md §5). */
export interface GroupPipeline {
  readonly group: number;
  readonly replicas: number;
  readonly microbatches: number;
  readonly stageSite: readonly number[];
  /** Per-microbatch times of each stage on its site. */
  readonly stageTimes: readonly StageTime[];
  /** Each stage's step: its total time plus exposed ZeRO-3 gathers. */
  readonly stepS: readonly number[];
  readonly hops: readonly ChainHop[];
  readonly bottleneckStage: number;
  readonly steadyS: number;
  readonly bubbleS: number;
  /** Per microbatch: how much the slowest link step exceeds the slowest stage. */
  readonly linkExcessS: number;
  /** Latency and one transfer of every crossing, on fill and on drain. */
  readonly fillCrossS: number;
  /** The closed form: steady + m x link excess + bubble + fill/drain crossings (eq. 5.1-5.4). */
  readonly closedFormS: number;
  /** How far the round-trip floor (eq. 5.8) and, with timeline timing, the op-by-op span exceed the closed form. */
  readonly timelineExcessS: number;
  /** The pipeline phase: the closed form plus that excess. */
  readonly phaseS: number;
}

/** Per replica group pipeline timing and end of iteration of a laid-out plan, and the critical group (the one `evaluate` times). */
export function groupPipelines(scenario: Scenario, layout: PlanLayout, timing: PipelineTiming = 'timeline'): { readonly pipelines: readonly GroupPipeline[]; readonly ends: readonly GroupEnd[]; readonly criticalGroup: number } {
  const { plan, stages, groups } = layout;
  const usedPerSite = scenario.sites.map(() => 0);
  const replicasOfStageAtSite = stages.map(() => scenario.sites.map(() => 0));
  for (const group of groups) {
    group.stageSite.forEach((site, stage) => {
      usedPerSite[site]! += group.replicas * plan.tp * plan.cp;
      replicasOfStageAtSite[stage]![site]! += group.replicas;
    });
  }
  const timeOf = (stage: number, site: number): StageTime => stageTime(scenario, plan, stages[stage]!, scenario.sites[site]!, usedPerSite[site]!);
  const settings = linkSettings(scenario, plan);
  const dp = dataParallelSync(scenario, layout, replicasOfStageAtSite, usedPerSite, settings);
  const zero3Exposed = (stage: number, site: number): number =>
    plan.zero >= 3 ? Math.max(0, 1.5 * dp.syncS[stage]! - (timeOf(stage, site).totalS)) : 0;
  const { pipelines } = modelGroupPipelines(scenario, layout, settings, timeOf, zero3Exposed, timing);
  const ends = groupEnds(scenario, layout, pipelines, dp, timeOf);
  return { pipelines, ends, criticalGroup: criticalGroupOf(ends) };
}

function modelGroupPipelines(
  scenario: Scenario,
  layout: PlanLayout,
  settings: ReturnType<typeof linkSettings>,
  timeOf: (stage: number, site: number) => StageTime,
  zero3Exposed: (stage: number, site: number) => number,
  timing: PipelineTiming,
) {
  const { plan, groups } = layout;
  const gpusPerReplicaStage = plan.tp * plan.cp;
  const ppLoads = emptyLoads(scenario);
  const sendBytes = plan.microBatchSeqs * scenario.training.seqLen * scenario.model.hidden * BF16_BYTES;
  const crossings = groups.map((group) => chainCrossings(group.stageSite, plan));
  groups.forEach((group, g) => {
    for (const hop of crossings[g]!) addRouteLoad(scenario, ppLoads, hop.from, hop.to, group.replicas * sendBytes, group.replicas * gpusPerReplicaStage, true);
  });
  const ppLinkStepS = linkBusyS(scenario, settings, ppLoads);
  const pipelines: GroupPipeline[] = groups.map((group, g) => {
    const stageTimes = group.stageSite.map((site, stage) => timeOf(stage, site));
    const stepS = group.stageSite.map((site, stage) => stageTimes[stage]!.totalS + zero3Exposed(stage, site));
    const max = Math.max(...stepS);
    const bottleneckStage = stepS.indexOf(max);
    const hops: ChainHop[] = [];
    for (const { from, to, virtualStage } of crossings[g]!) {
      const links = scenario.routes[from]![to]!;
      const hopStep = Math.max(...links.map((link) => ppLinkStepS[link]!));
      hops.push({ virtualStage, fromSite: from, toSite: to, links, latencyS: routeLatencyS(scenario, from, to), stepS: hopStep });
    }
    const m = group.microbatches;
    const forwardS = stepS.map((step, j) => forwardPartS(step, stageTimes[j]!));
    const { steadyS, bubbleS, linkExcessS, fillCrossS, phaseS: closedFormS } = pipelineWithHopsS(stepS, forwardS, m, plan, hops);
    const floorS = Number.isInteger(m) ? roundTripFloorS(roundTripProfile(stepS, forwardS, plan, hops), m) : 0;
    const boundS = Math.max(closedFormS, floorS);
    const timelineExcessS = boundS - closedFormS + (timing === 'timeline' ? timelineExcessOverS(plan, stepS, forwardS, m, hops, boundS) : 0);
    return {
      group: g, replicas: group.replicas, microbatches: m, stageSite: group.stageSite, stageTimes, stepS, hops, bottleneckStage,
      steadyS, bubbleS, linkExcessS, fillCrossS, closedFormS, timelineExcessS, phaseS: closedFormS + timelineExcessS,
    };
  });
  return { pipelines, ppLoads, ppLinkStepS };
}

/**
 * How far the op-by-op span of one replica's schedule exceeds `closedFormS` (0 when it does not,
 * or when the schedule cannot run: a non-whole microbatch count or too few microbatches for the
 * interleaved schedule, which `evaluate` reports as violations).
 */
function timelineExcessOverS(
  plan: PlanSpec, stepS: readonly number[], forwardS: readonly number[], microbatches: number, hops: readonly ChainHop[], closedFormS: number,
): number {
  if (!Number.isInteger(microbatches) || microbatches < 1) return 0;
  if (plan.schedule === 'interleaved' && interleavedGroupSize(microbatches, stepS.length) === undefined) return 0;
  const spanS = pipelineSpanS({
    schedule: plan.schedule, virtualStages: plan.virtualStages, microbatches, forwardS,
    backwardS: stepS.map((step, j) => step - forwardS[j]!), hops,
  });
  return Math.max(0, spanS - closedFormS);
}
