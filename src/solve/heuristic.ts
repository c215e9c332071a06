/**
 * The last fallback and the planner's first incumbent: a greedy placement for one
 * (configuration, dp) pair. Uniform microbatches, whole replicas on the sites with the fastest
 * pipeline first; then, if sites alone cannot hold dp replicas, split replicas over linked sites.
 */
import type { ConfigCoefficients, LayoutCoefficients } from '../formulation/coefficients';
import type { Scenario } from '../model/scenario';

export interface GreedyGroup {
  readonly layout: LayoutCoefficients;
  readonly microbatches: number;
  readonly replicas: number;
}

export function greedyPlacement(scenario: Scenario, c: ConfigCoefficients): GreedyGroup[] | undefined {
  if (c.totalMicrobatches % c.dp !== 0) return undefined;
  const k = c.totalMicrobatches / c.dp;
  const free = scenario.sites.map((s) => s.gpus);
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.includes(k))
    .sort((a, b) => (a.crossings - b.crossings) || (k * a.maxStepS + a.bubbleS) - (k * b.maxStepS + b.bubbleS));
  const groups: GreedyGroup[] = [];
  let left = c.dp;
  for (const layout of usable) {
    if (left === 0) break;
    let fit = left;
    for (const [site, gpus] of layout.gpusPerSite) fit = Math.min(fit, Math.floor(free[site]! / gpus));
    if (fit < 1) continue;
    for (const [site, gpus] of layout.gpusPerSite) free[site]! -= fit * gpus;
    groups.push({ layout, microbatches: k, replicas: fit });
    left -= fit;
  }
  return left === 0 ? groups : undefined;
}
