/**
 * The per-layout terms of the 1F1B and ZB-H1 rows (docs/formulation.md §2, "Stage floor"): the
 * planner's bounds for those schedules are built on eq. 5.8-5.9 (docs/cost-model.md §5), both at
 * most the op-by-op span, so the cost model can report the span itself.
 */
import { routeLatencyS } from '../model/cross-site';
import { roundTripLineS, stageFloorS, stageFloorTerms } from '../model/pipeline-stage-floor';
import type { RoundTripProfile } from '../model/pipeline-round-trip';
import { spanFloorS } from '../model/pipeline-span-floor';
import type { Scenario } from '../model/scenario';
import type { ReplicaLayout } from './search-space';

/** A layout's eq. 5.9 terms (absent for the other schedules, whose rows keep eq. 5.1-5.7). */
export interface StageFloorCoefficients {
  /** Latency charged with k x the slowest step and the bubble: each crossing before the slowest stage, once (form A) or twice (form B). */
  readonly fillLatencyS: number;
  /** Link steps charged with it, per link: the same crossings' links, as often. */
  readonly fillStepsPerLink: ReadonlyMap<number, number>;
  /** Eq. 5.9b without the link steps: sum f + sum b + w_0 + 2 x every crossing's latency; the row adds (k + 1) link steps. */
  readonly linkRowFixedS: number;
}

/** The bubble (eq. 5.9a through the last slowest stage, less k x its step) and the rows' other terms, at zero link step. */
export function stageFloorCoefficients(
  scenario: Scenario, layout: ReplicaLayout, profile: RoundTripProfile, stepS: readonly number[],
): { readonly bubbleS: number; readonly stageFloor: StageFloorCoefficients } {
  const terms = stageFloorTerms(profile, stepS);
  let fillLatencyS = 0;
  let crossingLatencyS = 0;
  const fillStepsPerLink = new Map<number, number>();
  for (let q = 0; q + 1 < layout.stageSite.length; q++) {
    const from = layout.stageSite[q]!;
    const to = layout.stageSite[q + 1]!;
    if (from === to) continue;
    const latencyS = routeLatencyS(scenario, from, to);
    crossingLatencyS += latencyS;
    if (q > terms.lastBoundaryBefore) continue;
    fillLatencyS += terms.passesBefore * latencyS;
    for (const link of scenario.routes[from]![to]!) fillStepsPerLink.set(link, (fillStepsPerLink.get(link) ?? 0) + terms.passesBefore);
  }
  return { bubbleS: terms.bubbleS, stageFloor: { fillLatencyS, fillStepsPerLink, linkRowFixedS: terms.chainS + 2 * crossingLatencyS } };
}

/** The latency a choice's stage-bound rows charge: every crossing twice (eq. 5.4), or eq. 5.9's. */
export const fillLatencyOf = (layout: { readonly crossingLatencyS: number; readonly stageFloor?: StageFloorCoefficients }): number =>
  layout.stageFloor ? layout.stageFloor.fillLatencyS : 2 * layout.crossingLatencyS;

/** How many steps of `link` a choice's stage-bound rows charge: 2 per crossing routed over it (eq. 5.4), or eq. 5.9's. */
export const fillStepsOn = (layout: { readonly crossingsPerLink: ReadonlyMap<number, number>; readonly stageFloor?: StageFloorCoefficients }, link: number): number =>
  layout.stageFloor ? (layout.stageFloor.fillStepsPerLink.get(link) ?? 0) : 2 * (layout.crossingsPerLink.get(link) ?? 0);

/** A line per profile and microbatch count, computed once: O(pp^2) each, asked for by several rows and bounds of one choice. */
function memoisedLineS(cache: WeakMap<RoundTripProfile, Map<number, number>>, profile: RoundTripProfile, k: number, compute: () => number): number {
  let byK = cache.get(profile);
  if (!byK) { byK = new Map(); cache.set(profile, byK); }
  let lineS = byK.get(k);
  if (lineS === undefined) { lineS = compute(); byK.set(k, lineS); }
  return lineS;
}

