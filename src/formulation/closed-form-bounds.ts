/**
 * Closed-form lower bounds on every placement of one candidate (config, dp), computed for all
 * candidates in the refine phase (docs/formulation.md §4, step 3): the outer bound (a), the
 * forced-spanning bound (c), and in a framework's space the ZeRO-3 gather bound (§8). The capacity
 * bounds (b) and (e) are in capacity-bound.ts and layout-capacity-bound.ts, the ring-pattern bound
 * (d) in ring-pattern-bound.ts.
 */
import { roundTripFloorLineOf, type ConfigCoefficients } from './coefficients';
import { busiestReplicaMicrobatches, fewestMicrobatches } from './microbatch-counts';
import { exposureOf, largestWindowsS, stageClasses } from './stage-classes';
import { fillLatencyOf, fillStepsOn, stageLinesOf } from './stage-floor-coefficients';

/**
 * Outer bound (docs/formulation.md §4, step 3(a)): a lower bound on the iteration time of every
 * placement of (config, dp). Either every stage keeps all its replicas on one site — then all
 * replicas share one layout, and that layout's pipeline with ceil(M/dp) microbatches, its link
 * load and its in-site sync bound the time — or some stage spans sites, and the fluid pipeline bound plus the least
 * cross-site sync any stage can pay bound it. `pipelineBoundS` bounds every placement's pipeline
 * phase (the candidate's quick bound).
 */
export function outerLowerBound(c: ConfigCoefficients, pipelineBoundS: number): number {
  const k = busiestReplicaMicrobatches(c.totalMicrobatches, c.dp, fewestMicrobatches(c.config));
  if (!Number.isFinite(k)) return Infinity;
  const spanning = spanningBranchS(c, k, pipelineBoundS);
  let oneLayout = Infinity;
  for (const layout of c.layouts) {
    if (!layout.fittingMicrobatches.some((m) => m >= k) || layout.maxReplicas < c.dp) continue;
    let linkStep = 0;
    // Fill and drain: the crossings routed over a link each take at least its step.
    let fillSteps = 0;
    // 1F1B and ZB-H1 (eq. 5.9): the stage line charges the crossings before the slowest stage, the link line (k + 1) steps.
    let linkLineS = 0;
    // Every replica crosses each link: the capacity step plus the link's surplus (eq. 2.1).
    const steps = new Map<number, number>();
    for (const [link, crossings] of layout.crossingsPerLink) {
      const step = (c.dp * crossings * c.sendBytes) / c.linkBytesPerS[link]! + (c.linkStepSurplusS[link] ?? 0);
      steps.set(link, step);
      linkStep = Math.max(linkStep, step);
      fillSteps = Math.max(fillSteps, fillStepsOn(layout, link) * step);
      if (layout.stageFloor) linkLineS = Math.max(linkLineS, (k + 1) * step + layout.stageFloor.linkRowFixedS);
    }
    // ZB-H1's short-pipeline gaps shrink as k grows, but never faster than k x maxStep grows: k is the least.
    const shortS = Math.max(0, c.config.pp - k) * layout.shortPipelineGapS;
    const pipeline = layout.stageFloor
      ? Math.max(k * layout.maxStepS + layout.bubbleS + fillLatencyOf(layout) + fillSteps, linkLineS, stageLinesOf(layout, k))
      : k * Math.max(layout.maxStepS, linkStep) + layout.bubbleS + shortS + 2 * layout.crossingLatencyS + fillSteps;
    let exposed = 0;
    c.stages.forEach((_, j) => {
      // Every replica here: stage j's ring has all dp replicas at its site, past a pod if they overflow one.
      const site = layout.layout.stageSite[j]!;
      const ring = c.ringS(j, site, c.dp, c.dp * layout.gpusPerSite.get(site)! > c.podGpus[site]!);
      exposed = Math.max(exposed, exposureOf(c, ring, layout.backwardWindowS[j]!, layout.forwardWindowS[j]!));
    });
    // Eq. 5.8 with each link's crossings at that step (the others' at none): only raises this
    // layout's term, so it is taken only where the term is below the least so far.
    let floorS = 0;
    if (layout.stageFloor && pipeline + exposed < Math.min(oneLayout, spanning)) {
      for (const [link, step] of steps) floorS = Math.max(floorS, roundTripFloorLineOf(layout, k, link, step).valueS);
    }
    oneLayout = Math.min(oneLayout, Math.max(pipeline, floorS) + exposed);
  }
  return Math.min(oneLayout, spanning) + c.optimizerS;
}

