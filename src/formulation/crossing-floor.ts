/**
 * Crossing floor (docs/formulation.md §4, step 3(d)): a lower bound on the pipeline phase of a
 * placement in which some replicas must be split across sites, a relaxation of F5 and F6's link
 * rows. The ring-pattern bound (ring-pattern-bound.ts) adds it to hostings whose classes make
 * replicas change site, so that avoiding every cross-site ring by splitting replicas is not free.
 */
import type { ConfigCoefficients } from './coefficients';
import { busiestReplicaMicrobatches, fewestMicrobatches } from './microbatch-counts';

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
  let leastCrossings = Infinity;
  let leastCrossingsOnLink0 = Infinity;
  let leastFixedS = Infinity;
  // Whole layouts: a replica of k microbatches on one takes at least k x its slowest step + its bubble.
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
