/**
 * The GPU-budget frontier (`plan --pareto`, docs/formulation.md §10): for each budget on a grid,
 * the fastest plan using at most that many GPUs and a proven lower bound on every such plan.
 * Budgets are searched in increasing order, each seeded with the best plan of the smaller ones
 * (it fits every larger budget), so more GPUs are never slower. A bound proven for a budget holds
 * for every smaller one (its plans are among the larger budget's), never for a larger one: each
 * point's bound is the largest of its own and those of the larger budgets.
 */
import { candidateGpus, type GpuBudget } from '../formulation/gpu-budget';
import { scenarioForSpace } from '../formulation/search-space';
import type { Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import { planCost, pricesOf } from '../model/prices';
import type { Scenario } from '../model/scenario';
import { enumerateCandidates } from './candidates';
import { searchWithinBudget, type BudgetedSearchContext } from './budgeted-search';
import type { PlanResult } from './plan-result';

export interface FrontierPoint {
  /** The GPU budget: the plan uses at most this many GPUs. */
  readonly gpus: number;
  readonly status: PlanResult['status'];
  /** GPUs the plan uses. */
  readonly gpusUsed?: number;
  /** The plan's GPUs at their sites' prices per hour (priced scenarios; docs/cost-model.md §8). */
  readonly usdPerHour?: number;
  readonly iterationTimeS?: number;
  /** A lower bound on the iteration time of every plan using at most `gpus` GPUs (Infinity: none fits). */
  readonly lowerBoundS: number;
  /** (iteration time - bound) / iteration time. */
  readonly gap?: number;
  readonly plan?: PlanSpec;
  readonly evaluation?: Evaluation;
  /** Why no plan fits the budget, when none does. */
  readonly reasons: readonly string[];
}

/** Most budgets the default grid holds. */
const DEFAULT_GRID_POINTS = 8;

/** The least GPUs any candidate of the space that fits memory needs (Infinity when none does). */
export function leastGpusOfSpace(scenario: Scenario, context: Pick<BudgetedSearchContext, 'restriction'>): number {
  let least = Infinity;
  for (const c of enumerateCandidates(scenarioForSpace(scenario, context.restriction), context.restriction)) if (Number.isFinite(c.quickBoundS)) least = Math.min(least, candidateGpus(c.config, c.dp));
  return least;
}

/**
 * The default grid: the cluster's GPUs halved down to the least GPUs a plan of the space needs,
 * and the GPUs of the largest site, the two largest, ... (so whether another site is worth it
 * reads off the frontier); at most eight budgets, the largest ones kept.
 */
export function defaultGpuBudgets(scenario: Scenario, leastGpus: number): number[] {
  const total = scenario.sites.reduce((sum, site) => sum + site.gpus, 0);
  const budgets = new Set<number>([total]);
  for (let b = total / 2; b >= leastGpus && Number.isInteger(b); b /= 2) budgets.add(b);
  let sum = 0;
  for (const site of [...scenario.sites].sort((a, b) => b.gpus - a.gpus)) { sum += site.gpus; budgets.add(sum); }
  if (Number.isFinite(leastGpus) && leastGpus <= total) budgets.add(leastGpus);
  return [...budgets].filter((b) => b >= Math.min(leastGpus, total)).sort((a, b) => a - b).slice(-DEFAULT_GRID_POINTS);
}

/** The frontier over the budgets `given` (in ascending order, each once), in `timeLimitS` for all of them. */
export async function gpuFrontier(scenario: Scenario, given: readonly number[], timeLimitS: number, context: BudgetedSearchContext, extra: Omit<GpuBudget, 'maxGpus'> = {}): Promise<FrontierPoint[]> {
  const deadline = Date.now() + timeLimitS * 1000;
  // Ascending: each budget starts from the plan of the one below it.
  const budgets = [...new Set(given)].sort((a, b) => a - b);
  const priced = pricesOf(scenario) !== undefined;
  const points: FrontierPoint[] = [];
  let carried: { plan: PlanSpec; evaluation: Evaluation } | undefined;
  for (let i = 0; i < budgets.length; i++) {
    const gpus = budgets[i]!;
    const shareS = Math.max(0.5, (deadline - Date.now()) / 1000 / (budgets.length - i));
    const outcome = await searchWithinBudget(scenario, { ...extra, maxGpus: gpus }, carried ? [carried] : [], shareS, context);
    if (!outcome.plan || !outcome.evaluation) {
      points.push({ gpus, status: outcome.status, lowerBoundS: outcome.lowerBoundS, reasons: outcome.reasons.length > 0 ? outcome.reasons : [`no plan uses at most ${gpus} GPUs`] });
      continue;
    }
    carried = { plan: outcome.plan, evaluation: outcome.evaluation };
    const cost = priced ? planCost(scenario, layOutPlan(scenario, outcome.plan), outcome.evaluation) : undefined;
    points.push({
      gpus, status: outcome.status, gpusUsed: outcome.evaluation.predicted.gpusUsed, ...(cost ? { usdPerHour: cost.usdPerHour } : {}),
      iterationTimeS: outcome.evaluation.predicted.iterationTimeS, lowerBoundS: outcome.lowerBoundS, plan: outcome.plan, evaluation: outcome.evaluation, reasons: [],
    });
  }
  return withLargerBudgetsBounds(points, context.gap);
}

/**
 * Each point's bound raised to the largest bound of the budgets at or above it (valid: a smaller
 * budget's plans are among a larger one's), with its gap and status read again.
 */
export function withLargerBudgetsBounds(points: readonly FrontierPoint[], gap: number): FrontierPoint[] {
  const raised: FrontierPoint[] = [];
  let largest = -Infinity;
  for (let i = points.length - 1; i >= 0; i--) {
    const point = points[i]!;
    largest = Math.max(largest, point.lowerBoundS);
    if (point.iterationTimeS === undefined) { raised.unshift({ ...point, lowerBoundS: largest }); continue; }
    const lowerBoundS = Math.min(largest, point.iterationTimeS);
    const pointGap = (point.iterationTimeS - lowerBoundS) / point.iterationTimeS;
    raised.unshift({ ...point, lowerBoundS, gap: pointGap, status: pointGap <= gap * (1 + 1e-9) ? 'optimal' : 'feasible' });
  }
  return raised;
}
