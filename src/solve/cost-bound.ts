/**
 * The proven lower bound on the cost per iteration of every plan within the limits
 * (docs/formulation.md §10, eq. 10.1-10.2). Pure.
 *
 * A plan P of candidate c (which holds g_c GPUs wherever it is placed) whose GPUs cost R per hour
 * lies in one price interval (B_{i-1}, B_i] of the budgets searched (B_0 = 0); then
 * - its time is at least T_i, the largest proven time bound of the budgets at or above B_i (P is
 *   within each of them), and at least c's quick bound q_c (valid for every placement of c);
 * - R > B_{i-1}, and R >= the cheapest g_c GPUs of the cluster (R is a price of g_c GPUs);
 * - R <= B_i and R <= the dearest g_c GPUs, so c can be in interval i only when the cheapest
 *   g_c GPUs cost at most B_i and the dearest more than B_{i-1};
 * so its cost per iteration, R x T / 3600 plus egress (>= 0), is at least
 * max(B_{i-1}, cheapest(g_c)) x max(T_i, q_c) / 3600. The least of that over the compatible
 * (c, i) bounds every plan; an interval with T_i past the required time holds no plan that fits,
 * nor does a candidate with q_c past it.
 */

/** What the bound needs of a candidate: the price range of its GPUs and its quick time bound. */
export interface CandidatePrice {
  readonly cheapestUsdPerHour: number;
  readonly dearestUsdPerHour: number;
  readonly lowerBoundS: number;
}

export interface CostLowerBound {
  /** Every plan within the limits costs at least this per iteration (Infinity: none fits). */
  readonly usdPerIteration: number;
  /** The price interval holding the bound, when it is wide enough to be worth splitting. */
  readonly splittable?: { readonly lo: number; readonly hi: number };
}

/** Narrower than this ratio, an interval is not split again: what is left of the gap is the time bounds'. */
const SPLIT_RATIO = 1.0025;

/** Eq. 10.2 over the budgets searched (hourly price -> proven time bound within it) and the candidates. */
export function costLowerBound(budgets: ReadonlyMap<number, { readonly lowerBoundS: number }>, candidates: readonly CandidatePrice[], requiredS: number): CostLowerBound {
  const sorted = [...budgets.keys()].sort((a, b) => a - b);
  let best: CostLowerBound = { usdPerIteration: Infinity };
  let timeBoundS = -Infinity;
  for (let i = sorted.length - 1; i >= 0; i--) {
    const hi = sorted[i]!;
    const below = i > 0 ? sorted[i - 1]! : 0;
    timeBoundS = Math.max(timeBoundS, budgets.get(hi)!.lowerBoundS);
    if (timeBoundS > requiredS) continue;
    let least = Infinity;
    let lo = Infinity;
    for (const c of candidates) {
      if (c.cheapestUsdPerHour > hi || c.dearestUsdPerHour <= below || c.lowerBoundS > requiredS) continue;
      const price = Math.max(below, c.cheapestUsdPerHour);
      const usd = (price * Math.max(0, timeBoundS, c.lowerBoundS)) / 3600;
      if (usd < least) least = usd;
      lo = Math.min(lo, price);
    }
    if (least < best.usdPerIteration) best = { usdPerIteration: least, ...(hi > lo * SPLIT_RATIO ? { splittable: { lo, hi } } : {}) };
  }
  return best;
}
