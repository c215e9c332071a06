/**
 * One search within a GPU or price budget (docs/formulation.md §10), re-checked by the cost
 * model, with the status read the way `plan` reads it. Shared by the GPU-budget frontier
 * (pareto.ts) and the cost objective (cost-objective.ts).
 */
import type { GpuBudget } from '../formulation/gpu-budget';
import type { SpaceRestriction } from '../formulation/search-space';
import type { Evaluation } from '../model/evaluate';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { pricesOf } from '../model/prices';
import { cheapestSymmetricPlan } from './cheapest-sites';
import { recheckPlan } from './independent-check';
import type { MipBackend } from './mip-backend';
import type { PlanResult, SolverReport } from './plan-result';
import { searchPlans } from './search';

/** What every budgeted search of one call shares. */
export interface BudgetedSearchContext {
  readonly gap: number;
  readonly backends: readonly MipBackend[];
  readonly concurrentBackends: readonly MipBackend[];
  readonly restriction: SpaceRestriction;
}

export interface BudgetedOutcome {
  /** optimal: within the gap; feasible: a plan, gap above it; infeasible: proven that no plan within the budget fits; unknown: none found in time. */
  readonly status: PlanResult['status'];
  readonly plan?: PlanSpec;
  /** The cost model's evaluation of the plan, re-checked from its JSON. */
  readonly evaluation?: Evaluation;
  /** A lower bound on the iteration time of every plan within the budget (Infinity: none fits). */
  readonly lowerBoundS: number;
  readonly reasons: readonly string[];
  readonly solver: SolverReport;
}

/**
 * The fastest plan within `budget` the search finds in `timeLimitS`, started from `seeds`. A seed
 * slower than the search's plan changes nothing; a seed the search could not beat (it fits the
 * budget) is kept, so that a larger budget is never slower than a smaller one's plan.
 */
export async function searchWithinBudget(
  scenario: Scenario, budget: GpuBudget, seeds: readonly { readonly plan: PlanSpec; readonly evaluation: Evaluation }[], timeLimitS: number, context: BudgetedSearchContext,
): Promise<BudgetedOutcome> {
  const result = await searchPlans(scenario, {
    timeLimitS, gap: context.gap, backends: context.backends, concurrentBackends: context.concurrentBackends,
    restriction: context.restriction, seedPlans: seeds.map((s) => s.plan), gpuBudget: budget,
  });
  let best = result.plan && result.evaluation ? { plan: result.plan, evaluation: recheckPlan(scenario, result.plan, result.evaluation) } : undefined;
  for (const seed of seeds) {
    if (!best || seed.evaluation.predicted.iterationTimeS < best.evaluation.predicted.iterationTimeS) best = seed;
  }
  // Alike sites at different prices: the same plan on the cheaper ones.
  if (best && pricesOf(scenario)) best = cheapestSymmetricPlan(scenario, best.plan, best.evaluation);
  const deadlineS = scenario.training.maxIterationTimeS ?? Infinity;
  if (!best) {
    const lowerBoundS = result.bound.lowerBoundS;
    const infeasible = !Number.isFinite(lowerBoundS) || lowerBoundS > deadlineS;
    return { status: infeasible ? 'infeasible' : 'unknown', lowerBoundS, reasons: result.reasons, solver: result.solver };
  }
  const timeS = best.evaluation.predicted.iterationTimeS;
  const lowerBoundS = Math.min(result.bound.lowerBoundS, timeS);
  const status = (timeS - lowerBoundS) / timeS <= context.gap * (1 + 1e-9) ? 'optimal' : 'feasible';
  const solver = !seeds.some((seed) => seed.plan === best!.plan) ? result.solver : { ...result.solver, engine: 'seed (the best plan of a smaller budget)' };
  return { status, plan: best.plan, evaluation: best.evaluation, lowerBoundS, reasons: [], solver };
}
