/**
 * Crossing floor (docs/formulation.md §4, step 3(d)): a lower bound on the pipeline phase of a
 * placement in which some replicas must be split across sites, a relaxation of F5 and F6's link
 * rows. The ring-pattern bound (ring-pattern-bound.ts) adds it to hostings whose classes make
 * replicas change site, so that avoiding every cross-site ring by splitting replicas is not free.
 */
import { roundTripFloorAtLeastS, type ChainBoundary } from '../model/pipeline-round-trip';
import { queuedSpanFloorS } from '../model/pipeline-span-floor';
import type { ConfigCoefficients } from './coefficients';
import { busiestReplicaMicrobatches, fewestMicrobatches } from './microbatch-counts';

/** The least of the candidate's layouts' terms the floors take: split layouts' crossings and fixed terms, whole layouts' step and bubble. */
interface LayoutMinima {
  readonly leastCrossings: number;
  readonly leastCrossingsOnLink0: number;
  /** F6's link-row terms without the link steps: eq. 5.9b's chain, or the bubble and the crossings' latency twice. */
  readonly leastFixedS: number;
  /** Whole layouts that fit: a replica of k microbatches on one takes at least k x its slowest step + its bubble. */
  readonly leastWholeStepS: number;
  readonly leastWholeBubbleS: number;
}

function layoutMinima(c: ConfigCoefficients): LayoutMinima {
  let leastCrossings = Infinity;
  let leastCrossingsOnLink0 = Infinity;
  let leastFixedS = Infinity;
  let leastWholeStepS = Infinity;
  let leastWholeBubbleS = Infinity;
  for (const layout of c.layouts) {
    if (layout.crossings === 0) {
      if (layout.fittingMicrobatches.length === 0) continue;
      leastWholeStepS = Math.min(leastWholeStepS, layout.maxStepS);
      leastWholeBubbleS = Math.min(leastWholeBubbleS, layout.bubbleS);
      continue;
    }
    leastCrossings = Math.min(leastCrossings, layout.crossings);
    leastCrossingsOnLink0 = Math.min(leastCrossingsOnLink0, layout.crossingsPerLink.get(0) ?? 0);
    leastFixedS = Math.min(leastFixedS, layout.stageFloor ? layout.stageFloor.linkRowFixedS : layout.bubbleS + 2 * layout.crossingLatencyS);
  }
  return { leastCrossings, leastCrossingsOnLink0, leastFixedS, leastWholeStepS, leastWholeBubbleS };
}

/**
 * A lower bound on the pipeline phase (F6 without E and the optimizer) of a placement in which at
 * least `changing` replicas are split across sites; -Infinity when none must be. Every split layout
 * crosses at least cMin times, and F5 makes each link's step L_l the crossings routed over it
 * times sendBytes over its bytes/s, summed over replicas. F6's link row for a used split choice r
 * crossing link l reads T - E - opt - F >= (k_r + 2 c_rl) L_l, F >= the least over split layouts
 * of bubble + 2 x crossing latency (for 1F1B and ZB-H1, eq. 5.9b: (k_r + 1) L_l, F >= the least
 * chain sum + 2 x crossing latency). Two consequences:
 * - link busy time: as the largest k_r on a link is at least their average weighted by c_rl,
 *   T - E - opt - F >= sendBytes / (bytes/s of l) x sum over r on l of k_r c_rl. Weighting each
 *   link of a set by its bytes/s and adding: T - E - opt - F >= sendBytes x (crossings over the set)
 *   / (the set's bytes/s). Over all links every crossing counts (cMin per split replica); over the
 *   links touching the sites that host the first (or the last) stage class, a split replica's first
 *   (last) crossing counts, as its route leaves its first site (enters its last) over one of them.
 *   The split replicas' microbatches K add up to M when every replica is split (or no whole
 *   layout fits), and to at least changing x the schedule's fewest otherwise; then the whole
 *   replicas, at most dp - changing, carry M - K, so the busiest runs at least (M - K) / (dp -
 *   changing), at least that times the least whole step plus the least whole bubble (F6's
 *   one-site row): the least over K of the larger of the two bounds the phase;
 * - rows: with one link every crossing uses it, L >= changing x cMin x sendBytes / bytes/s, and
 *   its row holds with k >= the fewest microbatches, or the busiest replica's share
 *   (busiestReplicaMicrobatches) when every replica is split; with several, the busiest link
 *   touching the first sites has L >= changing x sendBytes over their bytes/s, a split replica
 *   crosses it, and its row holds with k >= 1, c >= 1 (3 L, or 2 L with eq. 5.9b).
 * `endBytesPerS`: the bytes/s of the links touching the first class's sites, or the last's,
 * whichever is less (the total when unknown).
 */
