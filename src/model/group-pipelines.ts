/**
 * The pipeline phase of each replica group (docs/cost-model.md §5): stage steps with exposed
 * ZeRO-3 gathers, cross-site boundaries as link stages with the load all groups put on the links,
 * and the phase as the largest of the closed form (eq. 5.1-5.4), the round-trip floor (eq. 5.8)
 * and, with timeline timing, the op-by-op span of the schedule; for 1F1B and ZB-H1 the largest of
 * eq. 5.8, the stage floor (eq. 5.9) and the span, the closed form left out.
 */
import { addRouteLoad, emptyLoads, linkBusyS, linkSettings, routeLatencyS } from './cross-site';
import { chainCrossings, forwardPartS, pipelineWithHopsS } from './pipeline';
import { roundTripFloorS, roundTripProfile } from './pipeline-round-trip';
import { hasStageFloor, stageFloorS } from './pipeline-stage-floor';
import { scheduleMicrobatchProblem } from './pipeline-schedule-rules';
import { pipelineSpanS } from './pipeline-span';
import type { PlanLayout } from './placement';
import type { PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import type { StageTime } from './stage-cost';
import { BF16_BYTES } from './units';

/**
 * How a replica group's pipeline phase is timed (docs/cost-model.md §5): `timeline`, the cost
 * model's answer, is the largest of the closed form (eq. 5.1-5.4), its round-trip floor (eq. 5.8)
 * and the op-by-op span of the schedule (pipeline-timeline.ts), for 1F1B and ZB-H1 the largest of
 * eq. 5.8, eq. 5.9 and the span; `closed-form`, the same without the span, is a lower bound on it,
 * which the planner screens candidates with (no simulation) before timing the few that could be
 * the best.
 */
export type PipelineTiming = 'timeline' | 'closed-form';

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
  /**
   * The phase less the closed form: how far the round-trip floor (eq. 5.8) and, with timeline
   * timing, the op-by-op span exceed it; for 1F1B and ZB-H1, whose phase is the larger of the
   * floors (eq. 5.8-5.9) and the span, negative where the closed form over-charges fill and drain.
   */
  readonly timelineExcessS: number;
  /** The pipeline phase: the closed form plus that excess. */
  readonly phaseS: number;
}

/** Bytes one replica sends across a pipeline stage boundary per microbatch, each way (activations forward, their gradients back). */
export const pipelineSendBytes = (scenario: Scenario, plan: Pick<PlanSpec, 'microBatchSeqs'>): number =>
  plan.microBatchSeqs * scenario.training.seqLen * scenario.model.hidden * BF16_BYTES;

export function modelGroupPipelines(
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
  const sendBytes = pipelineSendBytes(scenario, plan);
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
    const profile = roundTripProfile(stepS, forwardS, plan, hops);
    const floorS = Number.isInteger(m) ? roundTripFloorS(profile, m) : 0;
    // 1F1B and ZB-H1 (eq. 5.9): the phase is the span, at least the floors every planner bound is built on.
    const spanFloor = profile && hasStageFloor(plan) && Number.isInteger(m) && m >= 1;
    const boundS = spanFloor ? Math.max(floorS, stageFloorS(profile, stepS, hops.map((h) => h.stepS), m)) : Math.max(closedFormS, floorS);
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
 * or when the schedule cannot run: a non-whole microbatch count or one its rules refuse,
 * scheduleMicrobatchProblem, which `evaluate` reports as violations).
 */
function timelineExcessOverS(
  plan: PlanSpec, stepS: readonly number[], forwardS: readonly number[], microbatches: number, hops: readonly ChainHop[], closedFormS: number,
): number {
  if (!Number.isInteger(microbatches) || microbatches < 1) return 0;
  if (scheduleMicrobatchProblem(plan.schedule, microbatches, stepS.length) !== undefined) return 0;
  const spanS = pipelineSpanS({
    schedule: plan.schedule, virtualStages: plan.virtualStages, microbatches, forwardS,
    backwardS: stepS.map((step, j) => step - forwardS[j]!), hops,
  });
  return Math.max(0, spanS - closedFormS);
}
