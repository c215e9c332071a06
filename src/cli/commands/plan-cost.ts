/**
 * `plan --pareto`, `plan --objective cost` and `plan --max-usd-per-hour/--max-training-days`
 * (docs/formulation.md §10): checks the options against the scenario, runs the library, prints.
 */
import { FULL_SPACE, withFramework } from '../../formulation/search-space';
import { pricesOf } from '../../model/prices';
import type { Scenario } from '../../model/scenario';
import type { BudgetedSearchContext } from '../../solve/budgeted-search';
import { minimiseCost } from '../../solve/cost-objective';
import { defaultGpuBudgets, gpuFrontier, leastGpusOfSpace, type FrontierPoint } from '../../solve/pareto';
import { defaultBackends, defaultConcurrentBackends } from '../../solve/plan';
import { fastestWithinLimits, scenarioWithLimits, type PlanLimits } from '../../solve/plan-limits';
import { EXIT, UsageError, type Output } from '../exit-codes';
import { formatPlanResult, planResultJson } from '../format-plan';
import { costBoundLine, formatCostObjective, formatFrontier, frontierJson } from '../format-frontier';

export interface CostArgs {
  readonly json: boolean;
  readonly timeLimit: number;
  readonly gap: number;
  readonly objective: 'time' | 'cost';
  readonly maxUsdPerHour?: number;
  readonly maxTrainingDays?: number;
  readonly pareto: boolean;
  /** Comma-separated GPU budgets for --pareto. */
  readonly budgets?: string;
}

/** Whether the arguments ask for more than the plain time objective. */
export const wantsCostModes = (a: CostArgs): boolean =>
  a.pareto || a.objective === 'cost' || a.maxUsdPerHour !== undefined || a.maxTrainingDays !== undefined;

/** The option errors that need the scenario: prices, the run's tokens. */
function checkAgainstScenario(scenario: Scenario, a: CostArgs): void {
  const priced = pricesOf(scenario) !== undefined;
  if (a.objective === 'cost' && !priced) throw new UsageError('--objective cost needs a price for every site (cluster.sites[].gpuHourUsd in the scenario)');
  if (a.maxUsdPerHour !== undefined && !priced) throw new UsageError('--max-usd-per-hour needs a price for every site (cluster.sites[].gpuHourUsd in the scenario)');
  if (a.maxTrainingDays !== undefined && scenario.training.totalTokens === undefined) throw new UsageError('--max-training-days needs training.totalTokens in the scenario');
}

/** `--budgets 1024,2048`: ascending distinct positive GPU counts. */
export function parseBudgets(text: string): number[] {
  const values = text.split(',').map((v) => v.trim()).filter((v) => v !== '');
  const budgets = values.map(Number);
  if (budgets.length === 0 || budgets.some((b) => !Number.isInteger(b) || b < 1 || b > 1e8)) {
    throw new UsageError(`--budgets must be comma-separated positive GPU counts, got '${text}'`);
  }
  return [...new Set(budgets)].sort((x, y) => x - y);
}

/** `extraJson` (the calibration profile used, when one was) joins every JSON printed. */
export async function runCostModes(scenario: Scenario, a: CostArgs, output: Output, extraJson: Record<string, unknown> = {}): Promise<number> {
  checkAgainstScenario(scenario, a);
  const budgets = a.budgets === undefined ? undefined : parseBudgets(a.budgets);
  const limits: PlanLimits = { ...(a.maxUsdPerHour === undefined ? {} : { maxUsdPerHour: a.maxUsdPerHour }), ...(a.maxTrainingDays === undefined ? {} : { maxTrainingDays: a.maxTrainingDays }) };
  const { context, close } = costModesContext(scenario, a.gap);
  const started = Date.now();
  try {
    if (a.pareto) {
      const points = await frontierOf(scenario, budgets, a.timeLimit, context, limits);
      const timeS = (Date.now() - started) / 1000;
      output.out(a.json ? JSON.stringify({ ...frontierJson(points, { timeS }), limits, ...extraJson }, null, 2) : formatFrontier(scenario, points, timeS));
      return points.some((p) => p.plan) ? EXIT.ok : EXIT.noPlanFits;
    }
    if (a.objective === 'cost') {
      const cost = await minimiseCost(scenario, limits, a.timeLimit, context);
      const { result } = cost;
      if (a.json) output.out(JSON.stringify({ ...planResultJson(result, scenario), objective: 'cost', costBound: cost.costBound, priceBudgets: cost.budgets, limits, ...extraJson }, null, 2));
      else output.out(formatPlanResult(scenario, result, costBoundLine(cost)) + formatCostObjective(cost, result.solver));
      return result.plan ? EXIT.ok : EXIT.noPlanFits;
    }
    const result = await fastestWithinLimits(scenario, limits, a.timeLimit, context);
    if (a.json) output.out(JSON.stringify({ ...planResultJson(result, scenario), objective: 'time', limits, ...extraJson }, null, 2));
    else output.out(formatPlanResult(scenario, result));
    return result.plan ? EXIT.ok : EXIT.noPlanFits;
  } finally {
    await close();
  }
}

/** The search context of the cost modes and the frontier: the default backends (`close` closes them) and the scenario's framework space. */
export function costModesContext(scenario: Scenario, gap: number): { readonly context: BudgetedSearchContext; readonly close: () => Promise<void> } {
  const backends = defaultBackends();
  const concurrentBackends = defaultConcurrentBackends();
  const context: BudgetedSearchContext = { gap, backends, concurrentBackends, restriction: withFramework(FULL_SPACE, scenario.search?.framework) };
  return { context, close: async () => { await Promise.all([...backends, ...concurrentBackends].map((b) => b.close())); } };
}

/**
 * The GPU-budget frontier as `plan --pareto` and `report --pareto` compute it: over `budgets`
 * (undefined: the default grid), within `limits`, in `timeLimitS` for all the budgets.
 */
export async function frontierOf(scenario: Scenario, budgets: readonly number[] | undefined, timeLimitS: number, context: BudgetedSearchContext, limits: PlanLimits = {}): Promise<FrontierPoint[]> {
  const grid = budgets ?? defaultGpuBudgets(scenario, leastGpusOfSpace(scenario, context));
  const prices = pricesOf(scenario);
  const extra = limits.maxUsdPerHour !== undefined && prices ? { maxUsdPerHour: limits.maxUsdPerHour, gpuHourUsd: prices.gpuHourUsd } : {};
  return gpuFrontier(scenarioWithLimits(scenario, limits), grid, timeLimitS, context, extra);
}
