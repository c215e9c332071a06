/**
 * `scaleacross report <scenario.json> [--plan plan.json] --html report.html [--baselines] [--time-limit S]
 * [--pareto [--budgets ...]] [--what-if ...] [--baseline-plan plan.json] [--explain-idle]`.
 */
import { loadScenario, type Scenario } from '../../index';
import { readPlanFile, writeTextFile } from '../../io/files';
import type { Framework } from '../../model/framework-capabilities';
import { ScenarioValidationError } from '../../model/validation-error';
import { diagnose } from '../../diagnose/diagnose';
import { diagnosisItems } from '../../report/diagnosis';
import { htmlReport } from '../../report/html-report';
import { reportFromGivenPlan, reportFromPlanResult, type ReportData } from '../../report/report-data';
import { plan } from '../../solve/plan';
import { calibrationLine, resolveCalibration, withCalibration } from '../calibration-option';
import type { FrontierPoint } from '../../solve/pareto';
import { EXIT, type Output } from '../exit-codes';
import { planExtras, prepareExtras, type PlanExtrasArgs, type PreparedExtras } from '../plan-extras';
import { costModesContext, frontierOf, parseBudgets } from './plan-cost';

export interface ReportArgs extends Omit<PlanExtrasArgs, 'gap'> {
  readonly scenario: string;
  readonly plan?: string;
  readonly html: string;
  readonly timeLimit: number;
  readonly baselines: boolean;
  /** Search only what this framework runs as planned (overrides the scenario's search.framework). */
  readonly framework?: Framework;
  /** A calibration profile file (overrides the scenario's `calibration`). */
  readonly calibration?: string;
  /** Add the GPU-budget frontier (as `plan --pareto`), in a further --time-limit. */
  readonly pareto?: boolean;
  /** Comma-separated GPU budgets for --pareto. */
  readonly budgets?: string;
}

export async function runReport(args: ReportArgs, output: Output): Promise<number> {
  const scenario = loadScenario(args.scenario, { framework: args.framework });
  const calibration = resolveCalibration(args.calibration, args.scenario, scenario);
  const prepared = prepareExtras(scenario, { ...args, gap: 0.01 });
  // A bad --budgets exits 2 before any search.
  const budgets = args.budgets === undefined ? undefined : parseBudgets(args.budgets);
  const code = await withCalibration(calibration, () => reportWithConstants(scenario, args, output, calibration ? calibrationLine(calibration) : undefined, prepared, budgets));
  if (calibration) output.out(calibrationLine(calibration));
  return code;
}

async function reportWithConstants(scenario: Scenario, args: ReportArgs, output: Output, calibration: string | undefined, prepared: PreparedExtras, budgets: readonly number[] | undefined): Promise<number> {
  let data: ReportData;
  let code: number = EXIT.ok;
  if (args.plan !== undefined) {
    const given = readPlanFile(args.plan);
    const baselines = args.baselines ? (await plan(scenario, { timeLimitS: args.timeLimit })).baselines : [];
    try {
      data = reportFromGivenPlan(scenario, given.plan, args.plan, baselines);
    } catch (error) {
      if (error instanceof ScenarioValidationError) throw error.withPrefix('', args.plan);
      throw error;
    }
  } else {
    const result = await plan(scenario, { timeLimitS: args.timeLimit });
    // No plan: the diagnosis (minimal conflicting requirements, verified smallest fixes) replaces it.
    const diagnosis = result.status === 'infeasible' ? await diagnose(scenario, { reSolveTimeLimitS: Math.min(3, args.timeLimit / 3) }) : undefined;
    data = reportFromPlanResult(scenario, result, diagnosis?.status === 'infeasible' ? diagnosisItems(diagnosis) : undefined);
    if (!result.plan) code = EXIT.noPlanFits;
  }
  // Idle GPUs are explained by default for a searched plan; for a given plan only when asked (it re-plans).
  const extras = await planExtras(scenario, data.evaluation, prepared, { ...args, gap: 0.01, explainIdle: args.explainIdle ?? args.plan === undefined });
  data = { ...data, extras: extras.data };
  if (args.pareto) data = { ...data, frontier: await reportFrontier(scenario, budgets, args.timeLimit) };
  writeTextFile(args.html, htmlReport(calibration ? { ...data, calibration } : data));
  const what = data.plan ? `plan ${data.origin.kind === 'given' ? 'evaluated' : 'found'}, ${data.evaluation!.predicted.iterationTimeS.toFixed(3)} s per iteration (${data.evaluation!.predicted.interval.lowS.toFixed(3)}-${data.evaluation!.predicted.interval.highS.toFixed(3)}, ${Math.round(100 * data.evaluation!.predicted.interval.level)}%)${data.evaluation!.mayNotFit ? ', may not fit' : ''}` : `no plan fits (${data.diagnosis.length} conflicting requirement(s))`;
  const frontier = data.frontier ? `; GPU-budget frontier of ${data.frontier.length} budget(s)` : '';
  output.out(`Wrote ${args.html}: ${what}${frontier}.`);
  return code;
}

/** The frontier as `plan --pareto` computes it (gap 1%), in `timeLimitS` for all the budgets. */
async function reportFrontier(scenario: Scenario, budgets: readonly number[] | undefined, timeLimitS: number): Promise<readonly FrontierPoint[]> {
  const { context, close } = costModesContext(scenario, 0.01);
  try {
    return await frontierOf(scenario, budgets, timeLimitS, context);
  } finally {
    await close();
  }
}
