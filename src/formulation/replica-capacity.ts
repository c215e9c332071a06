/**
 * The replica capacity problem behind the layout capacity bound (layout-capacity-bound.ts): can
 * `replicas` replicas, x_j of column j (a layout at its most microbatches by some time), each
 * using gpus[j][s] GPUs at site s, fit the sites and carry `microbatches` microbatches?
 *
 *   sum_j x_j = replicas,   sum_j gpus[j][s] x_j <= siteGpus[s],   sum_j k_j x_j >= microbatches,
 *   x_j integer in [0, u_j].
 *
 * The test below answers only "ruled out" (proven) or "not ruled out" (no claim): a "ruled out"
 * rests on a certificate checked here in plain arithmetic (weak duality, below), so the dense
 * simplex that proposes the prices can only make the test weaker, never wrong. (A branch and
 * bound over integer counts on top of it was measured and dropped; the figures are in the git history of docs/benchmarks.md.)
 */
import { maximizeDenseLp } from './dense-simplex';

export interface ReplicaCapacityProblem {
  /** Microbatches one replica of column j carries. */
  readonly microbatchesPer: readonly number[];
  /** GPUs one replica of column j uses at each site (dense, one entry per site). */
  readonly gpusPer: readonly (readonly number[])[];
  readonly siteGpus: readonly number[];
  readonly replicas: number;
  readonly microbatches: number;
}

/**
 * Certificate: for GPU prices w >= 0 and any replica price u0, every x with 0 <= x <= u,
 * sum x = replicas and g x <= G has
 *   sum k x = sum (k_j - w.g_j - u0) x_j + u0 replicas + w.(g x)
 *          <= sum_j max(0, k_j - w.g_j - u0) u_j + u0 replicas + w.G.
 * The least right-hand side over u0 (convex and piecewise linear: at a breakpoint k_j - w.g_j, or
 * -Infinity when the columns cannot hold `replicas` replicas at all); below the batch, the
 * placement is ruled out.
 */
function mostMicrobatches(p: ReplicaCapacityProblem, prices: ArrayLike<number>, upper: ArrayLike<number>): number {
  const n = p.microbatchesPer.length;
  let upperSum = 0;
  for (let j = 0; j < n; j++) upperSum += upper[j]!;
  if (upperSum < p.replicas) return -Infinity;
  let gpuValue = 0;
  for (let s = 0; s < p.siteGpus.length; s++) gpuValue += prices[s]! * p.siteGpus[s]!;
  const margin = p.microbatchesPer.map((k, j) => {
    let m = k;
    const gpus = p.gpusPer[j]!;
    for (let s = 0; s < gpus.length; s++) m -= prices[s]! * gpus[s]!;
    return m;
  });
  let least = Infinity;
  for (const u0 of margin) {
    let value = u0 * p.replicas + gpuValue;
    for (let j = 0; j < n; j++) value += Math.max(0, margin[j]! - u0) * upper[j]!;
    least = Math.min(least, value);
  }
  return least;
}

/** Per-column upper bounds: the replicas, and what each site can hold of that column. */
function columnCapacities(p: ReplicaCapacityProblem): Float64Array {
  return Float64Array.from(p.gpusPer, (gpus) => {
    let most = p.replicas;
    gpus.forEach((g, s) => { if (g > 0) most = Math.min(most, Math.floor(p.siteGpus[s]! / g)); });
    return most;
  });
}

/**
 * GPU prices per site from the LP max sum (k_j + B) x_j s.t. sum x <= replicas, g x <= G,
 * x <= u: B per replica makes the count an equality wherever the GPUs allow it, so the sites'
 * prices are the original LP's. Any prices >= 0 give a valid certificate; these make it as tight
 * as the LP allows.
 */
function gpuPrices(p: ReplicaCapacityProblem, upper: ArrayLike<number>): Float64Array {
  const n = p.microbatchesPer.length;
  let mostGpus = 1;
  for (const gpus of p.gpusPer) mostGpus = Math.max(mostGpus, ...gpus);
  const penalty = (Math.max(...p.microbatchesPer) + 1) * (1 + mostGpus);
  const rows: number[][] = [p.microbatchesPer.map(() => 1), ...p.siteGpus.map((_, s) => p.gpusPer.map((gpus) => gpus[s]!))];
  const rhs: number[] = [p.replicas, ...p.siteGpus];
  for (let j = 0; j < n; j++) {
    const row = new Array<number>(n).fill(0);
    row[j] = 1;
    rows.push(row);
    rhs.push(upper[j]!);
  }
  const solution = maximizeDenseLp(p.microbatchesPer.map((k) => k + penalty), rows, rhs);
  return solution.duals.slice(1, 1 + p.siteGpus.length);
}

/** True when the LP relaxation (x real in [0, u]) proves that no placement carries the batch. */
export function lpRulesOut(p: ReplicaCapacityProblem): boolean {
  if (p.microbatchesPer.length === 0) return true;
  const upper = columnCapacities(p);
  // The batch, less a margin far above rounding error (the microbatch counts are integers).
  return mostMicrobatches(p, gpuPrices(p, upper), upper) < p.microbatches - 1e-6 * Math.max(1, p.microbatches);
}
