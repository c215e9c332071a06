/**
 * The placement MIP's in-site sync rows (docs/formulation.md §3, F12-F14b): whether a site spills
 * out of one pod (F12), replica-count thresholds per stage class and site (F13), and each stage's
 * in-site ring time I_j at those thresholds (F14) and along the chords between them (F14b).
 */
import type { ConfigCoefficients } from './coefficients';
import { choicesPlacing, replicasSiteCanHold, type Columns } from './placement-mip-replicas';
import { dataParallelRankSpacing } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';

/** I_j per stage, and the most any row requires of it. */
export interface InSiteSyncColumns {
  readonly columns: readonly number[];
  readonly maxS: readonly number[];
}

/** F12: pods[site] = 1 when the GPUs used at a site exceed one full-bisection pod. */
export function addPodRows(cols: Columns, scenario: Scenario): (number | undefined)[] {
  const { b, choices } = cols;
  return scenario.sites.map((site) => {
    if (site.podGpus >= site.gpus || site.podOversubscription <= 1) return undefined;
    const z = b.addColumn(`spans_pods[${site.name}]`, 0, 1, { integer: true });
    const terms: (readonly [number, number])[] = choices.filter((ch) => ch.layout.gpusPerSite.has(site.index))
      .map((ch) => [ch.replicasColumn, ch.layout.gpusPerSite.get(site.index)!] as const);
    b.addRow(`pod_spill[${site.name}]`, [...terms, [z, -(site.gpus - site.podGpus)]], -Infinity, site.podGpus);
    return z;
  });
}

/**
 * F14b: the largest slope s with ring(n) >= ring(t) + s (n - t) for every replica count n in
 * [t, maxCount]. The ring time 2(n-1)/n A + 2(n-1) L is concave in n within a network tier, and
 * jumps up where the group leaves the scale-up domain; so the least chord slope from t is reached
 * at the end of a tier piece: just before or after the jump, or at maxCount.
 */
function ringChordSlope(c: ConfigCoefficients, stage: number, site: Scenario['sites'][number], t: number, maxCount: number, spansPods: boolean): number {
  if (maxCount <= t) return 0;
  const atT = c.ringS(stage, site.index, t, spansPods);
  // The ring's ranks are dataParallelRankSpacing GPUs apart (tp, or tp x pp under tp-cp-ep-pp-dp), cp of them per replica.
  const lastScaleUp = Math.floor(site.scaleUpDomainGpus / (c.config.cp * dataParallelRankSpacing(c.config)));
  let slope = Infinity;
  for (const n of [lastScaleUp, lastScaleUp + 1, maxCount]) {
    if (n > t && n <= maxCount) slope = Math.min(slope, (c.ringS(stage, site.index, n, spansPods) - atT) / (n - t));
  }
  // A hair under the exact chord, so rounding can never cut off a real placement.
  return Number.isFinite(slope) ? Math.max(0, slope * (1 - 1e-9)) : 0;
}

/** Replica-count thresholds at which a stage's in-site ring time is bounded from below. */
const RING_THRESHOLDS = [2, 16] as const;
/** Larger thresholds, each added only where the chords so far fall short of the ring by more than the tolerance. */
const RING_EXTRA_THRESHOLDS = [128, 1024, 8192] as const;
/** Share of the candidate's lower bound by which the F14b chords may undershoot a ring before another threshold is added. */
export const RING_CHORD_TOLERANCE = 0.002;

/**
 * The replica-count thresholds of one (class, site): 2 and 16, then each larger one while the
 * chord from the last threshold undershoots some stage's ring (sampled at powers of two up to the
 * most replicas the site can hold) by more than `toleranceS`. The choice affects only tightness:
 * every threshold's rows are valid.
 */
function ringThresholds(c: ConfigCoefficients, cls: readonly number[], site: Scenario['sites'][number], maxCount: number, toleranceS: number): number[] {
  const chosen: number[] = RING_THRESHOLDS.filter((t) => t <= c.dp);
  for (const next of RING_EXTRA_THRESHOLDS) {
    const last = chosen[chosen.length - 1];
    if (last === undefined || next >= maxCount) break;
    const undershoot = Math.max(...cls.flatMap((j) => [false, true].map((pods) => {
      const slope = ringChordSlope(c, j, site, last, maxCount, pods);
      const atLast = c.ringS(j, site.index, last, pods);
      let worst = 0;
      for (let n = 2 * last; n <= maxCount; n *= 2) worst = Math.max(worst, c.ringS(j, site.index, n, pods) - atLast - slope * (n - last));
      return worst;
    })));
    if (undershoot <= toleranceS) break;
    chosen.push(next);
  }
  return chosen;
}

