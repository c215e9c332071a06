/** `scaleacross diagnose <scenario.json> [--json] [--time-limit S]`. */
import { diagnose } from '../../diagnose/diagnose';
import { loadScenario } from '../../index';
import { calibrationJson, calibrationLine, resolveCalibration, withCalibration } from '../calibration-option';
import { EXIT, type Output } from '../exit-codes';
import { diagnosisJson, formatDiagnosis } from '../format-diagnosis';

export interface DiagnoseArgs {
  readonly scenario: string;
  readonly json: boolean;
  /** Seconds per re-solve. */
  readonly timeLimit: number;
  /** A calibration profile file (overrides the scenario's `calibration`). */
  readonly calibration?: string;
}

export async function runDiagnose(args: DiagnoseArgs, output: Output): Promise<number> {
  const scenario = loadScenario(args.scenario);
  const calibration = resolveCalibration(args.calibration, args.scenario, scenario);
  const result = await withCalibration(calibration, () => diagnose(scenario, { reSolveTimeLimitS: args.timeLimit }));
  if (args.json) output.out(JSON.stringify({ ...diagnosisJson(result), ...(calibration ? { calibration: calibrationJson(calibration) } : {}) }, null, 2));
  else output.out(formatDiagnosis(scenario.name, result) + (calibration ? `\n${calibrationLine(calibration)}` : ''));
  return result.status === 'feasible' ? EXIT.ok : EXIT.noPlanFits;
}
