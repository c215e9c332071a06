/**
 * Phase 3 of the search: the refined closed-form bound of every candidate the quick bound cannot
 * prune (docs/formulation.md §4, step 3: outer, capacity, forced spanning, ZeRO-3 gathers, layout
 * capacity; milliseconds each), so that most candidates never need a MIP and those left unsolved
 * hold the global bound at their refined bound. The ring-pattern bound (step 3(d)) waits until a
 * candidate comes up for its MIP (liftByRingPattern).
 */
import { batchTooSmallForReplicas, capacityLowerBound } from '../../formulation/capacity-bound';
import { forcedSpanningLowerBound, outerLowerBound, zero3GatherLowerBound } from '../../formulation/closed-form-bounds';
import type { ConfigCoefficients } from '../../formulation/coefficients';
import type { IntegerFeasibility } from '../../formulation/hosting-integrality';
import { pipelineCapsApply } from '../../formulation/hosting-pipeline-caps';
import { layoutCapacityLowerBound } from '../../formulation/layout-capacity-bound';
import { ringPatternSearch, type RingPattern } from '../../formulation/ring-pattern-bound';
import { gapNow, haveFirstFit, raiseBound, report, tally, threshold, type SearchState } from './state';

const BATCH_SPLIT_REASON = 'the batch cannot be shared by dp replicas (each runs at least one microbatch, at least pp with the interleaved schedule)';

/** What the refine phase leaves for the MIPs. */
export interface Refined {
  /** Candidates still below the threshold after their refined bound: index -> coefficients, in candidate order (the MIP queue takes each out as its MIP starts). */
  readonly coefficients: Map<number, ConfigCoefficients>;
  /** Candidates after the phase's break, pruned by the sorted quick bound (0 when the time limit stopped it). */
  readonly unrefined: number;
}

/** Refines the bounds of the candidates in order until the quick bound prunes the rest. `seeded`: coefficients computed by the seed phase. */
export function refineBounds(state: SearchState, seeded: Map<number, ConfigCoefficients>): Refined {
  const { candidates, bounds, reasons, scenario } = state;
  const refined = new Map<number, ConfigCoefficients>();
  const siteGpus = scenario.sites.map((site) => site.gpus);
  let index = 0;
  for (; index < candidates.length; index++) {
    const candidate = candidates[index]!;
    if (candidate.quickBoundS >= threshold(state)) break; // sorted: every later candidate is pruned too
    if (haveFirstFit(state)) break;
    if (Date.now() >= state.deadlineMs) { state.timedOut = true; break; }
    const coefficients = seeded.get(index) ?? candidate.coefficients();
    seeded.delete(index);
    // Each family only while the bound is under the threshold: one that reaches it prunes the
    // candidate, and a pruned candidate's bound never holds the global bound under the threshold.
    const open = () => bounds[index]! < threshold(state);
    // Both capacity bounds (§4 step 3(b), 3(e)) stop at the threshold: past it one check proves a
    // bound at least it. Without an incumbent they search on, so an infinite bound gives its reason.
    const enoughS = () => (state.incumbent ? threshold(state) : Infinity);
    // The capacity bound first: it needs no span floor and prunes most (3-site bench row: 489 of
    // the 605 candidates refined), so those skip the span floor's schedule simulation.
    raiseBound(state, index, capacityLowerBound(coefficients, siteGpus, enoughS()), 'capacity');
    const pipelineS = open() ? pipelineBoundOf(state, index) : candidate.quickBoundS;
    if (open()) raiseBound(state, index, pipelineS, 'span-floor');
    if (open()) raiseBound(state, index, outerLowerBound(coefficients, pipelineS), 'outer');
    if (open()) raiseBound(state, index, forcedSpanningLowerBound(coefficients, siteGpus, pipelineS), 'forced-spanning');
    // In a framework's space, ZeRO-3's per-microbatch weight gathers floor the candidate too (torchtitan's
    // FSDP2); the framework-free space keeps today's bounds bit for bit (test/candidates-equivalence).
    if (state.framework !== undefined && open()) raiseBound(state, index, zero3GatherLowerBound(coefficients), 'zero3-gathers');
    // The layout LP (step 3(e)) solves a few small LPs: only for candidates the closed forms keep.
    if (open()) raiseBound(state, index, layoutCapacityLowerBound(coefficients, siteGpus, bounds[index]!, enoughS()), 'layout-capacity');
    const bound = bounds[index]!;
    if (!Number.isFinite(bound)) {
      tally(reasons, !coefficients.layouts.some((l) => l.fittingMicrobatches.length > 0) ? 'no replica layout fits in GPU memory'
        : batchTooSmallForReplicas(coefficients) ? BATCH_SPLIT_REASON
          : 'its replicas cannot fit the sites\' GPUs and carry the batch with microbatch counts that fit memory');
      continue;
    }
    if (bound >= threshold(state)) { state.pruned++; continue; }
    refined.set(index, coefficients);
  }
  const unrefined = state.timedOut ? 0 : Math.max(0, candidates.length - index);
  // Candidates whose quick bound is infinite without a memory reason cannot share the batch.
  for (let j = index; j < candidates.length; j++) {
    if (!Number.isFinite(candidates[j]!.quickBoundS) && candidates[j]!.memoryNeedGiB === undefined) tally(reasons, BATCH_SPLIT_REASON);
  }
  return { coefficients: refined, unrefined };
}