export function crossingFloorS(c: ConfigCoefficients, changing: number, linkCount: number, endBytesPerS: number): number {
  return crossingFloorOf(c, linkCount)(changing, endBytesPerS);
}

/**
 * {@link crossingFloorS} for one candidate as a function of `changing` and `endBytesPerS`: the
 * minima over its layouts are taken once (the ring-pattern search asks at every node).
 */
export function crossingFloorOf(c: ConfigCoefficients, linkCount: number): (changing: number, endBytesPerS: number) => number {
  const { leastCrossings, leastCrossingsOnLink0, leastFixedS, leastWholeStepS, leastWholeBubbleS } = layoutMinima(c);
  // F6's link row: (k + 2c) L (eq. 5.4), or (k + 1) L for 1F1B and ZB-H1 (eq. 5.9b).
  const eq59 = c.layouts.some((layout) => layout.stageFloor !== undefined);
  const fillStepsOf = (crossings: number) => (eq59 ? 1 : 2 * crossings);
  if (!Number.isFinite(leastCrossings)) return () => -Infinity;
  const M = c.totalMicrobatches;
  const fewest = fewestMicrobatches(c.config);
  const busiestK = busiestReplicaMicrobatches(M, c.dp, fewest);
  const totalBytesPerS = c.linkBytesPerS.reduce((sum, x) => sum + x, 0);
  return (changing, endBytesPerS) => {
    if (changing <= 1e-9) return -Infinity;
    const everyReplica = changing >= c.dp * (1 - 1e-9) || !Number.isFinite(leastWholeStepS);
    /**
     * The least over K (the split replicas' microbatches, K >= changing x fewest, all M when every
     * replica is split) of the larger of the links' busy time K x perMicrobatchS + F and the busiest
     * whole replica's pipeline: the other dp - changing replicas (at most; fewer when more change)
     * carry M - K, so one runs at least (M - K) / (dp - changing) of them. Linear in K both, so the
     * least is where they cross, clamped to K's range.
     */
    const balancedS = (perMicrobatchS: number): number => {
      const busyS = (K: number) => K * perMicrobatchS + leastFixedS;
      if (everyReplica) return busyS(M);
      const perK = leastWholeStepS / (c.dp - changing);
      const wholeS = (K: number) => (M - K) * perK + leastWholeBubbleS;
      const low = Math.min(M, changing * fewest);
      const crossing = (M * perK + leastWholeBubbleS - leastFixedS) / (perMicrobatchS + perK);
      const K = Math.min(M, Math.max(low, crossing));
      return Math.max(busyS(K), wholeS(K));
    };
    if (linkCount === 1) {
      const k = everyReplica ? busiestK : fewest;
      const bytesPerS = c.linkBytesPerS[0]!;
      const rowS = Number.isFinite(k) ? (k + fillStepsOf(leastCrossingsOnLink0)) * ((changing * leastCrossingsOnLink0 * c.sendBytes) / bytesPerS) + leastFixedS : -Infinity;
      return Math.max(balancedS((leastCrossingsOnLink0 * c.sendBytes) / bytesPerS), rowS);
    }
    const endsS = Math.min(totalBytesPerS, endBytesPerS);
    const rowS = (1 + fillStepsOf(1)) * ((changing * c.sendBytes) / endsS) + leastFixedS;
    return Math.max(balancedS((leastCrossings * c.sendBytes) / totalBytesPerS), balancedS(c.sendBytes / endsS), rowS);
  };
}

/** A split layout's stage sites and its round-trip floors as functions of the replicas that change site. */
export interface SplitLayoutFloor {
  readonly stageSite: readonly number[];
  /** Eq. 5.8's floor (chains, cheap). */
  readonly floorS: (changing: number) => number;
  /** At least {@link floorS}: each split count it takes also floored by the span at the link's queues (eq. 5.11). */
  readonly queuedFloorS: (changing: number) => number;
}

