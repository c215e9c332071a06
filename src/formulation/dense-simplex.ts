/**
 * A dense primal simplex for the small linear programs of the closed-form bounds (a few rows, up
 * to a few hundred columns): maximise c.x subject to A x <= b, x >= 0, with b >= 0, so the slack
 * basis is a feasible start and no phase one is needed. Bland's rule (least index enters, least
 * index leaves among ties) cannot cycle on the degenerate bases that integer data gives.
 *
 * Callers use it to find dual prices, not to prove anything: a bound built on it must check its
 * own certificate (weak duality) in plain arithmetic, so a wrong answer here can only weaken a
 * bound, never make it false (see layout-capacity-bound.ts).
 */

export interface DenseLpSolution {
  /** 'optimal'; 'unbounded' when some column improves the objective without limit; 'pivot-limit' when `maxPivots` ran out first (x and duals are then those of the last basis). */
  readonly status: 'optimal' | 'unbounded' | 'pivot-limit';
  readonly objective: number;
  readonly x: Float64Array;
  /** Dual price of each row (>= 0): the objective's rise per unit of that row's right-hand side. */
  readonly duals: Float64Array;
}

const EPSILON = 1e-9;

/**
 * Maximises `objective . x` subject to `rows[i] . x <= rhs[i]` (rhs >= 0) and x >= 0.
 * `rows` are dense, one entry per column. `maxPivots` guards against numerical stalls.
 */
export function maximizeDenseLp(objective: readonly number[], rows: readonly (readonly number[])[], rhs: readonly number[], maxPivots = 10_000): DenseLpSolution {
  const m = rows.length;
  const n = objective.length;
  if (rhs.some((value) => !(value >= 0))) throw new RangeError('maximizeDenseLp: every right-hand side must be >= 0');
  const width = n + m + 1; // structural columns, slacks, right-hand side
  const tableau = new Float64Array((m + 1) * width);
  for (let i = 0; i < m; i++) {
    const row = rows[i]!;
    if (row.length !== n) throw new RangeError(`maximizeDenseLp: row ${i} has ${row.length} entries, expected ${n}`);
    for (let j = 0; j < n; j++) tableau[i * width + j] = row[j]!;
    tableau[i * width + n + i] = 1;
    tableau[i * width + width - 1] = rhs[i]!;
  }
  // Objective row: reduced costs z_j - c_j (negative = improving), value in the last cell.
  const obj = m * width;
  for (let j = 0; j < n; j++) tableau[obj + j] = -objective[j]!;
  const basis = Array.from({ length: m }, (_, i) => n + i);
  // Reduced costs are compared at the objective's own scale (large penalties must not pivot on rounding noise).
  const costTolerance = EPSILON * Math.max(1, ...objective.map(Math.abs));
  let status: DenseLpSolution['status'] = 'pivot-limit';
  for (let pivots = 0; pivots <= maxPivots; pivots++) {
    let entering = -1;
    for (let j = 0; j < n + m; j++) {
      if (tableau[obj + j]! < -costTolerance) { entering = j; break; }
    }
    if (entering < 0) { status = 'optimal'; break; }
    if (pivots === maxPivots) break;
    let bestRatio = Infinity;
    for (let i = 0; i < m; i++) {
      const a = tableau[i * width + entering]!;
      if (a > EPSILON) bestRatio = Math.min(bestRatio, tableau[i * width + width - 1]! / a);
    }
    // Among the rows that tie for the least ratio, the one whose basic column has the least index.
    let leaving = -1;
    for (let i = 0; i < m; i++) {
      const a = tableau[i * width + entering]!;
      if (a <= EPSILON || tableau[i * width + width - 1]! / a > bestRatio + EPSILON * Math.max(1, bestRatio)) continue;
      if (leaving < 0 || basis[i]! < basis[leaving]!) leaving = i;
    }
    if (leaving < 0) { status = 'unbounded'; break; }
    pivot(tableau, width, m + 1, leaving, entering);
    basis[leaving] = entering;
  }
  const x = new Float64Array(n);
  for (let i = 0; i < m; i++) if (basis[i]! < n) x[basis[i]!] = tableau[i * width + width - 1]!;
  const duals = new Float64Array(m);
  for (let i = 0; i < m; i++) duals[i] = Math.max(0, tableau[obj + n + i]!);
  return { status, objective: tableau[obj + width - 1]!, x, duals };
}

/** Gauss-Jordan pivot on (row, column). */
function pivot(tableau: Float64Array, width: number, height: number, row: number, column: number): void {
  const base = row * width;
  const scale = 1 / tableau[base + column]!;
  for (let j = 0; j < width; j++) tableau[base + j] = tableau[base + j]! * scale;
  tableau[base + column] = 1;
  for (let i = 0; i < height; i++) {
    if (i === row) continue;
    const other = i * width;
    const factor = tableau[other + column]!;
    if (factor === 0) continue;
    for (let j = 0; j < width; j++) tableau[other + j] = tableau[other + j]! - factor * tableau[base + j]!;
    tableau[other + column] = 0;
  }
}
