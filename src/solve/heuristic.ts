/**
 * The last fallback and the planner's first incumbent: a greedy placement for one
 * (configuration, dp) pair. Whole replicas on the sites with the fastest pipeline first; then, if
 * sites alone cannot hold dp replicas, split replicas over linked sites. Microbatches are shared
 * by speed: every replica gets as many as it can finish by a common time T, the least T at which
 * they cover the batch, and the slowest give one back until the count is exact (heterogeneous
 * GPUs get uneven shares; measured on the 3-site bench row, the first incumbent went from
 * 6.83 s per iteration with equal shares to 2.99 s, and the refine phase from 1,504 candidates
 * to 660).
 */
import type { ConfigCoefficients, LayoutCoefficients } from '../formulation/coefficients';
import type { Scenario } from '../model/scenario';

export interface GreedyGroup {
  readonly layout: LayoutCoefficients;
  readonly microbatches: number;
  readonly replicas: number;
}

export function greedyPlacement(scenario: Scenario, c: ConfigCoefficients): GreedyGroup[] | undefined {
  const free = scenario.sites.map((s) => s.gpus);
  // Time of one replica of layout l running k microbatches, as far as the greedy cares.
  const finishS = (l: LayoutCoefficients, k: number) => k * l.maxStepS + l.bubbleS;
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.length > 0)
    .sort((a, b) => (a.crossings - b.crossings) || a.maxStepS - b.maxStepS || a.bubbleS - b.bubbleS);
  const placed: { layout: LayoutCoefficients; replicas: number }[] = [];
  let left = c.dp;
  for (const layout of usable) {
    if (left === 0) break;
    let fit = left;
    for (const [site, gpus] of layout.gpusPerSite) fit = Math.min(fit, Math.floor(free[site]! / gpus));
    if (fit < 1) continue;
    for (const [site, gpus] of layout.gpusPerSite) free[site]! -= fit * gpus;
    placed.push({ layout, replicas: fit });
    left -= fit;
  }
  if (left > 0) return undefined;
  return shareMicrobatches(placed, c.totalMicrobatches, finishS);
}

/**
 * Microbatches per replica for `placed` so that they sum to `total` and the slowest finishes as
 * early as the greedy can make it; undefined if some replica would get none or memory allows no share.
 */
function shareMicrobatches(
  placed: readonly { layout: LayoutCoefficients; replicas: number }[],
  total: number,
  finishS: (l: LayoutCoefficients, k: number) => number,
): GreedyGroup[] | undefined {
  // The most microbatches each layout can run by T (0 if none fits).
  const most = (l: LayoutCoefficients, T: number) => {
    let k = 0;
    for (const m of l.fittingMicrobatches) if (finishS(l, m) <= T * (1 + 1e-12)) k = Math.max(k, m);
    return k;
  };
  const carried = (T: number) => placed.reduce((sum, p) => {
    const k = most(p.layout, T);
    return k === 0 ? -Infinity : sum + p.replicas * k;
  }, 0);
  const times = [...new Set(placed.flatMap((p) => p.layout.fittingMicrobatches.map((k) => finishS(p.layout, k))))].sort((a, b) => a - b);
  // The least breakpoint T at which the replicas carry the batch (carried grows with T).
  let lo = 0;
  let hi = times.length - 1;
  if (hi < 0 || carried(times[hi]!) < total) return undefined;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (carried(times[mid]!) >= total) hi = mid;
    else lo = mid + 1;
  }
  const T = times[lo]!;
  const groups = placed.map((p) => ({ layout: p.layout, microbatches: most(p.layout, T), replicas: p.replicas }));
  // Give back the excess, slowest finishers first, one microbatch per replica at a time.
  let excess = groups.reduce((sum, g) => sum + g.replicas * g.microbatches, 0) - total;
  while (excess > 0) {
    const order = groups.map((g, i) => i)
      .filter((i) => groups[i]!.replicas > 0 && groups[i]!.layout.fittingMicrobatches.includes(groups[i]!.microbatches - 1))
      .sort((a, b) => finishS(groups[b]!.layout, groups[b]!.microbatches) - finishS(groups[a]!.layout, groups[a]!.microbatches));
    if (order.length === 0) return undefined;
    const g = groups[order[0]!]!;
    const back = Math.min(g.replicas, excess);
    g.replicas -= back;
    const same = groups.find((x) => x.layout === g.layout && x.microbatches === g.microbatches - 1);
    if (same) same.replicas += back;
    else groups.push({ layout: g.layout, microbatches: g.microbatches - 1, replicas: back });
    excess -= back;
  }
  return groups.filter((g) => g.replicas > 0);
}