/** Eq. 5.9a's lines per profile and microbatch count. */
const linesCache = new WeakMap<RoundTripProfile, Map<number, number>>();

/**
 * Eq. 5.9a for a replica of this layout with k microbatches: the largest stage line at the
 * layout's stage times, crossing latencies and zero link step (0 without eq. 5.9 terms). Every
 * term is non-decreasing in the times and in k, so it is at most the phase of any such replica.
 */
export function stageLinesOf(layout: { readonly roundTrip?: RoundTripProfile; readonly stageFloor?: StageFloorCoefficients }, k: number): number {
  const profile = layout.roundTrip;
  if (!profile || !layout.stageFloor) return 0;
  return memoisedLineS(linesCache, profile, k, () => {
    const stepS = profile.forwardS.map((f, j) => f + profile.backS[j]! + profile.weightS[j]!);
    return stageFloorS(profile, stepS, [], k);
  });
}

const roundTripCache = new WeakMap<RoundTripProfile, Map<number, number>>();

/**
 * The largest form C line (eq. 5.9a, roundTripLineS) of a replica of this layout with k
 * microbatches at zero link step: with twice each crossing's link step added, at most the phase
 * (0 without eq. 5.9 terms).
 */
export function roundTripLinesOf(layout: { readonly roundTrip?: RoundTripProfile; readonly stageFloor?: StageFloorCoefficients }, k: number): number {
  const profile = layout.roundTrip;
  if (!profile || !layout.stageFloor) return 0;
  return memoisedLineS(roundTripCache, profile, k, () => {
    let linesS = 0;
    for (let j = 0; j < profile.forwardS.length; j++) linesS = Math.max(linesS, roundTripLineS(profile, j, k));
    return linesS;
  });
}

/** Span floors by content (schedule, times, crossings, k): layouts of one candidate and candidates of one configuration share their profiles' values. */
const spanCache = new Map<string, number>();
const spanByProfile = new WeakMap<RoundTripProfile, Map<number, number>>();
const SPAN_CACHE_LIMIT = 200_000;

/**
 * Stage-microbatch pairs up to which a choice's span floor is simulated (about 150 ns each): the
 * MIP asks for every (layout, microbatch) choice of its candidate, so a few hundred of them cost
 * tens of milliseconds at most. (Taken in the capacity bound's finish times too, it lifted some of
 * the 3-site 70B row's first 400 candidates' refined bounds, the least of them 2.303 -> 2.308 s,
 * and made their refinement 2.5x slower, 1.6 -> 4.1 s: that bound keeps eq. 5.9a.)
 */
export const SPAN_FLOOR_SIZE = 1024;

/**
 * The span floor (eq. 5.11) of a replica of this layout with k microbatches: the op-by-op span at
 * the layout's stage times, crossing latencies and zero link step, at most the phase of any such
 * replica (0 without eq. 5.9 terms). Past SPAN_FLOOR_SIZE it simulates the fewest microbatches
 * within it instead (the span never falls as microbatches are added), so it stays non-decreasing
 * in k.
 */
export function spanFloorOf(layout: { readonly roundTrip?: RoundTripProfile; readonly stageFloor?: StageFloorCoefficients }, k: number): number {
  const profile = layout.roundTrip;
  if (!profile || !layout.stageFloor) return 0;
  const m = Math.min(k, Math.max(1, Math.floor(SPAN_FLOOR_SIZE / profile.forwardS.length)));
  // By profile first (several rows of one choice ask), then by content (profiles of other layouts alike).
  return memoisedLineS(spanByProfile, profile, m, () => {
    const key = `${profile.schedule}|${m}|${profile.forwardS.join(',')}|${profile.backS.join(',')}|${profile.weightS.join(',')}|${profile.crossS.join(',')}`;
    let floorS = spanCache.get(key);
    if (floorS === undefined) {
      if (spanCache.size >= SPAN_CACHE_LIMIT) spanCache.clear();
      floorS = spanFloorS(profile, m);
      spanCache.set(key, floorS);
    }
    return floorS;
  });
}
