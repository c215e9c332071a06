/**
 * The contract between the planner and a MIP solver backend. Backends are passed in, so tests
 * can inject faulty ones; every answer is checked against the MIP before it is trusted.
 */
import { maxViolation, objectiveOf, type Mip } from '../formulation/mip';

export interface MipSolveOptions {
  /** Wall-clock limit for this solve, seconds. */
  readonly timeLimitS: number;
  /** Stop when (incumbent - bound) / incumbent is at most this. */
  readonly relativeGap: number;
  /** The caller no longer needs a solution once the dual bound reaches this. */
  readonly stopWhenBoundAtLeast?: number;
  /** Called with the incumbent objective and dual bound as the search goes (HiGHS callbacks). */
  readonly onProgress?: (progress: { readonly incumbent: number; readonly bound: number }) => void;
  /**
   * Solutions whose objective is not below this are of no use to the caller (they cannot beat its
   * incumbent): the solver may discard them, answers 'infeasible' when none below it exists, and
   * its dual bound then claims nothing past the cutoff.
   */
  readonly objectiveCutoff?: number;
  /**
   * The caller has what it came for once it holds a solution whose objective is at most this:
   * the solver may stop there and answer 'feasible' with it (HiGHS `objective_target`).
   */
  readonly objectiveTarget?: number;
  /** Seed of the solver's randomised choices (HiGHS `random_seed`); another seed takes another path. */
  readonly randomSeed?: number;
  /** Once aborted, the solver stops at its next chance and answers with what it has (still checked). */
  readonly abort?: AbortSignal;
}

/**
 * What a backend found. `dualBound` is a proven lower bound on the MIP optimum (-Infinity if none).
 * With an objective cutoff, 'infeasible' means no solution below the cutoff, and `dualBound` is a
 * lower bound on the least of the optimum and the cutoff.
 */
export interface MipSolution {
  readonly status: 'optimal' | 'feasible' | 'infeasible' | 'no-solution';
  readonly values?: readonly number[];
  readonly objective?: number;
  readonly dualBound: number;
  /** Whether dualBound comes from the solver's own proof (false for backends without one). */
  readonly boundProven: boolean;
}

export interface MipBackend {
  readonly name: string;
  solve(mip: Mip, options: MipSolveOptions): Promise<MipSolution>;
  /** Releases workers or memory. */
  close(): Promise<void>;
}

/** Thrown when a backend's answer fails the independent check; the planner falls back. */
export class BackendFault extends Error {
  constructor(backend: string, reason: string) {
    super(`${backend}: ${reason}`);
    this.name = 'BackendFault';
  }
}

/**
 * Checks a backend's answer against the MIP itself: values within bounds, integral and
 * satisfying every row, objective as claimed, bound not above the objective.
 */
export function checkSolution(backend: string, mip: Mip, solution: MipSolution): MipSolution {
  if (solution.status === 'infeasible' || solution.status === 'no-solution') {
    if (!(solution.dualBound <= Infinity) || Number.isNaN(solution.dualBound)) throw new BackendFault(backend, 'bound is not a number');
    return solution;
  }
  const values = solution.values;
  if (!values || values.length !== mip.columns.length) throw new BackendFault(backend, `returned ${values?.length ?? 0} values for ${mip.columns.length} columns`);
  const violation = maxViolation(mip, values);
  if (!(violation <= 1e-6)) throw new BackendFault(backend, `solution violates the model by ${violation}`);
  const objective = objectiveOf(mip, values);
  if (solution.objective !== undefined && Math.abs(objective - solution.objective) > 1e-6 * Math.max(1, Math.abs(objective))) {
    throw new BackendFault(backend, `claimed objective ${solution.objective}, values give ${objective}`);
  }
  if (solution.dualBound > objective * (1 + 1e-9) + 1e-9) throw new BackendFault(backend, `bound ${solution.dualBound} above objective ${objective}`);
  return { ...solution, objective };
}
