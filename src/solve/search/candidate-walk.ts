/**
 * One candidate's placement walk in the search (docs/formulation.md §4, step 6), with its
 * outlook: a walk that its progress says cannot end by its deadline is given up early instead of
 * running to the deadline, and claims nothing either way.
 */
import type { ConfigCoefficients } from '../../formulation/coefficients';
import type { SpaceRestriction } from '../../formulation/search-space';
import type { Evaluation } from '../../model/evaluate';
import type { PlanSpec } from '../../model/plan-schema';
import type { Scenario } from '../../model/scenario';
import { emptyPlacementTally, enumeratePlacements, type PlacementTally } from '../exhaustive-placements';
import { BOUND_SLACK } from '../exhaustive-reduced';
import type { SitePermutation } from '../site-symmetry';
import type { WalkProgress } from '../walk-progress';

/**
 * The probe: a walk is judged once it has reached this many placements or made this many visits,
 * whichever comes first, and at every checkpoint after (walk-progress.ts); a walk that ends before
 * is never judged.
 */
export const PROBE_PLACEMENTS = 8;
export const PROBE_VISITS = 4096;

/**
 * Whether a judged walk is given up: its time so far over the share of its tree behind it, the
 * time the whole walk takes if the rest goes at the same pace, is past what its deadline leaves.
 */
export function outlookTooLong(progress: WalkProgress, elapsedMs: number, allowedMs: number): boolean {
  if (progress.leaves < PROBE_PLACEMENTS && progress.visits < PROBE_VISITS) return false;
  return elapsedMs > progress.doneShare * allowedMs;
}

export interface CandidateWalk {
  /** Every placement was timed or left out by a bound: the candidate is bounded by boundS. */
  readonly complete: boolean;
  /** The least of the pruning level and the plans timed, at the end (meaningful when complete). */
  readonly boundS: number;
  /** Its outlook stopped the walk (before its deadline). */
  readonly gaveUp: boolean;
  /** Nodes visited and placements reached before it ended or stopped. */
  readonly visits: number;
  readonly placements: number;
  readonly tally: PlacementTally;
}

/**
 * Walks the placements of one candidate, pruning at min(pruningLevelS(), least time timed), until
 * it ends, its deadline passes or its outlook gives it up. Plans faster than the level go to onPlan.
 */
export function walkCandidate(
  scenario: Scenario, restriction: SpaceRestriction, coefficients: ConfigCoefficients, symmetries: readonly SitePermutation[],
  pruningLevelS: () => number, deadlineMs: number, onPlan: (plan: PlanSpec, evaluation: Evaluation) => void,
): CandidateWalk {
  const startedMs = Date.now();
  const allowedMs = deadlineMs - startedMs;
  let leastTimedS = Infinity;
  // The walk's pruning level: nothing at or above it can close the gap (the threshold) or beat what the walk has timed.
  const bestS = () => Math.min(pruningLevelS(), leastTimedS);
  // Past its deadline, or given up, the walk prunes everything, so it unwinds at once (its own
  // clock checks come every few thousand steps, and a large plan takes milliseconds to time).
  let cutShort = false;
  let gaveUp = false;
  let visits = 0;
  let placements = 0;
  const prunes = (boundS: number) => {
    if (Date.now() >= deadlineMs) cutShort = true;
    return cutShort || boundS > bestS() * (1 + BOUND_SLACK);
  };
  const timed = (plan: PlanSpec, evaluation: Evaluation) => {
    leastTimedS = Math.min(leastTimedS, evaluation.predicted.iterationTimeS);
    onPlan(plan, evaluation);
  };
  const checkpoint = (progress: WalkProgress) => {
    visits = progress.visits;
    placements = progress.leaves;
    if (outlookTooLong(progress, Date.now() - startedMs, allowedMs)) gaveUp = cutShort = true;
    return !gaveUp;
  };
  const tally = emptyPlacementTally();
  const ended = enumeratePlacements(scenario, restriction, coefficients, symmetries, prunes, true, bestS, timed, deadlineMs, tally, checkpoint);
  // Every plan of the candidate was timed (at least leastTimedS) or skipped by a bound or a
  // closed form at least the pruning level of its moment, which only ever fell.
  return { complete: ended && !cutShort, boundS: bestS(), gaveUp, visits, placements: Math.max(placements, tally.placementsEvaluated), tally };
}
