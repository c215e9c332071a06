/**
 * The last fallback and the planner's first incumbent: a greedy placement for one
 * (configuration, dp) pair. Whole replicas on the sites with the fastest pipeline first; then, if
 * sites alone cannot hold dp replicas, split replicas over linked sites. Microbatches are shared
 * by speed: every replica gets as many as it can finish by a common time T, the least T at which
 * they cover the batch, and the slowest step down to smaller fitting counts until the count is
 * exact (heterogeneous GPUs get uneven shares; measured on the 3-site bench row, the first
 * incumbent went from 6.83 s per iteration with equal shares to 2.99 s, and the refine phase from
 * 1,504 candidates to 660). When the steps cannot hit the batch exactly (fitting counts are
 * divisors of it, so steps are coarse), equal shares M / dp as before, if they divide and fit.
 */
import type { ConfigCoefficients, LayoutCoefficients, LayoutGroup } from '../formulation/coefficients';
import type { Scenario } from '../model/scenario';

export function greedyPlacement(scenario: Scenario, c: ConfigCoefficients): LayoutGroup[] | undefined {
  return speedSharedPlacement(scenario, c) ?? equalSharePlacement(scenario, c);
}

/**
 * A second greedy start: whole replicas on as few sites as hold them, the sites with the most
 * GPUs first (fastest pipeline among equals), microbatches shared by speed. Where the gradient
 * sync across sites costs more than the compute of the GPUs left idle (a 141B MoE on three B200
 * sites of 2,048, 12,288 and 2,048 GPUs linked at 400 Gb/s: 0.87 s per iteration on the large site
 * alone, 2.14 s from the fastest-first start spread over two sites), it is the better start.
 * Undefined when it would place the same replicas as {@link greedyPlacement} or cannot place dp.
 */
export function concentratedPlacement(scenario: Scenario, c: ConfigCoefficients): LayoutGroup[] | undefined {
  const wholeSiteGpus = (l: LayoutCoefficients) => (l.crossings === 0 ? scenario.sites[l.layout.stageSite[0]!]!.gpus : 0);
  const usable = usableLayouts(c).sort((a, b) => (a.crossings - b.crossings) || wholeSiteGpus(b) - wholeSiteGpus(a) || fasterPipeline(a, b));
  const placed = placeReplicas(scenario, c, usable);
  if (!placed) return undefined;
  // Whole replicas on every site: no site was left out, nothing to gain over the fastest-first start.
  if (placed.every((p) => p.layout.crossings === 0) && new Set(placed.map((p) => p.layout.layout.stageSite[0]!)).size === scenario.sites.length) return undefined;
  const fastestFirst = placeReplicas(scenario, c, usableLayouts(c).sort(fasterPipeline));
  if (fastestFirst && fastestFirst.length === placed.length && fastestFirst.every((p, i) => p.layout === placed[i]!.layout && p.replicas === placed[i]!.replicas)) return undefined;
  return shareMicrobatches(placed, c.totalMicrobatches, (l, k) => k * l.maxStepS + l.bubbleS);
}

/** Layouts that fit some microbatch count in memory (a fresh array, for sorting). */
const usableLayouts = (c: ConfigCoefficients): LayoutCoefficients[] => c.layouts.filter((l) => l.fittingMicrobatches.length > 0);

/** The greedy's order: fewest crossings, then the fastest pipeline (slowest stage, then bubble). */
const fasterPipeline = (a: LayoutCoefficients, b: LayoutCoefficients): number => (a.crossings - b.crossings) || a.maxStepS - b.maxStepS || a.bubbleS - b.bubbleS;

/** Whole replicas first, then split ones, over `layouts` in the order given, until dp are placed. */
function placeReplicas(scenario: Scenario, c: ConfigCoefficients, layouts: readonly LayoutCoefficients[]): { layout: LayoutCoefficients; replicas: number }[] | undefined {
  const free = scenario.sites.map((s) => s.gpus);
  const placed: { layout: LayoutCoefficients; replicas: number }[] = [];
  let left = c.dp;
  for (const layout of layouts) {
    if (left === 0) break;
    let fit = left;
    for (const [site, gpus] of layout.gpusPerSite) fit = Math.min(fit, Math.floor(free[site]! / gpus));
    if (fit < 1) continue;
    for (const [site, gpus] of layout.gpusPerSite) free[site]! -= fit * gpus;
    placed.push({ layout, replicas: fit });
    left -= fit;
  }
  return left === 0 ? placed : undefined;
}

/** Microbatches shared by speed (see the file's comment). */
function speedSharedPlacement(scenario: Scenario, c: ConfigCoefficients): LayoutGroup[] | undefined {
  const placed = placeReplicas(scenario, c, usableLayouts(c).sort(fasterPipeline));
  return placed && shareMicrobatches(placed, c.totalMicrobatches, (l, k) => k * l.maxStepS + l.bubbleS);
}

/** Every replica runs M / dp microbatches, on layouts that fit that many, fastest first. */
function equalSharePlacement(scenario: Scenario, c: ConfigCoefficients): LayoutGroup[] | undefined {
  if (c.totalMicrobatches % c.dp !== 0) return undefined;
  const k = c.totalMicrobatches / c.dp;
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.includes(k))
    .sort((a, b) => (a.crossings - b.crossings) || (k * a.maxStepS + a.bubbleS) - (k * b.maxStepS + b.bubbleS));
  return placeReplicas(scenario, c, usable)?.map((p) => ({ ...p, microbatches: k }));
}

/**
 * Microbatches per replica for `placed` so that they sum to `total` and the slowest finishes as
 * early as the greedy can make it; undefined if some replica would get none or memory allows no share.
 */
function shareMicrobatches(
  placed: readonly { layout: LayoutCoefficients; replicas: number }[],
  total: number,
  finishS: (l: LayoutCoefficients, k: number) => number,
): LayoutGroup[] | undefined {
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
  // Give back the excess: the slowest finishers step down to their next smaller fitting count, as
  // many replicas as the excess allows; undefined if no step fits in what is left.
  let excess = groups.reduce((sum, g) => sum + g.replicas * g.microbatches, 0) - total;
  const nextSmaller = (g: LayoutGroup) => Math.max(0, ...g.layout.fittingMicrobatches.filter((k) => k < g.microbatches));
  while (excess > 0) {
    const steps = groups
      .filter((g) => g.replicas > 0 && nextSmaller(g) > 0 && g.microbatches - nextSmaller(g) <= excess)
      .sort((a, b) => finishS(b.layout, b.microbatches) - finishS(a.layout, a.microbatches));
    const g = steps[0];
    if (!g) return undefined;
    const smaller = nextSmaller(g);
    const back = Math.min(g.replicas, Math.floor(excess / (g.microbatches - smaller)));
    g.replicas -= back;
    const same = groups.find((x) => x.layout === g.layout && x.microbatches === smaller);
    if (same) same.replicas += back;
    else groups.push({ layout: g.layout, microbatches: smaller, replicas: back });
    excess -= back * (g.microbatches - smaller);
  }
  return groups.filter((g) => g.replicas > 0);
}
