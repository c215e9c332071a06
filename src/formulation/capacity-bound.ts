/**
 * The capacity bound (docs/formulation.md §4, step 3(b)): by time T each layout's replicas run at
 * most so many microbatches, and the sites' GPUs, filled fastest first, must carry the batch. Its
 * per-layout fixed times and the batch check are shared with the layout capacity bound (step 3(e),
 * layout-capacity-bound.ts).
 */
import type { ConfigCoefficients } from './coefficients';
import { exposureOf } from './stage-classes';
import { fillLatencyOf, stageLinesOf } from './stage-floor-coefficients';
import { replicaSurplusS } from './link-step-surplus';

/**
 * Every replica runs at least the fewest microbatches any layout fits (the interleaved schedule
 * needs pp of them): true when dp replicas of that many exceed the batch, so no placement covers it.
 */
export function batchTooSmallForReplicas(c: ConfigCoefficients): boolean {
  return c.dp * Math.min(...c.layouts.flatMap((l) => l.fittingMicrobatches)) > c.totalMicrobatches;
}

/**
 * The least time of a replica of each layout beside its k microbatch steps: bubble, fill/drain
 * latencies (for 1F1B and ZB-H1 eq. 5.9a's: the crossings before the slowest stage), optimizer, and its own exposed gradient sync (F11b: at least the spread in-site ring
 * less what its layout's compute windows hide).
 */
export function replicaFixedS(c: ConfigCoefficients): number[] {
  return c.layouts.map((l) => l.bubbleS + fillLatencyOf(l) + c.optimizerS + ownExposureS(c, l));
}

const ownExposureS = (c: ConfigCoefficients, l: ConfigCoefficients['layouts'][number]): number =>
  Math.max(0, ...c.stages.map((_, j) => exposureOf(c, c.intraSyncSpreadS[j]!, l.backwardWindowS[j]!, l.forwardWindowS[j]!)));

/**
 * The least finish time of a replica of layout i with k microbatches: k x its slowest step, ZB-H1's
 * short-pipeline gaps and the fixed time above; for 1F1B and ZB-H1 at least its largest stage line
 * (eq. 5.9a, stageLinesOf) plus the optimizer and its own exposure; with a link-step surplus
 * (eq. 2.1), each link step it waits at least that surplus (replicaSurplusS). Non-decreasing in k.
 */
export function replicaFinishS(c: ConfigCoefficients): (i: number, k: number) => number {
  const fixedS = replicaFixedS(c);
  const tailS = c.layouts.map((l) => (l.stageFloor ? c.optimizerS + ownExposureS(c, l) : 0));
  // The links' least steps (eq. 2.1): in a space with the default network settings, every crossing waits at least its link's surplus.
  const surplus = c.layouts.map((l) => replicaSurplusS(c, l));
  return (i, k) => {
    const l = c.layouts[i]!;
    const { fillS, stepS } = surplus[i]!;
    const finishS = k * Math.max(l.maxStepS, l.stageFloor ? 0 : stepS) + Math.max(0, c.config.pp - k) * l.shortPipelineGapS + fixedS[i]! + fillS;
    if (!l.stageFloor) return finishS;
    // Eq. 5.9b at the least step: (k + 1) steps plus the chain and every crossing's latency twice.
    const linkLineS = stepS > 0 ? (k + 1) * stepS + l.stageFloor.linkRowFixedS + tailS[i]! : 0;
    return Math.max(finishS, stageLinesOf(l, k) + tailS[i]!, linkLineS);
  };
}

