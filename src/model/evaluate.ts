/**
 * The cost model's entry point: predicted iteration time with its breakdown, memory per GPU,
 * MFU and link loads of one plan on one scenario, plus every way the plan fails to fit.
 * Pure: no solver values, no I/O. See docs/cost-model.md. Its parts: each replica group's
 * pipeline phase (group-pipelines.ts), the data-parallel gradient sync (data-parallel-sync.ts),
 * and each group's end of iteration with the critical group, whose breakdown this is
 * (critical-group.ts).
 */
import { criticalGroupOf, groupEnds, type Breakdown } from './critical-group';
import { busierDirectionBytes, linkSettings } from './cross-site';
import { dataParallelSync } from './data-parallel-sync';
import { modelGroupPipelines, type PipelineTiming } from './group-pipelines';
import { scheduleMicrobatchProblem } from './pipeline-schedule-rules';
import { steadyRounds } from './pipeline';
import { layOutPlan, type PlanLayout, type ReplicaGroupLayout } from './placement';
import type { PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import { stageMemory, type StageMemory } from './memory';
import { intervalJobOf, mayNotFit, memoryInterval, timeInterval, type MemoryInterval, type TimeInterval } from './prediction-interval';
import { stageFlops, stageTime, type StageTime } from './stage-cost';
import { modelFlopsPerIteration } from './transformer-flops';
import { tflopsToFlopPerS } from './units';

export interface SiteUsage {
  readonly site: string;
  readonly gpuType: string;
  readonly gpusUsed: number;
  readonly gpusIdle: number;
  /** Pipeline stages the site hosts, as (stage index, replicas) pairs. */
  readonly stages: readonly { readonly stage: number; readonly replicas: number }[];
  /** Largest memory per GPU at the site. */
  readonly memoryGiBPerGpu: number;
  /** GiB per GPU a plan may use at the site: the device memory less its memoryReserveGiB. */
  readonly memoryCapacityGiB: number;
  /** The site's memoryReserveGiB, when it has one. */
  readonly memoryReserveGiB?: number;
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
  // Stage steps each stage runs: m, or DualPipe's m / 2 rounds (a GPU's step covers its two stages, one microbatch each way).
  const rounds = steadyRounds(plan.schedule, m);
  const excessS = criticalPipeline.timelineExcessS;
  const bubbleShare = criticalPipeline.hops.length === 0 ? excessS : Math.min(0, Math.max(excessS, -criticalPipeline.bubbleS));
  const breakdown: Breakdown = {
    computeS: rounds * (bottleneckTime.forwardS + bottleneckTime.backwardS + bottleneckTime.recomputeS),
    tpExposedS: rounds * bottleneckTime.tpExposedS,
    cpExposedS: rounds * bottleneckTime.cpExposedS,
    epExposedS: rounds * bottleneckTime.epExposedS,
    ppExposedS: rounds * bottleneckTime.ppSendS,
    dpExposedS: dpExposedS * (1 - dpCrossShare) + rounds * zero3Exposed(criticalPipeline.bottleneckStage, criticalGroup.stageSite[criticalPipeline.bottleneckStage]!),
    // The phase less the closed form (docs/cost-model.md §5): an excess is cross-site stalls where
    // the chain crosses sites, bubble otherwise; a shortfall (1F1B, ZB-H1) comes off the bubble first.
    bubbleS: criticalPipeline.bubbleS + bubbleShare,
    crossSiteS: rounds * criticalPipeline.linkExcessS + criticalPipeline.fillCrossS + dpExposedS * dpCrossShare + criticalPipeline.timelineExcessS - bubbleShare,
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
      if (memory.totalGiB > where.memoryCapacityGiB) {
        const key = `${stage}:${site}`;
        if (!memoryViolations.has(key)) {
          const reserve = where.memoryReserveGiB > 0 ? ` less ${where.memoryReserveGiB} reserved` : '';
          memoryViolations.set(key, `stage ${stage} at ${where.name} needs ${memory.totalGiB.toFixed(1)} GiB per GPU, has ${where.gpu.memoryGiB}${reserve} (${where.gpu.name})`);
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
  // Every replica runs the same stages: one replica's FLOPs per stage step, times all replicas' steps (DualPipe: m / 2 per replica).
  const replicaFlopsPerMicrobatch = stages.reduce((sum, stage) => sum + stageFlops(scenario, plan, stage).hardwareFlops, 0);
  const microbatchesRun = groups.reduce((sum, group) => sum + group.replicas * steadyRounds(plan.schedule, group.microbatches), 0);
  const hardwareFlops = microbatchesRun * gpusPerReplicaStage * replicaFlopsPerMicrobatch;
  const linkLoadsTotal = scenario.links.map((_, i) => Math.max(
    ppLoads[i]!.aToB * rounds + dp.crossLoads[i]!.aToB,
    ppLoads[i]!.bToA * rounds + dp.crossLoads[i]!.bToA,
  ));
  const linkBusy = scenario.links.map((_, i) => ppLinkStepS[i]! * rounds + dp.crossBusyS[i]!);

  const mayNotFitAt = scenario.sites.map((site, s) => usedPerSite[s]! > 0 && mayNotFit(siteMemory[s]!, site.memoryCapacityGiB));
  return {
    fits: violations.length === 0,
    fitsResources,
    violations,
    mayNotFit: fitsResources && mayNotFitAt.some((x) => x),
    predicted: {
      iterationTimeS,
      interval: timeInterval(iterationTimeS, intervalJobOf(scenario)),
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
        memoryCapacityGiB: site.memoryCapacityGiB,
        ...(site.memoryReserveGiB > 0 ? { memoryReserveGiB: site.memoryReserveGiB } : {}),
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