/**
 * A bound on every placement's pipeline phase of candidate i (its busiest replica's): the quick
 * bound, raised for 1F1B and ZB-H1 to the span floor at the quick bound's times (eq. 5.11).
 */
const pipelineBoundOf = (state: SearchState, i: number): number =>
  Math.max(state.candidates[i]!.quickBoundS, state.candidates[i]!.pipelineFloorS());

/**
 * The ring-pattern bound (§4, step 3(d)) of candidate i, taken when it comes up for its MIP: it
 * searches the class hostings (milliseconds to a tenth of a second on four sites), so it waits
 * until the incumbent is as good as it gets before that candidate.
 */
export function liftByRingPattern(state: SearchState, i: number, coefficients: ConfigCoefficients): RingPattern {
  const siteGpus = state.scenario.sites.map((site) => site.gpus);
  const pattern = ringPatternSearch(state.scenario, coefficients, siteGpus, pipelineBoundOf(state, i), undefined, true, wholeReplicasUntilDeadline(state), threshold(state));
  if (pattern.boundS === Infinity) tally(state.reasons, "no hosting of its stage classes by the sites holds its replicas whole (the sites' GPUs, memory, the batch's microbatch counts)");
  raiseBound(state, i, pattern.boundS, 'ring-pattern');
  return pattern;
}

/** The planner's integer solver, stopped at the search's deadline (past it a hosting passes unasked). */
function wholeReplicasUntilDeadline(state: SearchState): IntegerFeasibility | undefined {
  const asked = state.options.integerFeasibility;
  return asked && ((mip, timeLimitS) => {
    const leftS = (state.deadlineMs - Date.now()) / 1000;
    return leftS <= 0 ? 'unknown' : asked(mip, Math.min(timeLimitS, leftS));
  });
}

/**
 * Once every MIP has answered and the gap is still open (§4, step 3(d), condition (v)): the
 * candidates still under the threshold, least bound first, searched again with the pipeline caps
 * at today's threshold, which only the incumbent the MIPs left makes tight. A candidate none of
 * whose hostings has a placement under the threshold is pruned (4-site DeepSeek-V3 planner-scaling
 * row: its plan's own candidate, 2.502 s by the search without the caps, at least the threshold of
 * its 2.559 s plan with them). Each candidate once; stops at the deadline or once the gap closes.
 */
export function liftByPipelineCaps(state: SearchState, candidates: readonly { readonly index: number; readonly coefficients: ConfigCoefficients }[]): void {
  const wholeReplicas = wholeReplicasUntilDeadline(state);
  if (!wholeReplicas || state.scenario.links.length === 0) return;
  const siteGpus = state.scenario.sites.map((site) => site.gpus);
  const left = [...candidates];
  while (left.length > 0) {
    if (gapNow(state) <= state.options.gap * (1 + 1e-9) || Date.now() >= state.deadlineMs || haveFirstFit(state)) return;
    const stopAt = threshold(state);
    if (!Number.isFinite(stopAt)) return;
    // The least bound first: it is the one that decides the gap.
    left.sort((a, b) => state.bounds[a.index]! - state.bounds[b.index]!);
    const { index, coefficients } = left.shift()!;
    if (state.bounds[index]! >= stopAt || !pipelineCapsApply(coefficients)) continue;
    const pattern = ringPatternSearch(state.scenario, coefficients, siteGpus, pipelineBoundOf(state, index), undefined, true, wholeReplicas, stopAt, true);
    raiseBound(state, index, pattern.boundS, 'pipeline-caps');
    report(state);
  }
}
