/**
 * The reference's outer and capacity bounds (frozen copies of src/formulation/closed-form-bounds.ts
 * and capacity-bound.ts as they were before the performance work, with the same later bound
 * changes: ZB-H1's short-pipeline term and 1F1B/ZB-H1's stage floor), split from coefficients.ts.
 */
import { exposedSyncS, roundTripFloorS } from '../../src/model/pipeline';
import { fillLatencyOf, fillStepsOn, stageLinesOf } from '../../src/formulation/stage-floor-coefficients';
import { busiestReplicaMicrobatches, fewestMicrobatches, type ConfigCoefficients, type LayoutCoefficients } from './coefficients';

/** The cost model's exposed sync for this candidate's ZeRO stage and overlap setting. */
const exposureOf = (c: ConfigCoefficients, syncS: number, backwardWindowS: number, forwardWindowS: number): number =>
  exposedSyncS(c.config, c.overlapDp, syncS, backwardWindowS, forwardWindowS);

/**
 * A lower bound on the iteration time of every placement of (config, dp) (docs/formulation.md
 * §4). Either every stage keeps all its replicas on one site — then all replicas share one
 * layout, and that layout's pipeline with ceil(M/dp) microbatches, its link load and its in-site
 * sync bound the time — or some stage spans sites, and the fluid pipeline bound plus the least
 * cross-site sync any stage can pay bound it. `pipelineBoundS` bounds every placement's pipeline
 * phase (the candidate's quick bound).
 */
export function outerLowerBound(c: ConfigCoefficients, pipelineBoundS: number): number {
  const k = busiestReplicaMicrobatches(c.totalMicrobatches, c.dp, fewestMicrobatches(c.config));
  if (!Number.isFinite(k)) return Infinity;
  let oneLayout = Infinity;
  for (const layout of c.layouts) {
    if (!layout.fittingMicrobatches.some((m) => m >= k) || layout.maxReplicas < c.dp) continue;
    let linkStep = 0;
    for (const [link, crossings] of layout.crossingsPerLink) linkStep = Math.max(linkStep, (c.dp * crossings * c.sendBytes) / c.linkBytesPerS[link]! + c.linkStepSurplusS[link]!);
    const shortS = Math.max(0, c.config.pp - k) * layout.shortPipelineGapS;
    let pipeline = k * Math.max(layout.maxStepS, linkStep) + layout.bubbleS + shortS + 2 * layout.crossingLatencyS + 2 * layout.crossings * linkStep;
    if (layout.stageFloor) {
      // 1F1B and ZB-H1 (eq. 5.9): the stage line with the crossings before the slowest stage, or the link line.
      let fillSteps = 0;
      let linkLineS = 0;
      for (const [link, crossings] of layout.crossingsPerLink) {
        const step = (c.dp * crossings * c.sendBytes) / c.linkBytesPerS[link]! + c.linkStepSurplusS[link]!;
        fillSteps = Math.max(fillSteps, fillStepsOn(layout, link) * step);
        linkLineS = Math.max(linkLineS, (k + 1) * step + layout.stageFloor.linkRowFixedS);
        // Eq. 5.8 with this link's crossings at that step: the profile's crossings shifted.
        const shifted = { ...layout.roundTrip!, crossS: layout.roundTrip!.crossS.map((x, q) => x + (layout.boundaryLinks![q]!.includes(link) ? step : 0)) };
        linkLineS = Math.max(linkLineS, roundTripFloorS(shifted, k));
      }
      pipeline = Math.max(k * layout.maxStepS + layout.bubbleS + fillLatencyOf(layout) + fillSteps, linkLineS, stageLinesOf(layout, k));
    }
    let exposed = 0;
    c.stages.forEach((_, j) => {
      // Every replica here: stage j's ring has all dp replicas at its site, past a pod if they overflow one.
      const site = layout.layout.stageSite[j]!;
      const ring = c.ringS(j, site, c.dp, c.dp * layout.gpusPerSite.get(site)! > c.podGpus[site]!);
      exposed = Math.max(exposed, exposureOf(c, ring, layout.backwardWindowS[j]!, layout.forwardWindowS[j]!));
    });
    oneLayout = Math.min(oneLayout, pipeline + exposed);
  }
  let spanning = Infinity;
  // Some replica runs at least k microbatches, so some layout must fit k or more in memory.
  const usable = c.layouts.some((l) => l.fittingMicrobatches.some((m) => m >= k));
  // A spanning stage's ring hop leaves its site over one link: the fastest single link bounds it.
  const widest = Math.max(0, ...c.siteWidestLinkBytesPerS);
  if (usable && c.siteIncidentBytesPerS.length > 1 && widest > 0 && c.dp > 1) {
    // Every stage has an in-site ring over at least ceil(dp / sites) replicas somewhere; the stage
    // that spans also pays the cross-site phase.
    // A spanning stage spans with every stage that all layouts place alike, and their
    // hops carry those stages' bytes together.
    let leastSpanExposure = Infinity;
    let inSiteExposure = 0;
    const placedAlike = (j: number, i: number) => c.layouts.every((l) => l.layout.stageSite[j] === l.layout.stageSite[i]);
    const windows = (j: number) => [Math.max(...c.layouts.map((l) => l.backwardWindowS[j]!)), Math.max(...c.layouts.map((l) => l.forwardWindowS[j]!))] as const;
    c.stages.forEach((_, j) => {
      const alike = c.stages.map((__, i) => i).filter((i) => placedAlike(j, i));
      const crossS = alike.reduce((sum, i) => sum + c.crossGradientBytes[i]!, 0) / widest + 2 * c.minLinkLatencyS;
      const exposure = Math.max(...alike.map((i) => exposureOf(c, c.intraSyncSpreadS[i]! + crossS, ...windows(i))));
      leastSpanExposure = Math.min(leastSpanExposure, exposure);
      inSiteExposure = Math.max(inSiteExposure, exposureOf(c, c.intraSyncSpreadS[j]!, ...windows(j)));
    });
    spanning = pipelineBoundS + Math.max(leastSpanExposure, inSiteExposure);
  }
  return Math.min(oneLayout, spanning) + c.optimizerS;
}

