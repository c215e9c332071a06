/** Rendering of `plan --pareto` (the GPU-budget frontier) and of the cost objective's bound. */
import type { Scenario } from '../model/scenario';
import type { CostObjectiveResult } from '../solve/cost-objective';
import type { FrontierPoint } from '../solve/pareto';
import type { SolverReport } from '../solve/plan-result';
import { usd } from './format-cost';

const seconds = (s: number | undefined): string => (s === undefined || !Number.isFinite(s) ? '-' : s.toFixed(3));
const count = (n: number): string => n.toLocaleString('en-US');

/** One plan in a few words: degrees, schedule and how its replicas sit on the sites. */
export function planSummary(point: FrontierPoint): string {
  const p = point.plan;
  if (!p) return point.reasons.join('; ');
  const sites = point.evaluation!.predicted.sites.filter((s) => s.gpusUsed > 0).map((s) => `${s.site} ${count(s.gpusUsed)}`).join(', ');
  return `tp ${p.tp} x cp ${p.cp} x ep ${p.ep} x pp ${p.pp} x dp ${p.dp}, ${p.schedule}${p.virtualStages > 1 ? ` v=${p.virtualStages}` : ''}, recompute ${p.recompute}; ${sites}`;
}

/** The frontier as JSON: `frontier: [{ gpus, usdPerHour, iterationTimeS, lowerBoundS, plan, ... }]`. */
export function frontierJson(points: readonly FrontierPoint[], solver: { readonly timeS: number }) {
  return {
    frontier: points.map((p) => ({
      gpus: p.gpus,
      status: p.status,
      gpusUsed: p.gpusUsed ?? null,
      usdPerHour: p.usdPerHour ?? null,
      iterationTimeS: p.iterationTimeS ?? null,
      // null: no plan fits the budget at all (proven).
      lowerBoundS: Number.isFinite(p.lowerBoundS) ? p.lowerBoundS : null,
      gap: p.gap ?? null,
      plan: p.plan ?? null,
      reasons: p.reasons,
    })),
    solver,
  };
}

export function formatFrontier(scenario: Scenario, points: readonly FrontierPoint[], timeS: number): string {
  const priced = points.some((p) => p.usdPerHour !== undefined);
  const lines = [`GPU-budget frontier of ${scenario.name}: the fastest plan using at most each number of GPUs, and a bound on every plan that does`];
  lines.push(`  ${'GPUs at most'.padStart(12)}  ${'used'.padStart(7)}${priced ? `  ${'$/hour'.padStart(9)}` : ''}  ${'iteration s'.padStart(11)}  ${'bound s'.padStart(8)}  ${'gap'.padStart(6)}  plan`);
  for (const p of points) {
    const gap = p.gap === undefined ? '-' : `${(100 * p.gap).toFixed(2)}%`;
    const price = priced ? `  ${(p.usdPerHour === undefined ? '-' : usd(p.usdPerHour)).padStart(9)}` : '';
    lines.push(`  ${count(p.gpus).padStart(12)}  ${(p.gpusUsed === undefined ? '-' : count(p.gpusUsed)).padStart(7)}${price}  ${seconds(p.iterationTimeS).padStart(11)}  ${seconds(p.lowerBoundS).padStart(8)}  ${gap.padStart(6)}  ${planSummary(p)}`);
  }
  const speedups: string[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    if (a.iterationTimeS !== undefined && b.iterationTimeS !== undefined) speedups.push(`${count(a.gpus)} -> ${count(b.gpus)}: ${(a.iterationTimeS / b.iterationTimeS).toFixed(2)}x`);
  }
  if (speedups.length > 0) lines.push(`Speedup per step: ${speedups.join(', ')}`);
  lines.push(`Monotone: a larger budget starts from the smaller one's plan. Bounds are proven per budget and hold for every smaller budget. ${timeS.toFixed(2)} s.`);
  return lines.join('\n');
}

/** The bound line of the cost objective's plan: its cost bound, and the time bound of every plan within the limits. */
export function costBoundLine(cost: CostObjectiveResult): string {
  const b = cost.costBound;
  const run = b.trainingUsd === null ? '' : ` (${usd(b.trainingUsd)} for the run)`;
  const usdText = Number.isFinite(b.usdPerIteration) ? usd(b.usdPerIteration) : '-';
  return `Bound: every plan within the limits costs at least ${usdText} per iteration${run}; cost gap ${Number.isFinite(b.gap) ? `${(100 * b.gap).toFixed(2)}%` : '-'} (proven); and takes at least ${seconds(cost.result.bound.lowerBoundS)} s`;
}

/** The cost objective's bound and the price budgets it searched. */
export function formatCostObjective(cost: CostObjectiveResult, solver: SolverReport): string {
  const b = cost.costBound;
  const lines = ['', `Objective: least cost per iteration (the GPUs paid for at their sites' prices over the iteration, plus egress); cost gap ${Number.isFinite(b.gap) ? `${(100 * b.gap).toFixed(2)}%` : '-'}`];
  if (cost.budgets.length > 0) {
    lines.push(`Hourly price budgets searched (${solver.timeS.toFixed(2)} s):`);
    for (const p of cost.budgets) {
      const plan = p.iterationTimeS === undefined ? 'no plan' : `fastest ${seconds(p.iterationTimeS)} s at ${usd(p.planUsdPerIteration!)} per iteration`;
      const budget = Number.isFinite(p.usdPerHour) ? `at most ${usd(p.usdPerHour).padStart(9)}/hour` : 'every GPU held (search.allowIdleGpus false)';
      lines.push(`  ${budget}: every plan takes at least ${seconds(p.lowerBoundS)} s; ${plan}`);
    }
  }
  return lines.join('\n');
}
