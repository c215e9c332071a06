/**
 * Prices in a scenario (docs/cost-model.md §8): GPU-hours per site, egress per link and
 * direction, and which GPUs a plan pays for. Pure.
 */
import { linkBytesPerIteration } from './link-traffic';
import type { Evaluation } from './evaluate';
import { layOutPlan, type PlanLayout } from './placement';
import type { Scenario } from './scenario';
import { egressUsdPerIteration, gpuUsdPerHour, iterationsForTokens, trainingCost, type TrainingCost } from './training-cost';

/** A priced scenario's prices, indexed as its sites and links. */
export interface Prices {
  readonly gpuHourUsd: readonly number[];
  /** Per GB per direction; 0 for a link without a price. */
  readonly egressUsdPerGB: readonly number[];
}

/** The scenario's prices, or undefined when it has none. */
export function pricesOf(scenario: Scenario): Prices | undefined {
  const sites = scenario.spec.cluster.sites;
  if (sites.some((site) => site.gpuHourUsd === undefined)) return undefined;
  return {
    gpuHourUsd: sites.map((site) => site.gpuHourUsd!),
    egressUsdPerGB: scenario.spec.cluster.links.map((link) => link.egressUsdPerGB ?? 0),
  };
}

/**
 * Idle GPUs are released, and not paid for, unless search.allowIdleGpus is false: then the plan
 * holds the whole cluster and pays for every GPU of every site.
 */
export const idleGpusReleased = (scenario: Scenario): boolean => scenario.search?.allowIdleGpus ?? true;

/** GPUs paid for at each site by a plan using `usedPerSite`. */
export function gpusPaidPerSite(scenario: Scenario, usedPerSite: readonly number[]): number[] {
  return idleGpusReleased(scenario) ? [...usedPerSite] : scenario.sites.map((site) => site.gpus);
}

/** The price of an evaluated plan, or undefined when the scenario has no prices. */
export function planCost(scenario: Scenario, layout: PlanLayout, evaluation: Evaluation): TrainingCost | undefined {
  const prices = pricesOf(scenario);
  if (!prices) return undefined;
  const paid = gpusPaidPerSite(scenario, evaluation.predicted.sites.map((site) => site.gpusUsed));
  const bytes = linkBytesPerIteration(scenario, layout);
  const { totalTokens, globalBatchSeqs, seqLen } = scenario.training;
  return trainingCost({
    usdPerHour: gpuUsdPerHour(paid, prices.gpuHourUsd),
    iterationTimeS: evaluation.predicted.iterationTimeS,
    egressUsdPerIteration: egressUsdPerIteration(bytes, prices.egressUsdPerGB),
    egressBytesPerIteration: bytes.reduce((sum, link) => sum + link.aToBBytes + link.bToABytes, 0),
    gpusPaid: paid.reduce((a, b) => a + b, 0),
    ...(totalTokens === undefined ? {} : { iterations: iterationsForTokens(totalTokens, globalBatchSeqs, seqLen) }),
  });
}

/** The price of a plan given as JSON (laid out here), evaluated as `evaluation`; undefined without prices. */
export function planSpecCost(scenario: Scenario, plan: unknown, evaluation: Evaluation): TrainingCost | undefined {
  return pricesOf(scenario) ? planCost(scenario, layOutPlan(scenario, plan), evaluation) : undefined;
}
