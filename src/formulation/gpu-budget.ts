/**
 * A budget on the GPUs a plan uses (docs/formulation.md §10): at most a number of GPUs, and/or
 * at most an hourly price of the used GPUs at their sites' prices. Every replica of a (kappa, dp)
 * candidate holds tp x cp x pp GPUs wherever its stages run, so the candidate's GPU count is
 * dp x tp x cp x pp; its least hourly price is that many GPUs on the cheapest sites. The
 * placement MIP gets the same limits as rows (F15), over the GPUs each choice places per site.
 */
import { cheapestGpusUsdPerHour } from '../model/training-cost';
import type { PlanLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import type { ParallelConfig } from './search-space';
import type { Columns } from './placement-mip-replicas';

export interface GpuBudget {
  /** Most GPUs a plan may use. */
  readonly maxGpus?: number;
  /** Most the used GPUs may cost per hour, US dollars, at `gpuHourUsd` (needs it). */
  readonly maxUsdPerHour?: number;
  /** Price of one GPU-hour at each site (indexed as the scenario's sites). */
  readonly gpuHourUsd?: readonly number[];
}

/** GPUs every placement of the candidate (config, dp) uses. */
export const candidateGpus = (config: Pick<ParallelConfig, 'tp' | 'cp' | 'pp'>, dp: number): number => dp * config.tp * config.cp * config.pp;

/** The least hourly price of `gpus` GPUs of the scenario's sites at `gpuHourUsd`. */
export const leastUsdPerHour = (scenario: Scenario, gpuHourUsd: readonly number[], gpus: number): number =>
  cheapestGpusUsdPerHour(scenario.sites.map((site) => ({ gpus: site.gpus, gpuHourUsd: gpuHourUsd[site.index]! })), gpus);

/** Whether some placement of (config, dp) may fit the budget: its GPU count, and that many GPUs on the cheapest sites. */
export function candidateWithinBudget(scenario: Scenario, config: Pick<ParallelConfig, 'tp' | 'cp' | 'pp'>, dp: number, budget: GpuBudget | undefined): boolean {
  if (!budget) return true;
  const gpus = candidateGpus(config, dp);
  if (budget.maxGpus !== undefined && gpus > budget.maxGpus) return false;
  if (budget.maxUsdPerHour !== undefined && budget.gpuHourUsd && leastUsdPerHour(scenario, budget.gpuHourUsd, gpus) > budget.maxUsdPerHour * (1 + 1e-12)) return false;
  return true;
}

/** GPUs a laid-out plan uses at each site. */
export function usedGpusPerSite(scenario: Scenario, layout: PlanLayout): number[] {
  const used = scenario.sites.map(() => 0);
  for (const group of layout.groups) for (const site of group.stageSite) used[site]! += group.replicas * layout.plan.tp * layout.plan.cp;
  return used;
}

/** Whether a laid-out plan fits the budget. */
export function layoutWithinBudget(scenario: Scenario, layout: PlanLayout, budget: GpuBudget | undefined): boolean {
  if (!budget) return true;
  const used = usedGpusPerSite(scenario, layout);
  if (budget.maxGpus !== undefined && used.reduce((a, b) => a + b, 0) > budget.maxGpus) return false;
  if (budget.maxUsdPerHour !== undefined && budget.gpuHourUsd) {
    const usd = used.reduce((sum, gpus, s) => sum + gpus * budget.gpuHourUsd![s]!, 0);
    if (usd > budget.maxUsdPerHour * (1 + 1e-12)) return false;
  }
  return true;
}

/**
 * F15: the GPUs all choices place add up to at most the budget, sum x[l,k] sum_s gpus[l,s] <= B,
 * and their hourly price to at most the price budget, sum x[l,k] sum_s gpus[l,s] price_s <= B_usd.
 */
export function addGpuBudgetRows({ b, choices }: Columns, budget: GpuBudget | undefined): void {
  if (!budget) return;
  const gpusOf = (gpusPerSite: ReadonlyMap<number, number>, price: (site: number) => number) =>
    [...gpusPerSite].reduce((sum, [site, gpus]) => sum + gpus * price(site), 0);
  if (budget.maxGpus !== undefined) {
    b.addRow('gpu_budget', choices.map((ch) => [ch.replicasColumn, gpusOf(ch.layout.gpusPerSite, () => 1)] as const), -Infinity, budget.maxGpus);
  }
  if (budget.maxUsdPerHour !== undefined && budget.gpuHourUsd) {
    const prices = budget.gpuHourUsd;
    b.addRow('gpu_budget_usd_per_hour', choices.map((ch) => [ch.replicasColumn, gpusOf(ch.layout.gpusPerSite, (site) => prices[site]!)] as const), -Infinity, budget.maxUsdPerHour);
  }
}
