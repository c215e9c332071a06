/** Gathers what the HTML report shows from a `plan` result or from a given plan. Pure. */
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import type { Framework } from '../model/framework-capabilities';
import { frameworkFit } from '../model/framework-issues';
import { scheduleMicrobatchProblem } from '../model/pipeline-schedule-rules';
import { groupTimeline, type GroupTimeline } from '../model/pipeline-timeline';
import { layOutPlan, type PlanLayout } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import type { FrontierPoint } from '../solve/pareto';
import type { BaselineResult, Bound, PlanResult, SolverReport } from '../solve/plan-result';
import type { BreakdownBar } from './breakdown-chart';
import { diagnosisFromReasons, type DiagnosisItem } from './diagnosis';
import type { ReportExtras } from './extras-section';

export type ReportOrigin =
  | { readonly kind: 'searched'; readonly status: PlanResult['status']; readonly bound: Bound; readonly solver: SolverReport; readonly framework?: Framework }
  | { readonly kind: 'given'; readonly planFile: string };

export interface ReportData {
  readonly scenario: Scenario;
  readonly origin: ReportOrigin;
  readonly plan?: PlanSpec;
  readonly layout?: PlanLayout;
  readonly evaluation?: Evaluation;
  /** Ours first, then each baseline. */
  readonly bars: readonly BreakdownBar[];
  readonly baselines: readonly BaselineResult[];
  readonly timeline?: GroupTimeline;
  /** Why the timeline is missing, when it is. */
  readonly timelineNote?: string;
  /** Non-empty when no plan fits. */
  readonly diagnosis: readonly DiagnosisItem[];
  /** With a plan: which frameworks run it as is (src/model/framework-issues.ts). */
  readonly frameworks?: ReturnType<typeof frameworkFit>;
  /** The calibration profile the predictions used, when one was given (a line of text). */
  readonly calibration?: string;
  /** What was asked on top: the plan run today, why GPUs sit idle, what-if changes. */
  readonly extras?: ReportExtras;
  /** The GPU-budget frontier (`report --pareto`), budgets ascending. */
  readonly frontier?: readonly FrontierPoint[];
}

export function reportFromPlanResult(scenario: Scenario, result: PlanResult, diagnosis?: readonly DiagnosisItem[]): ReportData {
  const origin: ReportOrigin = { kind: 'searched', status: result.status, bound: result.bound, solver: result.solver, ...(result.framework ? { framework: result.framework } : {}) };
  if (!result.plan) {
    return { scenario, origin, bars: [], baselines: [], diagnosis: diagnosis ?? diagnosisFromReasons(result.reasons) };
  }
  return withPlan(scenario, origin, result.plan, result.baselines);
}

export function reportFromGivenPlan(scenario: Scenario, plan: unknown, planFile: string, baselines: readonly BaselineResult[] = []): ReportData {
  return withPlan(scenario, { kind: 'given', planFile }, plan, baselines);
}

function withPlan(scenario: Scenario, origin: ReportOrigin, plan: unknown, baselines: readonly BaselineResult[]): ReportData {
  const layout = layOutPlan(scenario, plan);
  const evaluation = evaluateLayout(scenario, layout);
  const bars: BreakdownBar[] = [{ name: origin.kind === 'searched' ? 'ours' : 'this plan', iterationTimeS: evaluation.predicted.iterationTimeS, breakdown: evaluation.predicted.breakdown }];
  for (const b of baselines) {
    bars.push({ name: b.name, iterationTimeS: b.iterationTimeS, breakdown: b.plan ? evaluateLayout(scenario, layOutPlan(scenario, b.plan)).predicted.breakdown : undefined });
  }
  let timeline: GroupTimeline | undefined;
  let timelineNote: string | undefined;
  const scheduleProblem = layout.groups.map((g) => scheduleMicrobatchProblem(layout.plan.schedule, g.microbatches, layout.plan.pp)).find((problem) => problem !== undefined);
  if (!layout.groups.every((g) => Number.isInteger(g.microbatches))) {
    timelineNote = 'no timeline: the global batch does not split into whole microbatches per replica';
  } else if (scheduleProblem !== undefined) {
    timelineNote = `no timeline: ${scheduleProblem}`;
  } else {
    timeline = groupTimeline(scenario, layout);
  }
  return { scenario, origin, plan: layout.plan, layout, evaluation, bars, baselines, timeline, timelineNote, diagnosis: [], frameworks: frameworkFit(scenario, layout) };
}
