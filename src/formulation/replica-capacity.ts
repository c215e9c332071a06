/**
 * The replica capacity problem behind the layout capacity bound (layout-capacity-bound.ts): can
 * `replicas` replicas, x_j of column j (a layout at its most microbatches by some time), each
 * using gpus[j][s] GPUs at site s, fit the sites and carry `microbatches` microbatches?
 *
 *   sum_j x_j = replicas,   sum_j gpus[j][s] x_j <= siteGpus[s],   sum_j k_j x_j >= microbatches,
 *   x_j integer in [0, u_j].
 *
 * The test below answers only "ruled out" (proven) or "not ruled out" (no claim): a "ruled out"
 * rests on a certificate checked here in plain arithmetic (weak duality over a box, below), so the
 * dense simplex that proposes the prices can only make the test weaker, never wrong. (A branch
 * and bound over integer counts on top of it was measured and dropped: docs/benchmarks.md.)
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
 * Certificate over the box l <= x <= u: for GPU prices w >= 0 and any replica price u0, every
 * x in the box with sum x = replicas and g x <= G has
 *   sum k x = sum (k_j - w.g_j - u0) x_j + u0 replicas + w.(g x)
 *          <= sum_j max((k_j - w.g_j - u0) l_j, (k_j - w.g_j - u0) u_j) + u0 replicas + w.G.
 * The least right-hand side over u0 (convex and piecewise linear, so at a breakpoint, or -Infinity
 * when no box point has `replicas` replicas); below the batch, the box is ruled out.
 */
function mostMicrobatches(p: ReplicaCapacityProblem, prices: ArrayLike<number>, lower: ArrayLike<number>, upper: ArrayLike<number>): number {
  const n = p.microbatchesPer.length;
  let lowerSum = 0;
  let upperSum = 0;
  for (let j = 0; j < n; j++) { lowerSum += lower[j]!; upperSum += upper[j]!; }
  if (lowerSum > p.replicas || upperSum < p.replicas) return -Infinity;
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
    for (let j = 0; j < n; j++) {
      const r = margin[j]! - u0;
      value += r > 0 ? r * upper[j]! : r * lower[j]!;
    }
    least = Math.min(least, value);
  }
  return least;
}

/** The batch, less a margin far above rounding error (the microbatch counts are integers). */
const ruledOutBelow = (p: ReplicaCapacityProblem) => p.microbatches - 1e-6 * Math.max(1, p.microbatches);

/** Per-column upper bounds: the replicas, and what each site can hold of that column. */
export function columnCapacities(p: ReplicaCapacityProblem): Float64Array {
  return Float64Array.from(p.gpusPer, (gpus) => {
    let most = p.replicas;
    gpus.forEach((g, s) => { if (g > 0) most = Math.min(most, Math.floor(p.siteGpus[s]! / g)); });
    return most;
  });
}

interface BoxLp {
  /** LP optimum of the replicas in the box (x, not x - lower). */
  readonly x: Float64Array;
  /** GPU prices per site. */
  readonly prices: Float64Array;
}

/**
 * The LP over the box: max sum (k_j + B) x_j with sum x <= replicas (B per replica makes the
 * count an equality wherever the box allows it), g x <= G, l <= x <= u; shifted by l so that the
 * slack basis is feasible. Undefined when l alone breaks a row (the box is empty: ruled out).
 */
function solveBoxLp(p: ReplicaCapacityProblem, lower: ArrayLike<number>, upper: ArrayLike<number>): BoxLp | undefined {
  const n = p.microbatchesPer.length;
  const sites = p.siteGpus.length;
  let replicasLeft = p.replicas;
  const gpusLeft = p.siteGpus.slice();
  for (let j = 0; j < n; j++) {
    replicasLeft -= lower[j]!;
    for (let s = 0; s < sites; s++) gpusLeft[s]! -= p.gpusPer[j]![s]! * lower[j]!;
  }
  if (replicasLeft < 0 || gpusLeft.some((g) => g < 0)) return undefined;
  let mostGpus = 1;
  for (const gpus of p.gpusPer) mostGpus = Math.max(mostGpus, ...gpus);
  const penalty = (Math.max(...p.microbatchesPer) + 1) * (1 + mostGpus);
  const objective = p.microbatchesPer.map((k) => k + penalty);
  const rows: number[][] = [p.microbatchesPer.map(() => 1)];
  const rhs: number[] = [replicasLeft];
  for (let s = 0; s < sites; s++) { rows.push(p.gpusPer.map((gpus) => gpus[s]!)); rhs.push(gpusLeft[s]!); }
  for (let j = 0; j < n; j++) {
    const row = new Array<number>(n).fill(0);
    row[j] = 1;
    rows.push(row);
    rhs.push(upper[j]! - lower[j]!);
  }
  const solution = maximizeDenseLp(objective, rows, rhs);
  const x = Float64Array.from(solution.x, (v, j) => v + lower[j]!);
  return { x, prices: solution.duals.slice(1, 1 + sites) };
}

/** True when the LP relaxation (x real in [0, u]) proves that no placement carries the batch. */
export function lpRulesOut(p: ReplicaCapacityProblem): boolean {
  if (p.microbatchesPer.length === 0) return true;
  const lower = new Float64Array(p.microbatchesPer.length);
  const upper = columnCapacities(p);
  const lp = solveBoxLp(p, lower, upper);
  return lp === undefined || mostMicrobatches(p, lp.prices, lower, upper) < ruledOutBelow(p);
}
