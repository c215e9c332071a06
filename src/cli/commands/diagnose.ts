/** `scaleacross diagnose <scenario.json> [--json] [--time-limit S]`. */
import { diagnose } from '../../diagnose/diagnose';
import { loadScenario } from '../../index';
import { EXIT, type Output } from '../exit-codes';
import { diagnosisJson, formatDiagnosis } from '../format-diagnosis';

export interface DiagnoseArgs {
  readonly scenario: string;
  readonly json: boolean;
  /** Seconds per re-solve. */
  readonly timeLimit: number;
}

export async function runDiagnose(args: DiagnoseArgs, output: Output): Promise<number> {
  const scenario = loadScenario(args.scenario);
  const result = await diagnose(scenario, { reSolveTimeLimitS: args.timeLimit });
  output.out(args.json ? JSON.stringify(diagnosisJson(result), null, 2) : formatDiagnosis(scenario.name, result));
  return result.status === 'feasible' ? EXIT.ok : EXIT.noPlanFits;
}