/**
 * The pipeline phase of the busiest replica through eq. 5.8 when `changing` replicas are split
 * (docs/formulation.md §4, step 3(d)), with one link, per split layout of 1F1B or ZB-H1: a split
 * replica of m microbatches takes at least {@link roundTripFloorAtLeastS} at the layout's stage
 * times with every crossing taking its latency and the link step of all `changing` split replicas'
 * sends (each crossing the link at least the fewest times a split layout does, F5). With s >=
 * changing split replicas, the busiest of them running m, the whole ones (dp - s, if any) carry at
 * least M - s m, so the busiest whole replica takes at least (M - s m) / (dp - s) x the least whole
 * step + the least whole bubble (as the crossing floor's balance). For m >= M / dp that is at most
 * m and the split replica's floor at ceil(M / dp) bounds the phase; for m < M / dp the whole load
 * grows with s, so s = changing is the least, and the floor is the least over m of the larger of
 * the two (rising and falling in m: found by bisection). When every replica is split (or no whole
 * layout fits) the busiest split replica runs at least the busiest replica's share. A replica of a
 * hosting that makes `changing` replicas change site uses one of the split layouts whose stages
 * sit on sites hosting their classes, so the least of those floors bounds the phase. The queued
 * floor takes, at the split counts the bisection ends on, the larger of that and the span at the
 * layout's stage times with each crossing a queue of that link step ({@link queuedSpanFloorS},
 * eq. 5.11; also non-decreasing in m, so any count in [fewest, ceil(M / dp)] may end the
 * bisection). Empty with several links (which link a crossing takes, and so its step, depends on
 * the placement) or without a profile.
 */
export function splitRoundTripFloors(c: ConfigCoefficients, linkCount: number): SplitLayoutFloor[] {
  if (linkCount !== 1) return [];
  const split = c.layouts.filter((l) => l.crossings > 0 && l.roundTrip !== undefined);
  if (split.length === 0) return [];
  // 1F1B and ZB-H1 give every layout a profile, so the split layouts here are all of them.
  const { leastCrossingsOnLink0: leastCrossings, leastWholeStepS, leastWholeBubbleS } = layoutMinima(c);
  const M = c.totalMicrobatches;
  const fewest = fewestMicrobatches(c.config);
  const busiestK = busiestReplicaMicrobatches(M, c.dp, fewest);
  const evenK = Math.max(fewest, Math.ceil(M / c.dp - 1e-9));
  const bytesPerS = c.linkBytesPerS[0]!;
  return split.map(({ layout, roundTrip }) => {
    const cache = new Map<number, SplitFloorTerms>();
    const stageSite = layout.stageSite;
    const termsOf = (changing: number): SplitFloorTerms => {
      let terms = cache.get(changing);
      if (terms !== undefined) return terms;
      const stepS = (changing * leastCrossings * c.sendBytes) / bytesPerS;
      const profile = { ...roundTrip!, crossS: roundTrip!.crossS.map((x, q) => (stageSite[q] !== stageSite[q + 1] ? x + stepS : x)) };
      // The same crossings as queues (eq. 5.11): each send waits for the link step of the one before it.
      const hops: ChainBoundary[] = [];
      roundTrip!.crossS.forEach((latencyS, q) => { if (stageSite[q] !== stageSite[q + 1]) hops.push({ virtualStage: q, latencyS, stepS }); });
      const byCount = new Map<number, number>();
      const splitS = (m: number): number => {
        let floor = byCount.get(m);
        if (floor === undefined) { floor = roundTripFloorAtLeastS(profile, m); byCount.set(m, floor); }
        return floor;
      };
      const queuedSplitS = (m: number): number => Math.max(splitS(m), queuedSpanFloorS(roundTrip, hops, m));
      if (changing >= c.dp * (1 - 1e-9) || !Number.isFinite(leastWholeStepS)) {
        terms = Number.isFinite(busiestK) ? { counts: [busiestK], wholeS: Infinity, splitS, queuedSplitS } : { counts: [], wholeS: -Infinity, splitS, queuedSplitS };
      } else {
        const wholeS = (m: number): number => ((M - changing * m) / (c.dp - changing)) * leastWholeStepS + leastWholeBubbleS;
        // The least m in [fewest, evenK] with splitS(m) >= wholeS(m) (splitS rises, wholeS falls);
        // the least of max(splitS, wholeS) is there or one below it.
        const low = risingMeetsFalling(fewest, evenK, splitS, wholeS);
        // m >= low: a split floor, rising; m < low: the whole replicas' floor, falling. That holds
        // for any low in [fewest, evenK] and any rising split floor, so the queued one may be
        // taken at the counts this bisection of the cheap one ends on.
        terms = { counts: low < evenK ? [evenK, low] : [evenK], wholeS: low > fewest ? wholeS(low - 1) : Infinity, splitS, queuedSplitS };
      }
      cache.set(changing, terms);
      return terms;
    };
    const floorS = (changing: number): number => {
      const terms = termsOf(changing);
      return terms.counts.reduce((least, m) => Math.min(least, terms.splitS(m)), terms.wholeS);
    };
    const queuedFloorS = (changing: number): number => {
      const terms = termsOf(changing);
      return terms.counts.reduce((least, m) => Math.min(least, terms.queuedSplitS(m)), terms.wholeS);
    };
    return { stageSite, floorS, queuedFloorS };
  });
}

