/** `scaleacross evaluate <scenario.json> --plan <plan.json> [--json]`: predicts one plan or an array of plans. */
import { evaluatePlans, loadScenario, readJsonFile } from '../../index';
import { EXIT, type Output } from '../exit-codes';
import { formatEvaluation, formatEvaluationTable } from '../format-evaluation';

export function runEvaluate(scenarioFile: string, planFile: string, json: boolean, output: Output): number {
  const scenario = loadScenario(scenarioFile);
  const plans = readJsonFile(planFile);
  let result;
  try {
    result = evaluatePlans(scenario, plans);
  } catch (error) {
    if (error instanceof Error && error.name === 'ScenarioValidationError') {
      throw (error as import('../../index').ScenarioValidationError).withPrefix('', planFile);
    }
    throw error;
  }
  if (json) output.out(JSON.stringify(result, null, 2));
  else output.out(Array.isArray(result) ? formatEvaluationTable(result) : formatEvaluation(scenario, result));
  return EXIT.ok;
}
