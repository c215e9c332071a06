/**
 * javascript-lp-solver as the second fallback, for MIPs small enough for it (it degrades to
 * returning fractional LP answers past a few hundred binaries). It proves no bound; its answer
 * is accepted only when integral and feasible under the independent check.
 */
import { lpSolver } from '../formulation/lp-solver';
import type { Mip } from '../formulation/mip';
import { BackendFault, type MipBackend, type MipSolution, type MipSolveOptions } from './mip-backend';

/** Integer columns above which the backend refuses a model. */
export const LP_SOLVER_MAX_INTEGERS = 150;

export class LpSolverBackend implements MipBackend {
  readonly name = 'javascript-lp-solver';

  async solve(mip: Mip, options: MipSolveOptions): Promise<MipSolution> {
    const integers = mip.columns.filter((c) => c.integer).length;
    if (integers > LP_SOLVER_MAX_INTEGERS) throw new BackendFault(this.name, `${integers} integer columns exceed its limit of ${LP_SOLVER_MAX_INTEGERS}`);
    const constraints: Record<string, { min?: number; max?: number; equal?: number }> = {};
    const variables: Record<string, Record<string, number>> = {};
    const ints: Record<string, 1> = {};
    const key = (i: number) => `c${i}`;
    mip.columns.forEach((column, i) => {
      variables[key(i)] = { objective: column.cost };
      if (column.integer) ints[key(i)] = 1;
      constraints[`lo${i}`] = { min: column.lower };
      if (Number.isFinite(column.upper)) constraints[`up${i}`] = { max: column.upper };
      variables[key(i)]![`lo${i}`] = 1;
      if (Number.isFinite(column.upper)) variables[key(i)]![`up${i}`] = 1;
    });
    mip.rows.forEach((row, r) => {
      const bounds: { min?: number; max?: number; equal?: number } = {};
      if (row.lower === row.upper) bounds.equal = row.lower;
      else {
        if (Number.isFinite(row.lower)) bounds.min = row.lower;
        if (Number.isFinite(row.upper)) bounds.max = row.upper;
      }
      constraints[`r${r}`] = bounds;
      row.columns.forEach((c, k) => { variables[key(c)]![`r${r}`] = row.coefficients[k]!; });
    });
    const result = lpSolver.Solve({
      optimize: 'objective', opType: 'min', constraints, variables, ints,
      options: { timeout: Math.max(10, options.timeLimitS * 1000), tolerance: 0 },
    });
    if (!result['feasible']) return { status: 'no-solution', dualBound: -Infinity, boundProven: false };
    if (result['isIntegral'] !== true) throw new BackendFault(this.name, 'answer is not integral (LP relaxation returned on timeout)');
    const values = mip.columns.map((_, i) => Number(result[key(i)] ?? 0));
    return { status: 'feasible', values, dualBound: -Infinity, boundProven: false };
  }

  async close(): Promise<void> {
    // Nothing to release.
  }
}
