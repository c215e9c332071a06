/**
 * The limits of `plan --max-usd-per-hour` and `--max-training-days` (docs/formulation.md §10),
 * and a budgeted search's outcome as a `plan` result. A limit on training days is a required
 * iteration time: days x 86400 / iterations, or the scenario's own training.maxIterationTimeS if
 * that is less.
 */
import { layOutPlan } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { gpuUsdPerHour, iterationsForTokens } from '../model/training-cost';
import { frameworkFit } from '../model/framework-issues';
import { searchWithinBudget, type BudgetedOutcome, type BudgetedSearchContext } from './budgeted-search';
import type { GpuBudget } from '../formulation/gpu-budget';
import { idleGpusReleased, pricesOf } from '../model/prices';
import type { Bound, PlanResult, SolverReport } from './plan-result';
import type { SpaceRestriction } from '../formulation/search-space';
import { leastGpusOfSpace } from './pareto';

export interface PlanLimits {
  /** Most the GPUs the plan pays for may cost per hour, US dollars (needs every site's gpuHourUsd). */
  readonly maxUsdPerHour?: number;
  /** Most days the whole run may take (needs training.totalTokens). */
  readonly maxTrainingDays?: number;
}

/** The scenario with `maxTrainingDays` as its required iteration time (unchanged without it). */
export function scenarioWithLimits(scenario: Scenario, limits: PlanLimits): Scenario {
  if (limits.maxTrainingDays === undefined) return scenario;
  const { totalTokens, globalBatchSeqs, seqLen } = scenario.training;
  if (totalTokens === undefined) throw new Error('a limit on training days needs training.totalTokens');
  const fromDaysS = (limits.maxTrainingDays * 86400) / iterationsForTokens(totalTokens, globalBatchSeqs, seqLen);
  const maxIterationTimeS = Math.min(scenario.training.maxIterationTimeS ?? Infinity, fromDaysS);
  return { ...scenario, training: { ...scenario.training, maxIterationTimeS } };
}

/** What the limits ask, said in the planner's terms, for the reasons of "no plan fits" (the search's own reasons follow, within the limits). */
export function limitReasons(given: Scenario, limits: PlanLimits): string[] {
  const reasons: string[] = [];
  const prices = pricesOf(given);
  if (limits.maxUsdPerHour !== undefined && prices) {
    const cheapestUsd = Math.min(...prices.gpuHourUsd);
    const gpus = Math.floor(limits.maxUsdPerHour / cheapestUsd + 1e-9);
    reasons.push(`--max-usd-per-hour ${limits.maxUsdPerHour} pays for at most ${gpus} GPU(s), at the cheapest site's $${cheapestUsd} per GPU-hour; the reasons after this one are of the plans within it`);
  }
  if (limits.maxTrainingDays !== undefined && given.training.totalTokens !== undefined) {
    const { totalTokens, globalBatchSeqs, seqLen } = given.training;
    const iterations = iterationsForTokens(totalTokens, globalBatchSeqs, seqLen);
    reasons.push(`--max-training-days ${limits.maxTrainingDays} allows ${((limits.maxTrainingDays * 86400) / iterations).toPrecision(4)} s per iteration over ${iterations} iterations (the training.maxIterationTimeS below)`);
  }
  return reasons;
}

/** Several searches' reports as one: the chosen plan's engine, the searches' counts added (candidates counted once per search). */
export function combinedSolverReport(reports: readonly SolverReport[], engine: string, timeS: number): SolverReport {
  return {
    engine, timeS,
    fallbacksUsed: [...new Set(reports.flatMap((r) => r.fallbacksUsed))],
    faults: reports.flatMap((r) => r.faults),
    candidates: reports.reduce((sum, r) => sum + r.candidates, 0),
    mipsSolved: reports.reduce((sum, r) => sum + r.mipsSolved, 0),
    pruned: reports.reduce((sum, r) => sum + r.pruned, 0),
    timedOut: reports.some((r) => r.timedOut),
  };
}

