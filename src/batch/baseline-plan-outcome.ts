/**
 * `batch --baseline-plan`: the same given plan (the configuration run today) evaluated on every
 * scenario of the batch beside its best plan, as a record field.
 */
import type { Scenario } from '../model/scenario';
import { ScenarioValidationError } from '../model/validation-error';
import { evaluateBaselinePlan } from '../solve/baseline-plan';
import type { PlanResult } from '../solve/plan-result';

/** The given plan on one scenario: its time, whether it fits (with why not), and the speedup of the best plan over it. */
export interface BaselinePlanOutcome {
  /** The plan file and a hash of its content (records of another baseline plan are not reused). */
  readonly source: string;
  readonly fits: boolean;
  /** Null when the plan does not lay out on the scenario (other sites, more stages than layers, ...). */
  readonly iterationTimeS: number | null;
  /** Baseline time / best time; null when either is missing or the baseline does not fit. */
  readonly speedup: number | null;
  readonly violations: readonly string[];
}

/** What a worker sends along with a scenario: the plan as read from its file, and its label. */
export interface BaselinePlanTask {
  readonly plan: unknown;
  readonly source: string;
}

export function baselinePlanOutcome(scenario: Scenario, task: BaselinePlanTask, result: PlanResult): BaselinePlanOutcome {
  try {
    const b = evaluateBaselinePlan(scenario, task.plan, task.source, result.evaluation?.predicted.iterationTimeS);
    return { source: task.source, fits: b.fits, iterationTimeS: b.iterationTimeS, speedup: b.speedup, violations: b.violations };
  } catch (error) {
    // A swept scenario the plan does not lay out on (fewer sites, layers): a reason, not a failed record.
    if (error instanceof ScenarioValidationError) return { source: task.source, fits: false, iterationTimeS: null, speedup: null, violations: [error.message.split('\n').join('; ')] };
    throw error;
  }
}