/** The outer bound's branch where some stage spans sites: every placement's pipeline bound plus the least exposed cross-site sync. */
function spanningBranchS(c: ConfigCoefficients, k: number, pipelineBoundS: number): number {
  // Some replica runs at least k microbatches, so some layout must fit k or more in memory.
  const usable = c.layouts.some((l) => l.fittingMicrobatches.some((m) => m >= k));
  // A spanning stage's ring hop leaves its site over one link: the fastest single link bounds it.
  const widest = Math.max(0, ...c.siteWidestLinkBytesPerS);
  if (!usable || c.siteIncidentBytesPerS.length <= 1 || widest <= 0 || c.dp <= 1) return Infinity;
  // Every stage has an in-site ring over at least ceil(dp / sites) replicas somewhere; the stage
  // that spans also pays the cross-site phase.
  // A spanning stage's whole class spans over the same ring (stageClasses): its hops carry the
  // class's bytes, and every stage of the class pays the phase.
  let leastSpanExposure = Infinity;
  let inSiteExposure = 0;
  for (const cls of stageClasses(c)) {
    const crossS = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0) / widest + 2 * c.minLinkLatencyS;
    let classExposure = 0;
    for (const j of cls) {
      const [windowB, windowF] = largestWindowsS(c, j);
      classExposure = Math.max(classExposure, exposureOf(c, c.intraSyncSpreadS[j]! + crossS, windowB, windowF));
      inSiteExposure = Math.max(inSiteExposure, exposureOf(c, c.intraSyncSpreadS[j]!, windowB, windowF));
    }
    leastSpanExposure = Math.min(leastSpanExposure, classExposure);
  }
  return pipelineBoundS + Math.max(leastSpanExposure, inSiteExposure);
}

/**
 * Forced-spanning bound (docs/formulation.md §4, step 3(c)): stage j of all dp replicas is hosted
 * on at least k_j sites in every placement, where k_j is the larger of
 * - the fewest sites whose GPUs (largest first) hold dp x tp x cp, the stage alone; and
 * - the fewest sites that can hold stage j of all dp replicas: a replica with stage j at site s
 *   puts at least the fewest GPUs any such layout puts at s there, since a layout's run of stages
 *   at s around j comes with it (with one cut per replica, a middle stage brings half the
 *   pipeline), so s holds at most G_s / that many of them (fewestHostingSites).
 * Stages of one class (stageClasses) share their sites, so they span together, and their rings'
 * hops carry the class's bytes together. Every stage with k_j >= 2 pays the cross-site phase: its
 * class's ring sends 2(k_j - 1)/k_j of the class's bytes on each hop (at most the widest link's
 * speed), the rings' hops together put sum k_j 2(k_j - 1)/k_j bytes_j on link directions (at most
 * all links' capacity both ways), and the hop latencies add up to at least 2 (k - 1) x the
 * shortest link latency. With the in-site ring over ceil(dp / sites)
 * replicas (intraSyncSpreadS) and each stage's largest windows, the exposed sync of the worst such
 * stage, on top of every placement's pipeline bound, bounds the iteration. -Infinity when no stage
 * must span.
 */