/**
 * Capacity bound (docs/formulation.md §4): if every replica finishes by T, a replica with layout
 * l runs at most kmax_l(T) microbatches (the largest fitting k with k x slowest step + bubble +
 * fill latency + optimizer <= T). Spreading each replica's microbatches over its GPUs, a GPU at
 * site s carries at most v_s(T) = max over layouts touching s of kmax_l(T) / (GPUs per replica),
 * so dp replicas carry at most the fractional knapsack of the sites' GPUs by v_s. The least
 * breakpoint T at which that reaches M bounds every placement's iteration time.
 */
export function capacityLowerBound(c: ConfigCoefficients, siteGpus: readonly number[]): number {
  // No placement covers the batch when dp replicas of the fewest fitting microbatches exceed it.
  if (c.dp * Math.min(...c.layouts.flatMap((l) => l.fittingMicrobatches)) > c.totalMicrobatches) return Infinity;
  const gpusPerReplica = c.config.tp * c.config.cp * c.config.pp;
  // Each replica also waits out its own exposed sync: the spread in-site ring less its layout's windows.
  const ownExposureS = (l: LayoutCoefficients) => Math.max(0, ...c.stages.map((_, j) => exposureOf(c, c.intraSyncSpreadS[j]!, l.backwardWindowS[j]!, l.forwardWindowS[j]!)));
  const fixedS = (l: LayoutCoefficients) => l.bubbleS + fillLatencyOf(l) + c.optimizerS + ownExposureS(l);
  // 1F1B and ZB-H1: at least the largest stage line (eq. 5.9a) plus the optimizer and the replica's own exposure.
  // Added as in src: each link step at least the link's surplus (docs/formulation.md eq. 2.1).
  const surplusOf = (l: LayoutCoefficients) => {
    let fillS = 0;
    let stepS = 0;
    for (const link of l.crossingsPerLink.keys()) {
      fillS = Math.max(fillS, fillStepsOn(l, link) * c.linkStepSurplusS[link]!);
      stepS = Math.max(stepS, c.linkStepSurplusS[link]!);
    }
    return { fillS, stepS };
  };
  const finishS = (l: LayoutCoefficients, k: number) => {
    const { fillS, stepS } = surplusOf(l);
    if (!l.stageFloor) return k * Math.max(l.maxStepS, stepS) + fixedS(l) + fillS;
    const linkLineS = stepS > 0 ? (k + 1) * stepS + l.stageFloor.linkRowFixedS + c.optimizerS + ownExposureS(l) : 0;
    return Math.max(k * l.maxStepS + fixedS(l) + fillS, stageLinesOf(l, k) + c.optimizerS + ownExposureS(l), linkLineS);
  };
  const breakpoints = [...new Set(c.layouts.flatMap((l) => l.fittingMicrobatches.map((k) => finishS(l, k))))].sort((a, b) => a - b);
  const carried = (T: number): number => {
    const perGpu = siteGpus.map(() => 0);
    for (const l of c.layouts) {
      let kmax = 0;
      for (const k of l.fittingMicrobatches) if (finishS(l, k) <= T * (1 + 1e-12)) kmax = Math.max(kmax, k);
      if (kmax === 0) continue;
      for (const site of l.gpusPerSite.keys()) perGpu[site] = Math.max(perGpu[site]!, kmax / gpusPerReplica);
    }
    let gpusLeft = c.dp * gpusPerReplica;
    let total = 0;
    for (const site of siteGpus.map((_, s) => s).sort((a, b) => perGpu[b]! - perGpu[a]!)) {
      const used = Math.min(gpusLeft, siteGpus[site]!);
      total += used * perGpu[site]!;
      gpusLeft -= used;
    }
    return total;
  };
  let lo = 0;
  let hi = breakpoints.length - 1;
  if (hi < 0 || carried(breakpoints[hi]!) < c.totalMicrobatches * (1 - 1e-12)) return Infinity;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (carried(breakpoints[mid]!) >= c.totalMicrobatches * (1 - 1e-12)) hi = mid;
    else lo = mid + 1;
  }
  return breakpoints[lo]!;
}
