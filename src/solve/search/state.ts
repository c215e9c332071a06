/**
 * The state the search's phases share (src/solve/search.ts), one object instead of closures: the
 * scenario and its candidates, each candidate's best proven bound, the incumbent, and what the
 * result reports. Phases read and update it; the queries below read nothing else.
 */
import type { ConfigCoefficients, LayoutGroup } from '../../formulation/coefficients';
import type { Framework } from '../../model/framework-capabilities';
import type { Evaluation } from '../../model/evaluate';
import type { PlanSpec } from '../../model/plan-schema';
import type { Scenario } from '../../model/scenario';
import type { Candidate } from '../candidates';
import { greedyPlacement } from '../heuristic';
import type { MipBackend } from '../mip-backend';
import type { SearchOptions } from './types';

/** The best plan so far, with the cost model's own evaluation of it. */
export interface Incumbent {
  readonly plan: PlanSpec;
  readonly evaluation: Evaluation;
  /** The path that produced it (a backend's name, heuristic, seed, with or without polish). */
  readonly engine: string;
}

export interface SearchState {
  /** The scenario as the restricted space sees it (a framework's space leaves out network settings it cannot apply, docs/formulation.md §8). */
  readonly scenario: Scenario;
  readonly options: SearchOptions;
  /** The framework whose space is searched; undefined: the framework-free space. */
  readonly framework: Framework | undefined;
  /** When the search started, ms since the epoch. */
  readonly startedMs: number;
  /** When its time limit runs out, ms since the epoch. */
  readonly deadlineMs: number;
  /** The required iteration time (training.maxIterationTimeS) with room for rounding, s: no plan slower than it fits. */
  readonly requiredS: number;
  /** Every (configuration, dp) candidate of the space, least quick bound first (candidates.ts). */
  readonly candidates: readonly Candidate[];
  /** bounds[i]: candidate i's best proven lower bound so far, s (its quick bound until it is visited). */
  readonly bounds: number[];
  /** boundSources[i]: the family that gave bounds[i] (raiseBound), for the solver's report. */
  readonly boundSources: BoundSource[];
  /** The best plan so far; every phase may replace it with a faster one (consider.ts). */
  incumbent: Incumbent | undefined;
  /** The greedy placement of candidate i, computed once (greedyOf). */
  readonly greedyByCandidate: Map<number, LayoutGroup[] | undefined>;
  /** Why plans do not fit: reason -> configurations it applies to, in the order found. */
  readonly reasons: Map<string, number>;
  /** Backend faults, in the order they happened. */
  readonly faults: string[];
  /** Fallback backends used at least once. */
  readonly fallbacksUsed: Set<string>;
  /** Faults per backend: one that failed twice is not asked again. */
  readonly faultCounts: Map<MipBackend, number>;
  /** Candidates' MIPs solved (a second solve of one in flight not counted). */
  mipsSolved: number;
  /** Candidates pruned by a bound after their quick bound let them through. */
  pruned: number;
  /** Plans that fit but that the framework cannot launch as placed. */
  frameworkRejects: number;
  /** The time limit stopped the search before it had visited every candidate it could not prune. */
  timedOut: boolean;
  /** Seconds spent polishing placements so far (search/adopt.ts). */
  polishedS: number;
  /** When progress was last reported, ms since the epoch. */
  lastReportMs: number;
}

/**
 * Where a candidate's bound comes from (docs/formulation.md §4): its quick bound (steps 1-2) or the span floor of step 3, a
 * closed form of step 3 (outer, capacity, forced spanning, ZeRO-3 gathers, layout capacity), the
 * ring-pattern bound (3(d)), its placement MIP's dual bound, the threshold its MIP proved
 * nothing faster than (F0), or a completed enumeration of its placements (step 6).
 */
export type BoundSource = 'quick' | 'span-floor' | 'outer' | 'capacity' | 'forced-spanning' | 'zero3-gathers' | 'layout-capacity' | 'ring-pattern' | 'pipeline-caps' | 'mip' | 'threshold' | 'enumerated';

/** Raises candidate i's bound to `boundS` when that is higher, and records its source. */
export function raiseBound(state: SearchState, i: number, boundS: number, source: BoundSource): void {
  if (!(boundS > state.bounds[i]!)) return;
  state.bounds[i] = boundS;
  state.boundSources[i] = source;
}

/** The least of the candidates' bounds, s: a bound on every plan of the space. */
export function globalBound(state: SearchState): number {
  return state.bounds.reduce((least, b) => Math.min(least, b), Infinity);
}

/** The incumbent's gap to the global bound (Infinity without an incumbent). */
export function gapNow(state: SearchState): number {
  const { incumbent } = state;
  return incumbent ? (incumbent.evaluation.predicted.iterationTimeS - globalBound(state)) / incumbent.evaluation.predicted.iterationTimeS : Infinity;
}

/**
 * A candidate is pruned once its bound reaches the threshold: the incumbent less the target gap,
 * or the scenario's required iteration time (training.maxIterationTimeS), whichever is less; for
 * a baseline (`comparedWithS`), also the level at which the share of time the compared plan saves
 * is proven to within the target gap (docs/formulation.md §4, step 8): with a bound L and the
 * incumbent I, that share lies in [1 - ours / L, 1 - ours / I], of width ours (I - L) / (L I), at
 * most the gap once L >= I / (1 + gap x I / ours).
 */
export function threshold(state: SearchState): number {
  const { incumbent, options } = state;
  if (!incumbent) return state.requiredS;
  const incumbentS = incumbent.evaluation.predicted.iterationTimeS;
  const savingsProvenS = options.comparedWithS === undefined ? Infinity : incumbentS / (1 + (options.gap * incumbentS) / options.comparedWithS);
  return Math.min(state.requiredS, incumbentS * (1 - options.gap), savingsProvenS);
}

/** Feasibility mode has its plan: every phase stops. */
export function haveFirstFit(state: SearchState): boolean {
  return state.options.stopAtFirstFit === true && state.incumbent !== undefined;
}

/** Reports progress to `options.onProgress`, at most every 200 ms, once there is an incumbent. */
export function report(state: SearchState): void {
  const { incumbent, options } = state;
  if (!options.onProgress || !incumbent || Date.now() - state.lastReportMs < 200) return;
  state.lastReportMs = Date.now();
  const incumbentS = incumbent.evaluation.predicted.iterationTimeS;
  const boundS = Math.min(globalBound(state), incumbentS);
  options.onProgress({ incumbentS, boundS, gap: (incumbentS - boundS) / incumbentS, elapsedS: (Date.now() - state.startedMs) / 1000 });
}

/**
 * The greedy placement of candidate i, computed once: the seed phase, the refined candidates'
 * seeds, the polish before a large MIP and a MIP's fallback all start from it.
 */
export function greedyOf(state: SearchState, i: number, coefficients: ConfigCoefficients): LayoutGroup[] | undefined {
  if (!state.greedyByCandidate.has(i)) state.greedyByCandidate.set(i, greedyPlacement(state.scenario, coefficients));
  return state.greedyByCandidate.get(i);
}

/** Counts one more configuration for `reason`. */
export function tally(reasons: Map<string, number>, reason: string): void {
  reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
}
