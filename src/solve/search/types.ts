/** The search's contract (src/solve/search.ts): what a caller gives it and what it returns. */
import type { IntegerFeasibility } from '../../formulation/hosting-integrality';
import type { GpuBudget } from '../../formulation/gpu-budget';
import type { SpaceRestriction } from '../../formulation/search-space';
import type { Evaluation } from '../../model/evaluate';
import type { PlanSpec } from '../../model/plan-schema';
import type { MipBackend } from '../mip-backend';
import type { Bound, SolverReport } from '../plan-result';

export interface SearchOptions {
  readonly timeLimitS: number;
  readonly gap: number;
  /** Tried in order for every MIP; the first that answers (and passes the check) wins. */
  readonly backends: readonly MipBackend[];
  /**
   * More first-choice backends (each with the same fallbacks after it): candidates' MIPs are
   * solved on all of them at once, one each (default none: one at a time).
   */
  readonly concurrentBackends?: readonly MipBackend[];
  readonly restriction: SpaceRestriction;
  /** Seconds a backend may overrun its time limit before the planner abandons it (default 5). */
  readonly backendGraceS?: number;
  /** Candidates the greedy heuristic seeds the incumbent from (default 20). */
  readonly heuristicSeeds?: number;
  /** Feasibility mode: stop at the first plan that fits (diagnosis re-solves). */
  readonly stopAtFirstFit?: boolean;
  /** Plans to consider first (ignored unless they lie in the restricted space). */
  readonly seedPlans?: readonly PlanSpec[];
  /**
   * The baselines of `plan`: the iteration time of the plan they are compared with, s. The search
   * then also stops once the share of time that plan saves against the best plan of this space,
   * 1 - oursS / best, is proven to within the target gap (docs/formulation.md §4, step 8): a
   * candidate is pruned at incumbent / (1 + gap x incumbent / oursS) too. The bound and gap
   * returned are what was proven, as always.
   */
  readonly comparedWithS?: number;
  /**
   * Answers the ring-pattern bound's whole-replica integer programs (docs/formulation.md §4 step
   * 3(d), condition (iv)); without it the bound relaxes whole replicas (plan() passes HiGHS on its
   * own thread).
   */
  readonly integerFeasibility?: IntegerFeasibility;
  /** Only plans within this budget of GPUs or their hourly price (docs/formulation.md §10); the bound is then for those. */
  readonly gpuBudget?: GpuBudget;
  readonly onProgress?: (progress: { readonly incumbentS: number; readonly boundS: number; readonly gap: number; readonly elapsedS: number }) => void;
}

export interface SearchResult {
  readonly plan?: PlanSpec;
  readonly evaluation?: Evaluation;
  readonly bound: Bound;
  readonly solver: SolverReport;
  readonly reasons: readonly string[];
}