/**
 * Capacity bound (docs/formulation.md §4, step 3(b)): if every replica finishes by T, a replica
 * with layout l runs at most kmax_l(T) microbatches (the largest fitting k with k x slowest step + bubble +
 * fill latency + optimizer <= T). Spreading each replica's microbatches over its GPUs, a GPU at
 * site s carries at most v_s(T) = max over layouts touching s of kmax_l(T) / (GPUs per replica),
 * so dp replicas carry at most the fractional knapsack of the sites' GPUs by v_s. The least
 * breakpoint T at which that reaches M bounds every placement's iteration time. Infinity when no
 * placement covers M exactly: every replica runs at least its layout's fewest fitting microbatches.
 *
 * `enoughS`: a bound of at least this is all the caller needs (the refine phase prunes there,
 * docs/formulation.md §4 step 3). When the GPUs cannot carry M by `enoughS`, no placement is done
 * by it: its slowest replica's finish time, a breakpoint, is above it, so the least finish time
 * above `enoughS` bounds every placement. That takes one evaluation of carried(T), not the
 * breakpoints' search. Below `enoughS` the bound is the same as without it.
 */
export function capacityLowerBound(c: ConfigCoefficients, siteGpus: readonly number[], enoughS = Infinity): number {
  if (batchTooSmallForReplicas(c)) return Infinity;
  const gpusPerReplica = c.config.tp * c.config.cp * c.config.pp;
  const finishS = replicaFinishS(c);
  // Scratch arrays reused by every evaluation of carried(T).
  const perGpu = siteGpus.map(() => 0);
  const byValue = siteGpus.map((_, s) => s);
  // The least finish time past the last T carried() tried (up to its rounding).
  let aboveS = Infinity;
  const carried = (T: number): number => {
    perGpu.fill(0);
    aboveS = Infinity;
    c.layouts.forEach((l, i) => {
      // The largest fitting k done by T (k x step + fixed time grows with k, and k ascends).
      let kmax = 0;
      for (const k of l.fittingMicrobatches) {
        const doneS = finishS(i, k);
        if (doneS > T * (1 + 1e-12)) { aboveS = Math.min(aboveS, doneS); break; }
        kmax = Math.max(kmax, k);
      }
      if (kmax === 0) return;
      for (const site of l.gpusPerSite.keys()) perGpu[site] = Math.max(perGpu[site]!, kmax / gpusPerReplica);
    });
    // Sites by carried microbatches per GPU, most first (stable: ties keep site order).
    for (let s = 0; s < byValue.length; s++) byValue[s] = s;
    byValue.sort((a, b) => perGpu[b]! - perGpu[a]!);
    let gpusLeft = c.dp * gpusPerReplica;
    let total = 0;
    for (const site of byValue) {
      const used = Math.min(gpusLeft, siteGpus[site]!);
      total += used * perGpu[site]!;
      gpusLeft -= used;
    }
    return total;
  };
  const covers = (T: number) => carried(T) >= c.totalMicrobatches * (1 - 1e-12);
  if (enoughS < Infinity && !covers(enoughS)) return aboveS;
  const finishTimesS: number[] = [];
  c.layouts.forEach((l, i) => { for (const k of l.fittingMicrobatches) finishTimesS.push(finishS(i, k)); });
  const breakpoints = ascendingDistinct(finishTimesS);
  let lo = 0;
  let hi = breakpoints.length - 1;
  if (hi < 0 || !covers(breakpoints[hi]!)) return Infinity;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (covers(breakpoints[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return breakpoints[lo]!;
}

/**
 * The least of the ascending `breakpoints` above `levelS` (Infinity when none is): when no
 * placement is done by `levelS`, its time is at least its slowest replica's finish time, one of
 * the breakpoints, and above `levelS`.
 */
export function leastAbove(breakpoints: readonly number[], levelS: number): number {
  for (const t of breakpoints) if (t > levelS) return t;
  return Infinity;
}

/** The distinct values, ascending (a numeric typed-array sort, then adjacent duplicates dropped). */
export function ascendingDistinct(values: readonly number[]): number[] {
  const sorted = Float64Array.from(values).sort();
  const out: number[] = [];
  for (const value of sorted) if (out.length === 0 || value !== out[out.length - 1]) out.push(value);
  return out;
}
