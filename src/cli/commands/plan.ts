/**
 * `scaleacross plan <scenario.json> [--json] [--time-limit S] [--gap G] [--exhaustive] [--quiet]
 * [--objective time|cost] [--max-usd-per-hour U] [--max-training-days D] [--pareto [--budgets ...]]`.
 */
import { loadScenario, type Scenario } from '../../index';
import { FULL_SPACE, withFramework } from '../../formulation/search-space';
import type { Framework } from '../../model/framework-capabilities';
import { frameworkFit } from '../../model/framework-issues';
import { layOutPlan } from '../../model/placement';
import { exhaustiveSearch } from '../../solve/exhaustive';
import { recheckPlan } from '../../solve/independent-check';
import { plan } from '../../solve/plan';
import type { PlanResult } from '../../solve/plan-result';
import { diagnose, type Diagnosis } from '../../diagnose/diagnose';
import { calibrationJson, calibrationLine, resolveCalibration, withCalibration, type ActiveCalibration } from '../calibration-option';
import { EXIT, UsageError, type Output } from '../exit-codes';
import { diagnosisJson, formatDiagnosis } from '../format-diagnosis';
import { formatPlanResult, planResultJson } from '../format-plan';
import { planExtras, prepareExtras, type PlanExtrasArgs, type PreparedExtras } from '../plan-extras';
import { runCostModes, wantsCostModes, type CostArgs } from './plan-cost';

/** The options of the cost objective and the GPU-budget frontier (docs/formulation.md §10), registered on `plan` by run.ts. */
export const PLAN_COST_OPTIONS = {
  objective: {
    choices: ['time', 'cost'] as const, default: 'time' as const,
    describe: 'time: the fastest plan; cost: the plan of least cost per iteration (GPUs paid for x their price x iteration time, plus egress per GB), with a proven bound on cost. Idle GPUs are released and not paid for, unless the scenario sets search.allowIdleGpus to false: then every GPU is paid for',
  },
  'max-usd-per-hour': { type: 'number', describe: 'Only plans whose paid GPUs cost at most this many US dollars per hour (egress, billed per GB, not included)' },
  'max-training-days': { type: 'number', describe: 'Only plans that process training.totalTokens within this many days' },
  pareto: { type: 'boolean', default: false, describe: 'The GPU-budget frontier: for each budget, the fastest plan using at most that many GPUs and its proven bound' },
  budgets: { type: 'string', describe: 'GPU budgets for --pareto, comma-separated (default: the cluster halved down to the least a plan needs, and the largest sites added up)' },
} as const;

/** The option errors yargs cannot see: one line each, exit 2. */
export function checkPlanCostOptions(a: { readonly objective: string; readonly 'max-usd-per-hour'?: number; readonly 'max-training-days'?: number; readonly pareto: boolean; readonly budgets?: string; readonly exhaustive: boolean }): true {
  const positive = (name: string, value: number | undefined) => {
    if (value !== undefined && !(value > 0 && Number.isFinite(value))) throw new UsageError(`--${name} must be a positive number`);
  };
  positive('max-usd-per-hour', a['max-usd-per-hour']);
  positive('max-training-days', a['max-training-days']);
  if (a.pareto && a.objective === 'cost') throw new UsageError('--pareto gives the fastest plan per GPU budget: leave out --objective cost');
  if (a.budgets !== undefined && !a.pareto) throw new UsageError('--budgets needs --pareto');
  const costModes = a.pareto || a.objective === 'cost' || a['max-usd-per-hour'] !== undefined || a['max-training-days'] !== undefined;
  if (a.exhaustive && costModes) throw new UsageError('--exhaustive searches the time objective without limits: leave out --objective cost, --pareto and the --max-* limits');
  return true;
}

export interface PlanArgs extends Partial<CostArgs>, PlanExtrasArgs {
  readonly scenario: string;
  readonly json: boolean;
  readonly timeLimit: number;
  readonly gap: number;
  readonly exhaustive: boolean;
  readonly quiet: boolean;
  /** Diagnose why when no plan fits (default true). */
  readonly diagnose?: boolean;
  /** Search only what this framework runs as planned (overrides the scenario's search.framework). */
  readonly framework?: Framework;
  /** A calibration profile file (overrides the scenario's `calibration`). */
  readonly calibration?: string;
}

export async function runPlan(args: PlanArgs, output: Output, progressStream?: NodeJS.WriteStream): Promise<number> {
  const scenario = loadScenario(args.scenario, { framework: args.framework });
  const calibration = resolveCalibration(args.calibration, args.scenario, scenario);
  const prepared = prepareExtras(scenario, args);
  return withCalibration(calibration, async () => {
    const code = await planWithConstants(scenario, args, output, progressStream, calibration, prepared);
    if (calibration && !args.json) output.out(calibrationLine(calibration));
    return code;
  });
}