/** Where a split layout's floor is taken: the split counts and the whole replicas' floor beside them (Infinity: none; -Infinity: no floor). */
interface SplitFloorTerms {
  readonly counts: readonly number[];
  readonly wholeS: number;
  readonly splitS: (m: number) => number;
  readonly queuedSplitS: (m: number) => number;
}

/**
 * The busiest replica's pipeline phase through eq. 5.8 when `changing` replicas are split and the
 * sites are joined by several links (docs/formulation.md §4, step 3(d), "several links"), per
 * complete hosting. Which link a split replica's crossing takes depends on the placement, but
 * every split replica's route leaves its first site, which hosts the first class, over a link
 * touching those sites (E): its sends add sendBytes to that link's bytes per microbatch, both ways
 * (F5). So E's links carry at least changing x sendBytes per microbatch, and one of them, L*, at
 * least its share by bytes/s: its step is at least s* = changing x sendBytes / (E's bytes/s), and
 * at least n_lo = ceil(changing x (E's slowest bytes/s) / (E's bytes/s)) split replicas cross it
 * (a link's step is its bytes over at most its best bytes/s). (The same holds of the links
 * touching the last class's sites, where every split route ends; the caller passes either.)
 * Each replica crossing L* takes at least {@link roundTripFloorAtLeastS} of its layout with that
 * crossing at its latency plus s*; the busiest of them runs some m, and the other dp - n replicas
 * (n >= n_lo of them on L*) carry at least M - n m, so the busiest other runs at least
 * ceil((M - n m) / (dp - n)) and takes at least F6's row without link terms at that count (k x a
 * layout's slowest step + its bubble, the least over all layouts). For m < M / dp that count does
 * not fall as n grows, so n = n_lo bounds every n; for m at or above ceil(M / dp) the crossing
 * replica's own floor there does. The least over m of the larger of the two (the first rising,
 * the second falling in m) is found by bisection; wherever it ends, the crossing floor at its end
 * bounds every larger m and the others' floor one below it every smaller m. `hosted` lists the
 * split layouts whose stages sit on sites hosting their classes (a split replica of the hosting
 * uses one of them); 0 without any or without a profile (schedules other than 1F1B and ZB-H1).
 * n_lo counts each replica once per link: true while a replica is split once and its one-chunk
 * chain crosses that cut once each way (the profiles exist for one chunk per stage only); a
 * chunked or V chain, or a route using a link twice, would need it counted again.
 */
/**
 * Chain evaluations (eq. 5.8 costs pp^2 of them per floor) one ring-pattern search may spend on
 * the several-links floors, so that a search over many hostings of a deep pipeline on many sites
 * stays bounded (the search cannot be interrupted): about 2,000 floors at pp 32 (the 4-site
 * planner-scaling rows' bound holders take 600-1,900), 500 at pp 64. A count, not a time.
 */
export const SEVERAL_LINKS_FLOOR_BUDGET = 2_000_000;

