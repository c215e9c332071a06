/**
 * Layout capacity bound (docs/formulation.md §4, step 3(e)): the capacity bound of step 3(b) with
 * the replicas kept whole. By time T a replica of layout l runs at most kmax_l(T) microbatches; if
 * every replica is done by T, some x >= 0 (replicas per layout) has
 *
 *   sum_l x_l = dp,   sum_l g[l,s] x_l <= G_s for every site s,   sum_l kmax_l(T) x_l >= M,
 *
 * the placement MIP's rows F1-F3 with its integrality relaxed. Step 3(b) spreads a replica's
 * microbatches over its GPUs one by one, so a replica split between a slow and a fast site can
 * borrow the fast site's rate for its slow half; here it cannot. On the 3-site heterogeneous bench
 * row (tp 8, pp 2, 1F1B, dp 256) step 3(b) gives 2.187 s: 192 whole replicas on the two fast
 * sites carry 1,024 microbatches; but all 256 must exist, and the 64 more split across the slow
 * site take half-replicas' GPUs from the fast ones, so at most 896 microbatches are done by 2.35 s.
 *
 * Each claim "no placement is done by T" is proven by weak duality (replica-capacity.ts): for GPU
 * prices w >= 0 and any replica price u0, every such x with 0 <= x_l <= u_l (what the sites can
 * hold of layout l) has
 *   sum_l kmax_l x_l <= sum_l max(0, kmax_l - w.g_l - u0) u_l + u0 dp + w.G,
 * so that right-hand side below M rules T out. The prices come from a dense simplex
 * (dense-simplex.ts); the inequality is then checked in plain arithmetic, so an inexact LP answer
 * can only make the bound weaker, never wrong.
 */
import { ascendingDistinct, batchTooSmallForReplicas, leastAbove, replicaFinishS } from './capacity-bound';
import type { ConfigCoefficients } from './coefficients';
import { lpRulesOut } from './replica-capacity';

/**
 * The least finish-time breakpoint T at which the layout LP cannot rule out that every replica is
 * done, when it rules out the breakpoints from `atLeastS` up to there; -Infinity when it cannot
 * rule out the first breakpoint at or above `atLeastS` (no claim beyond what the caller has), and
 * Infinity when it rules out every breakpoint (no placement covers the batch). `enoughS`: a bound
 * of at least this is all the caller needs (the pruning threshold): when the LP rules out `enoughS`
 * itself, the least breakpoint above it bounds every placement (each replica of a placement done
 * by a breakpoint up to `enoughS` is done by `enoughS`, which the LP's certificate rules out), one
 * LP instead of the search. Below `enoughS` the bound is the same as without it.
 */
export function layoutCapacityLowerBound(c: ConfigCoefficients, siteGpus: readonly number[], atLeastS = -Infinity, enoughS = Infinity): number {
  if (batchTooSmallForReplicas(c)) return Infinity;
  // A replica's least time with k microbatches: F6 without the link step and E, plus its own exposure.
  const finishS = replicaFinishS(c);
  const times: number[] = [];
  c.layouts.forEach((l, i) => { for (const k of l.fittingMicrobatches) times.push(finishS(i, k)); });
  const breakpoints = ascendingDistinct(times);
  // Each layout's GPUs per site, dense: the same at every T tried.
  const gpusOfLayout = c.layouts.map((l) => siteGpus.map((_, s) => l.gpusPerSite.get(s) ?? 0));
  const ruledOut = (T: number) => noPlacementDoneBy(c, siteGpus, gpusOfLayout, finishS, T);
  if (enoughS < Infinity && enoughS >= atLeastS && ruledOut(enoughS)) return leastAbove(breakpoints, enoughS);
  let lo = breakpoints.findIndex((t) => t >= atLeastS);
  if (lo < 0 || !ruledOut(breakpoints[lo]!)) return -Infinity;
  let hi = breakpoints.length - 1;
  if (ruledOut(breakpoints[hi]!)) return Infinity;
  // ruledOut(lo) and not ruledOut(hi): the first breakpoint not ruled out, after one that is.
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (ruledOut(breakpoints[mid]!)) lo = mid;
    else hi = mid;
  }
  return breakpoints[hi]!;
}

/**
 * True when no placement has every replica done by T: the LP relaxation of
 * the replica capacity problem rules it out (replica-capacity.ts). A replica finishing at T
 * counts as done.
 */
function noPlacementDoneBy(c: ConfigCoefficients, siteGpus: readonly number[], gpusOfLayout: readonly (readonly number[])[], finishS: (layout: number, k: number) => number, T: number): boolean {
  const microbatchesPer: number[] = [];
  const gpusPer: (readonly number[])[] = [];
  c.layouts.forEach((l, i) => {
    let kmax = 0;
    for (const k of l.fittingMicrobatches) if (finishS(i, k) <= T * (1 + 1e-12)) kmax = Math.max(kmax, k);
    if (kmax === 0) return;
    microbatchesPer.push(kmax);
    gpusPer.push(gpusOfLayout[i]!);
  });
  const problem = { microbatchesPer, gpusPer, siteGpus, replicas: c.dp, microbatches: c.totalMicrobatches };
  return lpRulesOut(problem);
}
