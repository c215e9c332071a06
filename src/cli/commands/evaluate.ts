/** `scaleacross evaluate <scenario.json> --plan <plan.json> [--json]`: predicts one plan or an array of plans. */
import { evaluatePlans, loadScenario, readJsonFile } from '../../index';
import { calibrationJson, calibrationLine, resolveCalibration, withCalibrationSync } from '../calibration-option';
import { EXIT, type Output } from '../exit-codes';
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
  if (json) {
    // The profile used is named in every evaluation (one object, or each element of an array).
    const named = calibration ? (Array.isArray(result) ? result.map((r) => ({ ...r, calibration: calibrationJson(calibration) })) : { ...result, calibration: calibrationJson(calibration) }) : result;
    output.out(JSON.stringify(named, null, 2));
  } else {
    output.out(Array.isArray(result) ? formatEvaluationTable(result) : formatEvaluation(scenario, result));
    if (calibration) output.out(calibrationLine(calibration));
  }
  return EXIT.ok;
}
