/** What `plan` returns: outcomes as data, read `status` first. */
import type { Evaluation } from '../model/evaluate';
import type { Framework } from '../model/framework-capabilities';
import type { PlanSpec } from '../model/plan-schema';

export interface Bound {
  /** A lower bound on the iteration time of every plan in the search space, seconds. */
  readonly lowerBoundS: number;
  /** (plan - bound) / plan. */
  readonly gap: number;
  /** True when every part of the bound is proven (solver dual bounds or closed-form bounds). */
  readonly proven: boolean;
}

export interface SolverReport {
  /** The path that produced the plan: highs, highs (fresh instance), javascript-lp-solver, or heuristic. */
  readonly engine: string;
  readonly timeS: number;
  /** Fallback backends that had to be used at least once, with the faults that caused it. */
  readonly fallbacksUsed: readonly string[];
  readonly faults: readonly string[];
  readonly candidates: number;
  readonly mipsSolved: number;
  readonly pruned: number;
  /** The search stopped at the time limit before closing the gap. */
  readonly timedOut: boolean;
  /**
   * The candidate whose bound is the least, so the global bound (docs/formulation.md §4): its
   * configuration, dp, bound and the family that gave it; `open`: candidates whose bound is
   * below the plan's time less the target gap when the search ended (0 once the gap is closed).
   */
  readonly boundHolder?: BoundHolder;
  /** plan --exhaustive only: what the enumeration covered. */
  readonly exhaustive?: ExhaustiveCoverage;
}

export interface BoundHolder {
  readonly config: string;
  readonly dp: number;
  readonly boundS: number;
  readonly source: string;
  readonly open: number;
}

export interface BaselineResult {
  readonly name: 'production' | 'pp-across';
  readonly description: string;
  /** Undefined when the restricted space holds no plan that fits. */
  readonly iterationTimeS?: number;
  /** Baseline time / our time. */
  readonly speedup?: number;
  /**
   * The baseline space's proven bound / our time: ours is at least this many times as fast as
   * every plan of that space. A baseline's search proves the share of time ours saves to within
   * the target gap, not its own time (docs/formulation.md §4, step 8), so far below `speedup`
   * only when the time limit stopped it.
   */
  readonly speedupAtLeast?: number;
  readonly plan?: PlanSpec;
  /** The baseline search's own bound: every plan of its space takes at least `lowerBoundS`. */
  readonly bound?: Bound;
}

export interface PlanResult {
  /**
   * optimal: gap within the target; feasible: a plan, gap above the target; infeasible: proven
   * that no plan in the space fits; unknown: no plan found before the time limit, not proven infeasible.
   */
  readonly status: 'optimal' | 'feasible' | 'infeasible' | 'unknown';
  readonly plan?: PlanSpec;
  readonly evaluation?: Evaluation;
  readonly bound: Bound;
  readonly solver: SolverReport;
  /** Why nothing fits (status infeasible). */
  readonly reasons: readonly string[];
  readonly baselines: readonly BaselineResult[];
  /** The framework whose space was searched (plan --framework, search.framework); absent: the framework-free space. */
  readonly framework?: Framework;
  /** With a plan: the frameworks that run it as is (their export has no error: src/model/framework-issues.ts). */
  readonly frameworks?: readonly Framework[];
  /** With a plan: what each framework not in `frameworks` lacks (its export's errors). */
  readonly frameworkGaps?: Readonly<Partial<Record<Framework, readonly string[]>>>;
  /** With a plan: where a framework in `frameworks` runs it differently from the prediction (its export's capability warnings). */
  readonly frameworkDifferences?: Readonly<Partial<Record<Framework, readonly string[]>>>;
}

/**
 * What `plan --exhaustive` covered (docs/formulation.md §9). Plans are (configuration, dp,
 * placement, network settings) as the naive enumeration evaluates them one by one; a placement
 * is a count of replicas per (layout, microbatch count).
 */
export interface ExhaustiveCoverage {
  /** `reduced`: site symmetry and bound pruning; `naive`: every plan. */
  readonly mode: 'reduced' | 'naive';
  /** Site permutations (the identity included) under which the cost model times every plan the same. */
  readonly siteSymmetries: number;
  /** (configuration, dp) candidates in the space. */
  readonly candidates: number;
  /** Candidates whose placements were enumerated (to the end unless the time limit stopped it). */
  readonly candidatesEnumerated: number;
  /** Candidates skipped whole: a proven lower bound (quick, refined, ring pattern, layout capacity; infinite when nothing fits memory) not below the best plan so far. */
  readonly candidatesPrunedByBound: number;
  /** (layout, microbatch count) choices of enumerated candidates left out: their replica alone takes no less than the best plan so far. */
  readonly choicesPrunedByBound: number;
  /**
   * Partial placements abandoned: the choices left (those the bound keeps) cannot place the
   * replicas, microbatches or GPUs still to place, or a choice's bound reached a better plan
   * found meanwhile.
   */
  readonly partialPlacementsPruned: number;
  /** Fully placed placements accounted for: each evaluated representative counts its whole orbit. */
  readonly placementsCovered: number;
  /** Representative placements evaluated. */
  readonly placementsEvaluated: number;
  /** Plans (placements x network settings of their loaded links) accounted for, orbits included. */
  readonly plansCovered: number;
  /** Plans timed (closed form, then op by op where the closed form could beat the best). */
  readonly plansEvaluated: number;
}
