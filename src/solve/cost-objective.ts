/**
 * `plan --objective cost` (docs/formulation.md §10): the plan that costs least per iteration (so
 * per run: the iterations are fixed), the GPUs paid for at their sites' prices for the iteration
 * time plus egress, within the limits, with a proven lower bound on the cost of every plan within
 * them. Idle GPUs released (search.allowIdleGpus, the default): the same search runs within
 * hourly price budgets B_1 < ... < B_n, the last the cap (the whole cluster, or
 * --max-usd-per-hour), and eq. 10.2 (cost-bound.ts) bounds every plan from the budgets' time
 * bounds and the candidates' GPU counts; the price interval holding the bound is split (its
 * middle price searched) until the gap closes or time runs out. With every GPU held the price is
 * fixed: the fastest plan is the cheapest up to egress.
 */
import { candidateGpus } from '../formulation/gpu-budget';
import { scenarioForSpace } from '../formulation/search-space';
import { layOutPlan } from '../model/placement';
import { idleGpusReleased, planCost, pricesOf } from '../model/prices';
import type { Scenario } from '../model/scenario';
import { cheapestGpusUsdPerHour, dearestGpusUsdPerHour, gpuUsdPerHour, iterationsForTokens } from '../model/training-cost';
import { searchWithinBudget, type BudgetedOutcome, type BudgetedSearchContext } from './budgeted-search';
import { enumerateCandidates } from './candidates';
import { costLowerBound, type CandidatePrice, type CostLowerBound } from './cost-bound';
import { combinedSolverReport, limitReasons, planResultOf, scenarioWithLimits, type PlanLimits } from './plan-limits';
import type { PlanResult } from './plan-result';

/** A proven lower bound on the cost of every plan within the limits. */
export interface CostBound {
  readonly usdPerIteration: number;
  /** The same for the run (null without training.totalTokens). */
  readonly trainingUsd: number | null;
  /** (cost - bound) / cost of the plan. */
  readonly gap: number;
  readonly proven: boolean;
}

/** One hourly price budget searched, with what it proved. */
export interface PriceBudget {
  readonly usdPerHour: number;
  /** A lower bound on the iteration time of every plan costing at most `usdPerHour` per hour (Infinity: none fits). */
  readonly lowerBoundS: number;
  readonly iterationTimeS?: number;
  readonly planUsdPerIteration?: number;
}

export interface CostObjectiveResult {
  readonly result: PlanResult;
  readonly costBound: CostBound;
  readonly budgets: readonly PriceBudget[];
}

const INITIAL_BUDGETS = 5;
const STALLED_SPLITS = 6;