async function planWithConstants(scenario: Scenario, args: PlanArgs, output: Output, progressStream: NodeJS.WriteStream | undefined, calibration: ActiveCalibration | undefined, prepared: PreparedExtras): Promise<number> {
  const cost: CostArgs = { ...args, objective: args.objective ?? 'time', pareto: args.pareto ?? false };
  if (wantsCostModes(cost)) return runCostModes(scenario, cost, output, calibration ? { calibration: calibrationJson(calibration) } : {});
  const result = args.exhaustive ? exhaustiveResult(scenario, args.timeLimit) : await plan(scenario, {
    timeLimitS: args.timeLimit,
    gap: args.gap,
    onProgress: progressStream && !args.quiet && !args.json ? progressPrinter(progressStream) : undefined,
  });
  if (progressStream?.isTTY && !args.quiet && !args.json) progressStream.write('\r\x1b[K');
  // "No plan fits" comes with the minimal conflicting requirements and the smallest fixes.
  let diagnosis: Diagnosis | undefined;
  if (result.status === 'infeasible' && (args.diagnose ?? true)) diagnosis = await diagnose(scenario, { reSolveTimeLimitS: Math.min(3, args.timeLimit / 3) });
  // --exhaustive never runs the MIP: no idle-GPU re-plan there unless asked for with what-if.
  const extras = await planExtras(scenario, result.evaluation, prepared, args.exhaustive ? { ...args, explainIdle: false } : args);
  if (args.json) {
    output.out(JSON.stringify({ ...planResultJson(result, scenario), ...(diagnosis ? { diagnosis: diagnosisJson(diagnosis) } : {}), ...extras.json, ...(calibration ? { calibration: calibrationJson(calibration) } : {}) }, null, 2));
  } else {
    output.out(formatPlanResult(scenario, result) + (diagnosis ? `

${formatDiagnosis(scenario.name, diagnosis)}` : '') + extras.text.map((t) => `\n\n${t}`).join(''));
  }
  return result.plan ? EXIT.ok : EXIT.noPlanFits;
}

/** Live progress on a terminal once a solve runs past a second. */
function progressPrinter(stream: NodeJS.WriteStream) {
  return (p: { incumbentS: number; boundS: number; gap: number; elapsedS: number }) => {
    if (!stream.isTTY || p.elapsedS < 1) return;
    stream.write(`\r\x1b[Kplanning: best ${p.incumbentS.toFixed(3)} s, bound ${p.boundS.toFixed(3)} s, gap ${(100 * p.gap).toFixed(2)}%, ${p.elapsedS.toFixed(1)} s`);
  };
}

function exhaustiveResult(scenario: Scenario, timeLimitS: number): PlanResult {
  const framework = scenario.search?.framework;
  const inFramework = framework === undefined ? {} : { framework };
  const result = exhaustiveSearch(scenario, withFramework(FULL_SPACE, framework), timeLimitS);
  const solver = {
    engine: 'exhaustive', timeS: result.timeS, fallbacksUsed: [], faults: [], candidates: result.coverage.candidates,
    mipsSolved: 0, pruned: result.coverage.candidatesPrunedByBound, timedOut: !result.complete, exhaustive: result.coverage,
  };
  if (!result.plan || !result.evaluation) {
    // Only a complete enumeration proves that nothing fits; one cut short has merely not met a plan yet.
    if (result.complete) return { status: 'infeasible', bound: { lowerBoundS: Infinity, gap: Infinity, proven: true }, solver, reasons: ['no plan in the search space fits'], baselines: [], ...inFramework };
    const reason = `enumeration stopped at the time limit of ${timeLimitS} s after ${result.plansEvaluated} plans, none of them fitting; not proven infeasible: raise --time-limit, or plan without --exhaustive`;
    return { status: 'unknown', bound: { lowerBoundS: 0, gap: Infinity, proven: false }, solver, reasons: [reason], baselines: [], ...inFramework };
  }
  const evaluation = recheckPlan(scenario, result.plan, result.evaluation);
  const time = evaluation.predicted.iterationTimeS;
  // A complete enumeration proves its optimum; an incomplete one proves nothing.
  const bound = result.complete ? { lowerBoundS: time, gap: 0, proven: true } : { lowerBoundS: 0, gap: 1, proven: false };
  const fit = frameworkFit(scenario, layOutPlan(scenario, result.plan));
  return { status: result.complete ? 'optimal' : 'feasible', plan: result.plan, evaluation, bound, solver, reasons: [], baselines: [], ...inFramework, frameworks: fit.runnable, frameworkGaps: fit.missing, frameworkDifferences: fit.differences };
}