export function forcedSpanningLowerBound(c: ConfigCoefficients, siteGpus: readonly number[], pipelineBoundS: number): number {
  const largestFirst = [...siteGpus].sort((a, b) => b - a);
  const need = c.dp * c.config.tp * c.config.cp;
  let held = 0;
  let sitesForAnyStage = 0;
  while (sitesForAnyStage < largestFirst.length && held < need) held += largestFirst[sitesForAnyStage++]!;
  const widest = Math.max(0, ...c.siteWidestLinkBytesPerS);
  const allLinksBothWays = c.linkBytesPerS.reduce((sum, bw) => sum + 2 * bw, 0);
  if (held < need || widest <= 0 || allLinksBothWays <= 0 || siteGpus.length < 2) return -Infinity;
  // A class's stages share their sites (stageClasses): one that must span makes all of them span,
  // over the same ring, so each hop carries the class's bytes together.
  const sitesOfStage = c.stages.map(() => sitesForAnyStage);
  let largestHopBytes = 0;
  let hopBytes = 0;
  let mostSites = 2;
  for (const cls of stageClasses(c)) {
    const k = Math.max(sitesForAnyStage, ...cls.map((j) => fewestHostingSites(c, siteGpus, j)));
    if (!Number.isFinite(k)) return Infinity; // the sites cannot hold this class of every replica
    if (k < 2) continue;
    for (const j of cls) sitesOfStage[j] = k;
    const share = (2 * (k - 1)) / k;
    const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
    largestHopBytes = Math.max(largestHopBytes, share * bytes);
    hopBytes += k * share * bytes;
    mostSites = Math.max(mostSites, k);
  }
  if (sitesOfStage.every((k) => k < 2)) return -Infinity;
  const crossS = Math.max(largestHopBytes / widest, hopBytes / allLinksBothWays) + 2 * (mostSites - 1) * c.minLinkLatencyS;
  let exposed = 0;
  c.stages.forEach((_, j) => {
    const [windowB, windowF] = largestWindowsS(c, j);
    exposed = Math.max(exposed, exposureOf(c, c.intraSyncSpreadS[j]! + (sitesOfStage[j]! >= 2 ? crossS : 0), windowB, windowF));
  });
  return pipelineBoundS + exposed + c.optimizerS;
}

/**
 * The fewest sites that can host stage j of all dp replicas: a replica with stage j at site s
 * brings its whole run of stages there, so s holds at most G_s / (the fewest GPUs a layout with
 * stage j there puts at s) of them, and the sites hosting stage j must hold dp together.
 * Infinity when all the sites together cannot (no placement has stage j anywhere for every replica).
 */
function fewestHostingSites(c: ConfigCoefficients, siteGpus: readonly number[], j: number): number {
  const capacities = siteGpus.map((gpus, s) => {
    let fewest = Infinity;
    for (const l of c.layouts) if (l.layout.stageSite[j] === s) fewest = Math.min(fewest, l.gpusPerSite.get(s)!);
    return Math.floor(gpus / fewest);
  }).sort((a, b) => b - a);
  let held = 0;
  for (let k = 0; k < capacities.length; k++) {
    held += capacities[k]!;
    if (held >= c.dp) return k + 1;
  }
  return Infinity;
}

/**
 * ZeRO-3 gather bound (docs/formulation.md §8): ZeRO-3 gathers the weights for every
 * microbatch: each step of stage j lasts at least 1.5 x that stage's gradient sync (evaluate.ts,
 * zero3Exposed: step = max(compute, 1.5 x sync)), the sync at least intraSyncSpreadS[j] (some
 * site holds ceil(dp / sites) of the stage's replicas), and the busiest replica runs at least k
 * microbatches, each through every stage. 0 below ZeRO-3.
 */
export function zero3GatherLowerBound(c: ConfigCoefficients): number {
  if (c.config.zero < 3) return 0;
  const k = busiestReplicaMicrobatches(c.totalMicrobatches, c.dp, fewestMicrobatches(c.config));
  if (!Number.isFinite(k)) return 0;
  return k * 1.5 * Math.max(0, ...c.intraSyncSpreadS);
}