export async function minimiseCost(given: Scenario, limits: PlanLimits, timeLimitS: number, context: BudgetedSearchContext): Promise<CostObjectiveResult> {
  const started = Date.now();
  const deadline = started + timeLimitS * 1000;
  const prices = pricesOf(given);
  if (!prices) throw new Error('the cost objective needs every site\'s gpuHourUsd');
  const scenario = scenarioWithLimits(given, limits);
  const requiredS = (scenario.training.maxIterationTimeS ?? Infinity) * (1 + 1e-9);
  const { totalTokens, globalBatchSeqs, seqLen } = scenario.training;
  const iterations = totalTokens === undefined ? undefined : iterationsForTokens(totalTokens, globalBatchSeqs, seqLen);
  const capUsdPerHour = limits.maxUsdPerHour ?? Infinity;
  const costOf = (o: BudgetedOutcome) => planCost(scenario, layOutPlan(scenario, o.plan!), o.evaluation!)!.usdPerIteration;
  const solved = new Map<number, BudgetedOutcome>();
  const leftS = (share: number) => Math.max(0.5, (deadline - Date.now()) / 1000 / share);
  /**
   * The fastest plan of the budgets at most `usdPerHour` seeds its search: its price fits. Each
   * search aims at half the gap: the cost gap adds the price intervals' slack to the time gap.
   */
  const solve = async (usdPerHour: number, share: number) => {
    const seeds = [...solved].filter(([b, o]) => b <= usdPerHour && o.plan).map(([, o]) => ({ plan: o.plan!, evaluation: o.evaluation! }))
      .sort((a, b) => a.evaluation.predicted.iterationTimeS - b.evaluation.predicted.iterationTimeS).slice(0, 1);
    const budget = Number.isFinite(usdPerHour) ? { maxUsdPerHour: usdPerHour, gpuHourUsd: prices.gpuHourUsd } : {};
    solved.set(usdPerHour, await searchWithinBudget(scenario, budget, seeds, leftS(share), { ...context, gap: context.gap / 2 }));
  };

  let intervalBound: () => CostLowerBound;
  if (!idleGpusReleased(scenario)) {
    // Every GPU held: one price, R_all; cost >= R_all x T (egress >= 0).
    const heldUsdPerHour = gpuUsdPerHour(scenario.sites.map((site) => site.gpus), prices.gpuHourUsd);
    if (heldUsdPerHour <= capUsdPerHour) await solve(Infinity, 1);
    intervalBound = () => {
      const o = solved.get(Infinity);
      if (!o || o.lowerBoundS > requiredS) return { usdPerIteration: Infinity };
      return { usdPerIteration: (heldUsdPerHour * o.lowerBoundS) / 3600 };
    };
  } else {
    // Each candidate's GPU count, its price range and quick bound (eq. 10.2).
    const sites = scenario.sites.map((site) => ({ gpus: site.gpus, gpuHourUsd: prices.gpuHourUsd[site.index]! }));
    const candidates: CandidatePrice[] = enumerateCandidates(scenarioForSpace(scenario, context.restriction), context.restriction).filter((c) => Number.isFinite(c.quickBoundS)).map((c) => {
      const gpus = candidateGpus(c.config, c.dp);
      return { cheapestUsdPerHour: cheapestGpusUsdPerHour(sites, gpus), dearestUsdPerHour: dearestGpusUsdPerHour(sites, gpus), lowerBoundS: c.quickBoundS };
    }).filter((c) => c.cheapestUsdPerHour <= capUsdPerHour);
    const leastPriceUsdPerHour = Math.min(...candidates.map((c) => c.cheapestUsdPerHour));
    const top = Math.min(capUsdPerHour, gpuUsdPerHour(sites.map((s) => s.gpus), prices.gpuHourUsd));
    if (leastPriceUsdPerHour <= top) {
      const grid = geometricGrid(leastPriceUsdPerHour, top, INITIAL_BUDGETS);
      for (let i = 0; i < grid.length; i++) await solve(grid[i]!, grid.length - i + 2);
    }
    intervalBound = () => costLowerBound(solved, candidates, requiredS);
  }

  // Split the interval holding the bound until the gap closes or time runs out.
  const incumbent = () => [...solved.values()].filter((o) => o.plan).map((o) => ({ o, usdPerIteration: costOf(o) }))
    .sort((a, b) => a.usdPerIteration - b.usdPerIteration)[0];
  // Six splits in a row that raise the bound by less than a twentieth of the gap: what is left is the
  // time bounds' own gap (a MIP relaxation's), which splitting prices does not close.
  for (let idle = 0; idle < STALLED_SPLITS;) {
    const best = incumbent();
    const bound = intervalBound();
    if (!best || !bound.splittable || Date.now() >= deadline - 300) break;
    if (bound.usdPerIteration >= best.usdPerIteration * (1 - context.gap)) break;
    const { lo, hi } = bound.splittable;
    await solve(lo > 0 ? Math.sqrt(lo * hi) : hi / 2, 2);
    idle = intervalBound().usdPerIteration > bound.usdPerIteration * (1 + context.gap / 20) ? 0 : idle + 1;
  }

  const best = incumbent();
  const bound = intervalBound();
  const reports = [...solved.values()].map((o) => o.solver);
  const timeS = (Date.now() - started) / 1000;
  const budgets = [...solved].sort((a, b) => a[0] - b[0]).map(([usdPerHour, o]): PriceBudget => ({
    usdPerHour, lowerBoundS: o.lowerBoundS,
    ...(o.plan ? { iterationTimeS: o.evaluation!.predicted.iterationTimeS, planUsdPerIteration: costOf(o) } : {}),
  }));
  const lowerUsd = Math.min(bound.usdPerIteration, best?.usdPerIteration ?? Infinity);
  const costGap = best ? (best.usdPerIteration - lowerUsd) / best.usdPerIteration : Infinity;
  const costBound: CostBound = { usdPerIteration: lowerUsd, trainingUsd: iterations === undefined ? null : lowerUsd * iterations, gap: costGap, proven: true };
  // The time bound of the largest budget holds for every plan within the limits.
  const top = [...solved].sort((a, b) => b[0] - a[0])[0]?.[1];
  if (!best) {
    const nothing: BudgetedOutcome = { status: 'infeasible', lowerBoundS: top?.lowerBoundS ?? Infinity, reasons: top?.reasons ?? [], solver: combinedSolverReport(reports, 'none', timeS) };
    const status = Number.isFinite(bound.usdPerIteration) ? 'unknown' : 'infeasible';
    const reasons = top ? nothing.reasons : [limits.maxUsdPerHour !== undefined ? `no plan's GPUs cost at most $${limits.maxUsdPerHour} per hour (--max-usd-per-hour)` : 'no configuration of the space fits GPU memory'];
    return { result: planResultOf(scenario, { ...nothing, reasons: [...limitReasons(given, limits), ...reasons] }, context.restriction, nothing.solver, status), costBound, budgets };
  }
  const status = costGap <= context.gap * (1 + 1e-9) ? 'optimal' : 'feasible';
  const planTimeS = best.o.evaluation!.predicted.iterationTimeS;
  const timeBoundS = Math.min(top!.lowerBoundS, planTimeS);
  const result = planResultOf(scenario, best.o, context.restriction, combinedSolverReport(reports, best.o.solver.engine, timeS), status,
    { lowerBoundS: timeBoundS, gap: (planTimeS - timeBoundS) / planTimeS, proven: true });
  return { result, costBound, budgets };
}

/** `count` prices from `low` to `high`, evenly spaced in ratio (one when they meet). */
export function geometricGrid(low: number, high: number, count: number): number[] {
  if (!(low > 0) || high <= low) return [high];
  return Array.from({ length: count }, (_, k) => (k === count - 1 ? high : low * (high / low) ** (k / (count - 1))));
}
