/**
 * The closed-form pipeline phase (docs/cost-model.md §5, eq. 5.1-5.4) of one replica group against
 * the op-by-op timeline of the same group (pipeline-timeline.ts), for the agreement benchmark
 * (bench/timeline-agreement.ts) and its test.
 */
import { groupPipelines } from '../src/model/critical-group';
import type { GroupPipeline } from '../src/model/group-pipelines';
import { pipelineWithHopsS } from '../src/model/pipeline';
import { roundTripFloorS, roundTripProfile } from '../src/model/pipeline-round-trip';
import { hasStageFloor, stageFloorS } from '../src/model/pipeline-stage-floor';
import { scheduleInputsForGroup, simulateSchedule } from '../src/model/pipeline-timeline';
import { layOutPlan, type PlanLayout } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import type { Scenario } from '../src/model/scenario';

export interface GroupAgreement {
  readonly group: number;
  readonly critical: boolean;
  readonly schedule: string;
  readonly p: number;
  readonly v: number;
  readonly m: number;
  /** Largest stage step over the smallest, minus one. */
  readonly stageSpread: number;
  readonly crossings: number;
  /** The closed form (eq. 5.4), its round-trip floor (eq. 5.8), the pipeline phase the cost model reports, and the op-by-op span. */
  readonly closedFormS: number;
  readonly floorS: number;
  /** The stage floor (eq. 5.9; 1F1B and ZB-H1 only, else 0). */
  readonly stageFloorS: number;
  readonly reportedS: number;
  readonly timelineS: number;
}

/** Closed form, reported phase and simulated span of every replica group of a plan. */
export function planAgreement(scenario: Scenario, plan: PlanSpec): GroupAgreement[] {
  const layout = layOutPlan(scenario, plan);
  const { pipelines, criticalGroup } = groupPipelines(scenario, layout);
  return pipelines.map((pipeline, g) => groupAgreement(layout, pipeline, g === criticalGroup));
}

function groupAgreement(layout: PlanLayout, pipeline: GroupPipeline, critical: boolean): GroupAgreement {
  const inputs = scheduleInputsForGroup(layout, pipeline);
  const profile = roundTripProfile(pipeline.stepS, inputs.forwardS, layout.plan, pipeline.hops);
  const closed = pipelineWithHopsS(pipeline.stepS, inputs.forwardS, pipeline.microbatches, layout.plan, pipeline.hops).phaseS;
  return {
    group: pipeline.group,
    critical,
    schedule: layout.plan.schedule,
    p: pipeline.stepS.length,
    v: layout.plan.virtualStages,
    m: pipeline.microbatches,
    stageSpread: Math.max(...pipeline.stepS) / Math.min(...pipeline.stepS) - 1,
    crossings: pipeline.hops.length,
    closedFormS: closed,
    floorS: Number.isInteger(pipeline.microbatches) ? roundTripFloorS(profile, pipeline.microbatches) : 0,
    stageFloorS: profile && hasStageFloor(layout.plan) && Number.isInteger(pipeline.microbatches) ? stageFloorS(profile, pipeline.stepS, pipeline.hops.map((h) => h.stepS), pipeline.microbatches) : 0,
    reportedS: pipeline.phaseS,
    timelineS: simulateSchedule(inputs).spanS,
  };
}

/** (x - timeline) / timeline. */
export const relativeDifference = (x: number, timelineS: number): number => (timelineS > 0 ? x / timelineS - 1 : 0);
