/**
 * What `plan` adds after the search when asked: the what-if re-plans (`--what-if`), the
 * comparison with a given plan (`--baseline-plan`), and why GPUs sit idle (by default when the
 * plan leaves some idle; `--no-explain-idle` skips it). Options are checked before the search.
 */
import type { Scenario } from '../index';
import { readPlanFile } from '../io/files';
import { explainIdleGpus, type IdleGpuExplanation } from '../diagnose/idle-gpus';
import { editChange, removalChanges, whatIf, type WhatIfChange, type WhatIfOutcome } from '../diagnose/what-if';
import type { Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import { parseSpecEdit } from '../model/scenario-edits';
import { ScenarioValidationError } from '../model/validation-error';
import type { ReportExtras } from '../report/extras-section';
import { evaluateBaselinePlan, type BaselinePlanResult } from '../solve/baseline-plan';
import { UsageError } from './exit-codes';
import { baselinePlanJson, formatBaselinePlan, formatIdleGpus, formatWhatIf, idleGpusJson, whatIfJson } from './format-what-if';

export interface PlanExtrasArgs {
  /** `--what-if` values: '' (the bare flag) for every site and link removed, or `path=value` / `path=*k` edits. */
  readonly whatIf?: readonly string[];
  readonly baselinePlan?: string;
  /** Explain idle GPUs (default true). */
  readonly explainIdle?: boolean;
  readonly timeLimit: number;
  readonly gap: number;
}

export interface PreparedExtras {
  readonly changes?: readonly WhatIfChange[];
  readonly baseline?: { readonly plan: unknown; readonly file: string };
}

/** Parses `--what-if` and reads `--baseline-plan`: a bad value exits 2 before any search, naming the option. */
export function prepareExtras(scenario: Scenario, args: PlanExtrasArgs): PreparedExtras {
  let changes: WhatIfChange[] | undefined;
  if (args.whatIf !== undefined && args.whatIf.length > 0) {
    changes = [];
    if (args.whatIf.some((t) => t.trim() === '')) changes.push(...removalChanges(scenario));
    for (const text of args.whatIf.filter((t) => t.trim() !== '')) {
      const edit = parseSpecEdit(text);
      if ('error' in edit) throw new UsageError(`--what-if '${text}': ${edit.error}`);
      try {
        changes.push(editChange(scenario, edit));
      } catch (error) {
        if (error instanceof ScenarioValidationError) throw new UsageError(`--what-if '${text}': ${error.message.split('\n').join('; ')}`);
        throw error;
      }
    }
  }
  const baseline = args.baselinePlan === undefined ? undefined : { plan: readPlanFile(args.baselinePlan).plan, file: args.baselinePlan };
  // A plan that is not one for this scenario (malformed, other sites) is bad input: said before any search.
  if (baseline) {
    try {
      layOutPlan(scenario, baseline.plan, 'plan');
    } catch (error) {
      if (error instanceof ScenarioValidationError) throw error.withPrefix('', baseline.file);
      throw error;
    }
  }
  return { ...(changes ? { changes } : {}), ...(baseline ? { baseline } : {}) };
}

/**
 * Runs the extras against the plan found (or given): JSON members to add, text sections to
 * append, and the same as data for the report.
 */
export async function planExtras(scenario: Scenario, evaluation: Evaluation | undefined, prepared: PreparedExtras, args: PlanExtrasArgs): Promise<{ json: Record<string, unknown>; text: string[]; data: ReportExtras }> {
  const json: Record<string, unknown> = {};
  const text: string[] = [];
  const data: { baselinePlan?: BaselinePlanResult; idleGpus?: IdleGpuExplanation; whatIf?: readonly WhatIfOutcome[] } = {};
  const bestS = evaluation?.predicted.iterationTimeS;
  if (prepared.baseline) {
    let b;
    try {
      b = evaluateBaselinePlan(scenario, prepared.baseline.plan, prepared.baseline.file, bestS);
    } catch (error) {
      if (error instanceof ScenarioValidationError) throw error.withPrefix('', prepared.baseline.file);
      throw error;
    }
    data.baselinePlan = b;
    json['baselinePlan'] = baselinePlanJson(b);
    text.push(formatBaselinePlan(b));
  }
  if (evaluation && (args.explainIdle ?? true)) {
    // The explanation's re-plan gets half the time limit: plan then takes at most 1.5x --time-limit.
    const explanation = await explainIdleGpus(scenario, evaluation, { timeLimitS: args.timeLimit / 2, gap: args.gap, diagnoseTimeLimitS: Math.min(3, args.timeLimit / 3) });
    json['idleGpus'] = explanation ? idleGpusJson(explanation) : [];
    if (explanation) { data.idleGpus = explanation; text.push(formatIdleGpus(explanation)); }
  }
  if (prepared.changes) {
    const outcomes = await whatIf(scenario, bestS, prepared.changes, { timeLimitS: args.timeLimit, gap: args.gap, diagnoseTimeLimitS: Math.min(3, args.timeLimit / 3) });
    data.whatIf = outcomes;
    json['whatIf'] = whatIfJson(outcomes);
    text.push(formatWhatIf(outcomes, args.timeLimit));
  }
  return { json, text, data };
}
