/**
 * ScaleAcross as a library: load and validate scenarios, evaluate parallel plans with the
 * calibrated cost model. The CLI (`scaleacross`) is a thin layer over these functions.
 */
import { readJsonFile } from './io/files';
import { evaluate, type Evaluation } from './model/evaluate';
import type { Framework } from './model/framework-capabilities';
import { modelFromHfConfig, type ImportedModel } from './model/hf-config';
import { parseScenario, type Scenario } from './model/scenario';
import { ScenarioValidationError } from './model/validation-error';

export { parseScenario, type Scenario, type Site, type Link } from './model/scenario';
export { evaluate, evaluateLayout, type Evaluation, type Prediction, type SiteUsage, type LinkUsage } from './model/evaluate';
export type { Breakdown } from './model/critical-group';
export { layOutPlan, type PlanLayout } from './model/placement';
export { ScenarioValidationError, type InputIssue, formatIssues } from './model/validation-error';
export { GPU_CATALOG, type GpuSpec } from './model/gpu-catalog';
export { scenarioSchema, type ScenarioSpec } from './model/scenario-schema';
export { planSchema, type PlanSpec, SCHEDULES, RECOMPUTE_MODES } from './model/plan-schema';
export { FRAMEWORKS, FRAMEWORK_CAPABILITIES, capabilitiesOf, type Framework, type FrameworkCapabilities, type Support } from './model/framework-capabilities';
export { frameworkIssues, frameworkFit, type FrameworkIssue } from './model/framework-issues';
export { CALIBRATION } from './model/calibration-constants';
export { calibrationProfileSchema, calibrationRunsSchema, type CalibrationProfile } from './model/calibration-profile-schema';
export { applyCalibrationProfile, profileIntervalModel, profileResidualSet } from './calibration/apply-profile';
export {
  activeIntervalModel, ATTENTION_HEAVY_SHARE, attentionHeavyNote, builtInIntervalModel, intervalJobOf, intervalModel, intervalRatios,
  isAttentionHeavy, memoryInterval, timeInterval, timeRatiosFor,
  type IntervalJob, type IntervalModel, type IntervalRatios, type MemoryInterval, type ResidualSet, type TimeInterval,
} from './model/prediction-interval';
export { attentionCoreShare } from './model/transformer-flops';
export { readCalibrationProfile } from './io/calibration-files';
export { readJsonFile, parseJsonText } from './io/files';
export { plan, defaultBackends, type PlanOptions } from './solve/plan';
export type { PlanResult, Bound, BaselineResult, SolverReport } from './solve/plan-result';
export type { MipBackend, MipSolution, MipSolveOptions } from './solve/mip-backend';
export { exhaustiveSearch, type ExhaustiveResult } from './solve/exhaustive';
export { modelFromHfConfig, HF_MODEL_TYPES, type ImportedModel } from './model/hf-config';

/**
 * Reads and validates a scenario file; throws {@link ScenarioValidationError} naming the file and
 * JSON path. `overrides.framework` replaces the file's `search.framework` (`plan --framework`)
 * before validation, so a search list the framework cannot run is reported at its path.
 */
export function loadScenario(file: string, overrides: { readonly framework?: Framework } = {}): Scenario {
  const raw = readJsonFile(file);
  if (overrides.framework === undefined || typeof raw !== 'object' || raw === null || Array.isArray(raw)) return parseScenario(raw, file);
  const spec = raw as Record<string, unknown>;
  const search = spec['search'] === undefined ? {} : spec['search'];
  // A search block that is not an object is left for validation to report.
  const withFramework = typeof search === 'object' && search !== null && !Array.isArray(search) ? { ...search, framework: overrides.framework } : search;
  return parseScenario({ ...spec, search: withFramework }, file);
}

/**
 * Reads a Hugging Face config.json and returns the scenario `model` object for it; throws
 * {@link ScenarioValidationError} naming the file and each config key it cannot map.
 */
export function loadHfModel(file: string, name?: string): ImportedModel {
  return modelFromHfConfig(readJsonFile(file), name, file);
}

/**
 * Evaluates one plan or an array of plans. Errors name `plan[i]` for arrays. All plans are
 * checked before any result is returned, so a bad plan anywhere is reported with all the others.
 */
export function evaluatePlans(scenario: Scenario, plans: unknown): Evaluation | Evaluation[] {
  if (!Array.isArray(plans)) return evaluate(scenario, plans, 'plan');
  const issues: ScenarioValidationError[] = [];
  const results: Evaluation[] = [];
  plans.forEach((plan, i) => {
    try {
      results.push(evaluate(scenario, plan, `plan[${i}]`));
    } catch (error) {
      if (error instanceof ScenarioValidationError) issues.push(error);
      else throw error;
    }
  });
  if (issues.length > 0) throw new ScenarioValidationError(issues.flatMap((e) => e.issues));
  return results;
}
