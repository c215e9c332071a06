/**
 * `plan --baseline-plan`: the plan a team runs today, evaluated on the scenario beside the best
 * plan, and the speedup of the best over it (its time / the best's time). A plan that does not
 * fit (memory, GPUs, the required iteration time) is reported with the cost model's reasons.
 */
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { recheckPlan } from './independent-check';

export interface BaselinePlanResult {
  /** Where the plan came from (its file). */
  readonly source: string;
  readonly fits: boolean;
  /** Why it does not fit (the cost model's violations), empty when it fits. */
  readonly violations: readonly string[];
  readonly iterationTimeS: number;
  /** Baseline time / best time (above 1: the best plan is faster); null without a best plan or when the baseline does not fit. */
  readonly speedup: number | null;
  readonly evaluation: Evaluation;
}

/**
 * Evaluates `plan` (as read from a plan file: validated here, a {@link ScenarioValidationError}
 * naming `pathPrefix` when it is not a plan for this scenario) against the best plan's time.
 */
export function evaluateBaselinePlan(scenario: Scenario, plan: unknown, source: string, bestTimeS: number | undefined): BaselinePlanResult {
  const layout = layOutPlan(scenario, plan, 'plan');
  const evaluation = evaluateLayout(scenario, layout);
  // The same independent re-check as every printed plan: a fitting plan's time must agree.
  const checked = evaluation.fits ? recheckPlan(scenario, layout.plan, evaluation) : evaluation;
  const iterationTimeS = checked.predicted.iterationTimeS;
  return {
    source,
    fits: checked.fits,
    violations: checked.violations,
    iterationTimeS,
    speedup: checked.fits && bestTimeS !== undefined ? iterationTimeS / bestTimeS : null,
    evaluation: checked,
  };
}