/** A budgeted outcome as a `plan` result (no baselines: they search other spaces without the limits). */
export function planResultOf(scenario: Scenario, outcome: BudgetedOutcome, restriction: SpaceRestriction, solver: SolverReport, status: PlanResult['status'] = outcome.status, bound?: Bound): PlanResult {
  const inFramework = restriction.framework === undefined ? {} : { framework: restriction.framework };
  const timeS = outcome.evaluation?.predicted.iterationTimeS;
  const lowerBoundS = timeS === undefined ? outcome.lowerBoundS : Math.min(outcome.lowerBoundS, timeS);
  const ownBound: Bound = { lowerBoundS, gap: timeS === undefined ? Infinity : (timeS - lowerBoundS) / timeS, proven: true };
  if (!outcome.plan || !outcome.evaluation) return { status, bound: bound ?? ownBound, solver, reasons: outcome.reasons, baselines: [], ...inFramework };
  const fit = frameworkFit(scenario, layOutPlan(scenario, outcome.plan));
  return {
    status, plan: outcome.plan, evaluation: outcome.evaluation, bound: bound ?? ownBound, solver, reasons: [], baselines: [], ...inFramework,
    frameworks: fit.runnable, frameworkGaps: fit.missing, frameworkDifferences: fit.differences,
  };
}

/**
 * The fastest plan within the limits (`plan --max-usd-per-hour/--max-training-days` with the time
 * objective): one search within the price budget; with every GPU held (search.allowIdleGpus
 * false) the price is the whole cluster's, which fits the limit or leaves nothing.
 */
export async function fastestWithinLimits(given: Scenario, limits: PlanLimits, timeLimitS: number, context: BudgetedSearchContext): Promise<PlanResult> {
  const scenario = scenarioWithLimits(given, limits);
  const prices = pricesOf(scenario);
  let budget: GpuBudget = {};
  if (limits.maxUsdPerHour !== undefined) {
    if (!prices) throw new Error('a limit on the hourly price needs every site\'s gpuHourUsd');
    if (idleGpusReleased(scenario)) budget = { maxUsdPerHour: limits.maxUsdPerHour, gpuHourUsd: prices.gpuHourUsd };
    else {
      const heldUsdPerHour = gpuUsdPerHour(scenario.sites.map((site) => site.gpus), prices.gpuHourUsd);
      if (heldUsdPerHour > limits.maxUsdPerHour) {
        const reason = `holding every GPU (search.allowIdleGpus is false) costs $${heldUsdPerHour.toFixed(2)} per hour, over --max-usd-per-hour ${limits.maxUsdPerHour}`;
        const solver = combinedSolverReport([], 'none', 0);
        return planResultOf(scenario, { status: 'infeasible', lowerBoundS: Infinity, reasons: [reason], solver }, context.restriction, solver);
      }
    }
  }
  const outcome = await searchWithinBudget(scenario, budget, [], timeLimitS, context);
  const reasons = outcome.plan ? [] : [...limitReasons(given, limits), ...leastPriceReason(scenario, limits, context), ...outcome.reasons];
  return planResultOf(scenario, { ...outcome, reasons }, context.restriction, outcome.solver);
}

/**
 * When the price cap is what no plan fits under: the fewest GPUs any plan of the space needs (its
 * candidates that fit memory and share the batch), priced at the cheapest site's GPUs, a lower
 * bound on the cap that can help.
 */
function leastPriceReason(scenario: Scenario, limits: PlanLimits, context: BudgetedSearchContext): string[] {
  const prices = pricesOf(scenario);
  if (limits.maxUsdPerHour === undefined || !prices) return [];
  const leastGpus = leastGpusOfSpace(scenario, context);
  const cheapestUsd = Math.min(...prices.gpuHourUsd);
  if (!Number.isFinite(leastGpus) || leastGpus * cheapestUsd <= limits.maxUsdPerHour) return [];
  return [`no plan of this space fits on fewer than ${leastGpus} GPUs: at least $${(leastGpus * cheapestUsd).toFixed(2)} per hour at the cheapest site's price, the least --max-usd-per-hour that can help (plan --objective cost finds the cheapest plan)`];
}