/**
 * F13-F14: I_j, stage j's in-site ring time: at each site, once at least t replicas of its class
 * are there (binary reached[class,site,t]), I_j is at least the ring time of t ranks at that site,
 * with the pod-oversubscribed bandwidth when the site spills out of a pod. The ring time rises
 * with the rank count, so each threshold's value bounds every larger count.
 */
export function addIntraSiteSyncRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, classes: readonly number[][], podSpans: readonly (number | undefined)[], chordToleranceS: number): InSiteSyncColumns {
  const { b, choices } = cols;
  const intra = c.stages.map((_, j) => b.addColumn(`in_site_sync_s[stage${j}]`, 0, Infinity));
  // The most any row below can require of I_j: its upper bound (I_j only ever needs to meet its
  // rows, and every other row it is in only gets harder as it grows), and the exposure rows' big-M.
  const maxS = c.stages.map(() => 0);
  const requires = (j: number, valueS: number) => { maxS[j] = Math.max(maxS[j]!, valueS); };
  classes.forEach((cls, ci) => {
    for (const site of scenario.sites) {
      const placing = choicesPlacing(choices, cls, site.index);
      if (placing.length === 0) continue;
      const maxCount = replicasSiteCanHold(c, placing, site);
      const count = placing.map((ch) => [ch.replicasColumn, 1] as const);
      const thresholds = ringThresholds(c, cls, site, maxCount, chordToleranceS);
      thresholds.forEach((t, ti) => {
        // The counts where this threshold's rows are the tightest: up to the next threshold.
        const segmentEnd = Math.min(maxCount, (thresholds[ti + 1] ?? Infinity) - 1);
        const reached = b.addColumn(`reached[class${ci},${site.name},${t}]`, 0, 1, { integer: true });
        b.addRow(`threshold[class${ci},${site.name},${t}]`, [...count, [reached, -Math.max(1, maxCount - t + 1)]], -Infinity, t - 1);
        for (const j of cls) {
          const ring = c.ringS(j, site.index, t, false);
          if (ring > 0) b.addRow(`in_site_sync[stage${j},${site.name},${t}]`, [[intra[j]!, 1], [reached, -ring]], 0, Infinity);
          requires(j, ring);
          // F14b: past the threshold the ring keeps growing (2(n-1) step latencies): the chord from t on.
          const slope = ringChordSlope(c, j, site, t, maxCount, false);
          // Only where the chord climbs above the threshold's value by more than the tolerance.
          if (slope * (segmentEnd - t) > chordToleranceS) {
            b.addRow(`in_site_sync_chord[stage${j},${site.name},${t}]`, [[intra[j]!, 1], [reached, -ring], ...count.map(([col]) => [col, -slope] as const)], -slope * t, Infinity);
            requires(j, ring + slope * (maxCount - t));
          }
          const z = podSpans[site.index];
          const podRing = c.ringS(j, site.index, t, true);
          if (z !== undefined && podRing > ring) {
            b.addRow(`in_site_sync_pods[stage${j},${site.name},${t}]`, [[intra[j]!, 1], [reached, -podRing], [z, -podRing]], -podRing, Infinity);
            requires(j, podRing);
            const podSlope = ringChordSlope(c, j, site, t, maxCount, true);
            if (podSlope * (segmentEnd - t) > chordToleranceS) {
              // Active only when the site spills out of a pod: relaxed by podSlope (maxCount - t) otherwise.
              const relax = podSlope * (maxCount - t);
              b.addRow(`in_site_sync_pods_chord[stage${j},${site.name},${t}]`,
                [[intra[j]!, 1], [reached, -podRing], [z, -podRing - relax], ...count.map(([col]) => [col, -podSlope] as const)], -podSlope * t - podRing - relax, Infinity);
              requires(j, podRing + podSlope * (maxCount - t));
            }
          }
        }
      });
    }
  });
  intra.forEach((column, j) => b.setColumnUpper(column, maxS[j]!));
  return { columns: intra, maxS };
}
