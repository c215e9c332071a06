/**
 * How each replica group's iteration ends, and the critical group that sets the iteration time
 * (docs/cost-model.md §5): each group's exposed gradient sync after its pipeline phase, from its
 * own compute windows, and its optimizer step; the group that ends last is the critical one, and
 * the evaluation's breakdown is its. `groupPipelines` gives every group's pipeline and end as
 * `evaluateLayout` computes them (the report's timeline draws the critical group's).
 */
import { linkSettings } from './cross-site';
import { dataParallelSync } from './data-parallel-sync';
import { modelGroupPipelines, type GroupPipeline, type PipelineTiming } from './group-pipelines';
import { optimizerBytesPerParam, stageParams } from './memory';
import { exposedSyncS } from './pipeline';
import { siteOccupancy, type PlanLayout, type ReplicaGroupLayout, type StageLayout } from './placement';
import { expertDataParallel, type PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import { stageTime, type StageTime } from './stage-cost';
import { gBpsToBytesPerS } from './units';

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
export function groupEnds(
  scenario: Scenario, layout: PlanLayout, pipelines: readonly GroupPipeline[],
  dp: { readonly syncS: readonly number[]; readonly crossPerStageS: readonly number[] },
  timeOf: (stage: number, site: number) => StageTime,
): GroupEnd[] {
  const { plan, stages, groups } = layout;
  const optimizerBytes = largestOwnedParams(scenario, plan, stages) * optimizerBytesPerParam(scenario, plan.zero);
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

/** Per replica group pipeline timing and end of iteration of a laid-out plan, and the critical group (the one `evaluate` times). */
export function groupPipelines(scenario: Scenario, layout: PlanLayout, timing: PipelineTiming = 'timeline'): { readonly pipelines: readonly GroupPipeline[]; readonly ends: readonly GroupEnd[]; readonly criticalGroup: number } {
  const { plan, stages } = layout;
  const { usedPerSite, replicasOfStageAtSite } = siteOccupancy(scenario, layout);
  const timeOf = (stage: number, site: number): StageTime => stageTime(scenario, plan, stages[stage]!, scenario.sites[site]!, usedPerSite[site]!);
  const settings = linkSettings(scenario, plan);
  const dp = dataParallelSync(scenario, layout, replicasOfStageAtSite, usedPerSite, settings);
  const zero3Exposed = (stage: number, site: number): number =>
    plan.zero >= 3 ? Math.max(0, 1.5 * dp.syncS[stage]! - (timeOf(stage, site).totalS)) : 0;
  const { pipelines } = modelGroupPipelines(scenario, layout, settings, timeOf, zero3Exposed, timing);
  const ends = groupEnds(scenario, layout, pipelines, dp, timeOf);
  return { pipelines, ends, criticalGroup: criticalGroupOf(ends) };
}