export function severalLinksSplitFloorOf(c: ConfigCoefficients): {
  readonly splitLayouts: readonly { readonly stageSite: readonly number[] }[];
  readonly floorS: (hosted: readonly number[], changing: number, endBytesPerS: number, endLeastBytesPerS: number) => number;
} {
  const split = c.layouts.filter((l) => l.crossings > 0 && l.roundTrip !== undefined);
  const splitLayouts = split.map((l) => ({ stageSite: l.layout.stageSite }));
  if (split.length === 0) return { splitLayouts, floorS: () => 0 };
  const M = c.totalMicrobatches;
  const dp = c.dp;
  const fewest = fewestMicrobatches(c.config);
  const evenK = Math.max(fewest, Math.ceil(M / dp - 1e-9));
  /** Eq. 5.8 of split layout i at m microbatches with its crossing at latency plus `stepS`, cached; 0 once the budget is spent. */
  const cache = split.map(() => new Map<string, number>());
  const p = c.config.pp;
  let budget = SEVERAL_LINKS_FLOOR_BUDGET;
  const floorOf = (i: number, stepS: number, m: number): number => {
    const key = `${stepS}:${m}`;
    let floor = cache[i]!.get(key);
    if (floor === undefined) {
      // Each evaluation walks O(p^2) chains: past the budget the floor is 0 (a bound still, only weaker).
      if (budget <= 0) return 0;
      budget -= p * p;
      const { layout, roundTrip } = split[i]!;
      const stageSite = layout.stageSite;
      const profile = stepS === 0 ? roundTrip! : { ...roundTrip!, crossS: roundTrip!.crossS.map((x, q) => (stageSite[q] !== stageSite[q + 1] ? x + stepS : x)) };
      floor = roundTripFloorAtLeastS(profile, m);
      cache[i]!.set(key, floor);
    }
    return floor;
  };
  // Any other replica at k microbatches, whole or split: F6's row without link terms, k x its slowest step + its bubble.
  const otherS = (k: number): number => {
    let floor = Infinity;
    for (const l of c.layouts) floor = Math.min(floor, k * l.maxStepS + l.bubbleS);
    return floor;
  };
  /**
   * One split layout's floor: the least over m of the larger of its crossing replica's floor and
   * the busiest other replica's (the least over layouts of this is the least over m of the larger
   * of the least crossing floor and the others', so each layout's is computed once and cached).
   */
  const layoutCache = split.map(() => new Map<string, number>());
  const layoutFloorS = (i: number, changing: number, endBytesPerS: number, endLeastBytesPerS: number): number => {
    const key = `${changing}:${endBytesPerS}:${endLeastBytesPerS}`;
    let floor = layoutCache[i]!.get(key);
    if (floor !== undefined) return floor;
    const stepS = (changing * c.sendBytes) / endBytesPerS;
    const onBusiest = Math.max(1, Math.ceil((changing * endLeastBytesPerS) / endBytesPerS - 1e-9));
    const crossingS = (m: number): number => floorOf(i, stepS, m);
    if (onBusiest >= dp) {
      floor = crossingS(evenK);
    } else {
      const othersS = (m: number): number => otherS(Math.max(fewest, Math.ceil((M - onBusiest * m) / (dp - onBusiest) - 1e-9)));
      // The least m in [fewest, evenK] with crossingS(m) >= othersS(m) (rising against falling); any
      // m gives a bound: for m' >= m the crossing floor at m, for m' < m the others' at m - 1.
      const low = risingMeetsFalling(fewest, evenK, crossingS, othersS);
      floor = Math.min(crossingS(low), low > fewest ? othersS(low - 1) : Infinity);
    }
    layoutCache[i]!.set(key, floor);
    return floor;
  };
  return {
    splitLayouts,
    floorS: (hosted, changing, endBytesPerS, endLeastBytesPerS) => {
      if (changing <= 1e-9 || hosted.length === 0 || !(endBytesPerS > 0)) return 0;
      let least = Infinity;
      for (const i of hosted) least = Math.min(least, layoutFloorS(i, changing, endBytesPerS, endLeastBytesPerS));
      return least;
    },
  };
}

/**
 * The least m in [fewest, evenK] with rising(m) >= falling(m) (evenK when there is none), by
 * bisection, for the split floors' balance of a split replica's floor (rising in its microbatches)
 * against the other replicas' (falling as it takes more). Most often the others' floor is above
 * the split one just below the even share: then evenK at once.
 */
function risingMeetsFalling(fewest: number, evenK: number, rising: (m: number) => number, falling: (m: number) => number): number {
  let low = fewest;
  let high = evenK;
  if (evenK - 1 >= fewest && rising(evenK - 1) < falling(evenK - 1)) low = evenK;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (rising(mid) >= falling(mid)) high = mid; else low = mid + 1;
  }
  return low;
}
