/** `scaleacross evaluate <scenario.json> --plan <plan.json> [--json]`: predicts one plan or an array of plans. */
import { evaluatePlans, loadScenario, readJsonFile } from '../../index';
import { calibrationJson, calibrationLine, resolveCalibration, withCalibrationSync } from '../calibration-option';
import type { Evaluation } from '../../model/evaluate';
import { planSpecCost } from '../../model/prices';
import { EXIT, type Output } from '../exit-codes';
import { formatCost } from '../format-cost';
import { formatEvaluation, formatEvaluationTable } from '../format-evaluation';

export function runEvaluate(scenarioFile: string, planFile: string, json: boolean, output: Output, calibrationFile?: string): number {
  const scenario = loadScenario(scenarioFile);
  const calibration = resolveCalibration(calibrationFile, scenarioFile, scenario);
  const plans = readJsonFile(planFile);
  let result;
  try {
    result = withCalibrationSync(calibration, () => evaluatePlans(scenario, plans));
  } catch (error) {
    if (error instanceof Error && error.name === 'ScenarioValidationError') {
      throw (error as import('../../index').ScenarioValidationError).withPrefix('', planFile);
    }
    throw error;
  }
  const withCost = (evaluation: Evaluation, plan: unknown) => {
    const cost = withCalibrationSync(calibration, () => planSpecCost(scenario, plan, evaluation));
    return cost ? { ...evaluation, cost } : evaluation;
  };
  if (json) {
    // The profile used is named in every evaluation (one object, or each element of an array).
    // With prices, each evaluation carries its plan's cost (docs/cost-model.md §8).
    const priced = Array.isArray(result) ? result.map((r, i) => withCost(r, (plans as unknown[])[i])) : withCost(result, plans);
    const named = calibration ? (Array.isArray(priced) ? priced.map((r) => ({ ...r, calibration: calibrationJson(calibration) })) : { ...priced, calibration: calibrationJson(calibration) }) : priced;
    output.out(JSON.stringify(named, null, 2));
  } else {
    output.out(Array.isArray(result) ? formatEvaluationTable(result) : formatEvaluation(scenario, result));
    const cost = Array.isArray(result) ? undefined : withCalibrationSync(calibration, () => planSpecCost(scenario, plans, result));
    if (cost) output.out(`\n${formatCost(scenario, cost)}`);
    if (calibration) output.out(calibrationLine(calibration));
  }
  return EXIT.ok;
}
