/**
 * Ring-pattern bound (docs/formulation.md §4, step 3(d)): the least cross-site gradient phase
 * over every way the candidate's stage classes can be hosted by the sites, found by a
 * depth-first branch and bound over classes.
 *
 * Every placement hosts stage class c on a set of sites H_c. The cost model syncs each class's
 * gradients in a ring over H_c in site order, so the H_c fix the cross-site phase exactly (at the
 * best link speed any network setting reaches): the busiest link direction's ring bytes plus
 * 2(k-1) hop latencies; and a class on k sites has a site holding ceil(dp/k) of its replicas, so
 * an in-site ring at least that long. Which families (H_c) a placement can produce is limited in
 * three ways that the search enforces, all necessary conditions, so the least exposure over the
 * families that pass is at most every placement's:
 * - a replica is whole on one site or split once, so along the classes a site is hosted as
 *   prefix (cut where one of its split layouts starts), gap, suffix (cut where one ends): its
 *   membership reads 1..1 0..0 1..1, with each change at a cut some layout makes there;
 * - GPUs: with at least one replica of class c on each site of H_c, dp replicas of every class
 *   must fit the sites' GPUs (transportation feasibility, checked by Gale's condition over site
 *   subsets, fractional replicas allowed);
 * - changes of site: a replica changes site at most once, so over disjoint runs of class
 *   boundaries the replicas that must change (all but those that can keep the run's classes on
 *   one site hosting all of them) add up to at most dp;
 * - given an integer solver (`wholeReplicas`; the planner's is HiGHS), whole replicas, asked of a
 *   complete hosting that would be the least so far: dp whole replicas on layouts that keep every
 *   stage on a site hosting its class fit the sites' GPUs, carry the batch and put a replica of
 *   each class on each site hosting it (hosting-integrality.ts, an integer program);
 * - on request, with the caller's threshold, the same with every replica's pipeline phase under
 *   the threshold less the hosting's exposure, each link shared by the replicas crossing it
 *   (hosting-pipeline-caps.ts): a hosting without such a placement counts at the threshold.
 * Placements and layouts beyond these (which site pairs a replica joins, microbatch counts
 * beyond the batch's sum) are relaxed, so the result is a lower bound, not the exact optimum.
 *
 * A hosting whose classes make n replicas change site also makes them cross links every
 * microbatch (F5, F6's link rows): {@link crossingFloorOf} lifts such a hosting's pipeline term to
 * what n split replicas take at least, so that hostings which avoid the cross-site ring by
 * splitting every replica (each class on one site) are not free. With one link, a complete
 * hosting's split replicas also pay eq. 5.8's round trips through a split layout it allows
 * ({@link splitRoundTripFloors}): one per window of in-flight microbatches, where the crossing
 * floor charges one in all; with several, those crossing the busiest link touching the first (or
 * last) class's sites do ({@link severalLinksSplitFloorOf}).
 */
import { exposedSyncS } from '../model/pipeline';
import type { Scenario } from '../model/scenario';
import type { ConfigCoefficients } from './coefficients';
import { crossingFloorOf, severalLinksSplitFloorOf, splitRoundTripFloors, type SplitLayoutFloor } from './crossing-floor';
import { anyWholeReplicaPlacement, integralHostingCheck, type IntegerFeasibility } from './hosting-integrality';
import { pipelineCapCheck } from './hosting-pipeline-caps';
import { busiestSiteReplicas, popcount, ringLoadTable } from './ring-pattern-tables';
import { largestWindowsS, stageClasses, undominatedStages } from './stage-classes';

/**
 * Branch-and-bound nodes one candidate may use on up to five sites; past it the bound is not
 * claimed. A node checks Gale's condition over all 2^S site subsets, so on more sites the budget
 * shrinks as 2^S grows (15,000 on six sites, 3,750 on eight): about the same time per candidate.
 */
export const RING_PATTERN_NODE_BUDGET = 30_000;
const nodeBudgetFor = (siteCount: number): number => Math.floor((RING_PATTERN_NODE_BUDGET * 32) / 2 ** Math.max(5, siteCount));
/** Sites beyond which the 2^S subsets per class make the search too wide to try (the node budget caps it below). */
const MAX_SITES = 8;

/** A site's place along the classes: hosted from the start, left after a prefix, not yet hosted, hosted to the end. */
const enum Phase { Prefix, Gap, None, Suffix }

/**
 * A lower bound on every placement's iteration time from the least cross-site phase its class
 * hosting allows: pipelineBoundS + min over feasible hostings of the worst stage's exposed sync
 * (in-site spread ring plus, for spanning stages, that hosting's cross-site phase) + optimizer.
 * -Infinity when not applicable (one site, no links, more than five sites, classes not
 * contiguous) or when the search runs out of its node budget.
 */
export function ringPatternLowerBound(scenario: Scenario, c: ConfigCoefficients, siteGpus: readonly number[], pipelineBoundS: number, nodeBudget = nodeBudgetFor(siteGpus.length)): number {
  return ringPatternSearch(scenario, c, siteGpus, pipelineBoundS, nodeBudget).boundS;
}

export interface RingPattern {
  /** The bound: -Infinity when not claimed, Infinity when no hosting passes. */
  readonly boundS: number;
  /** Sites (bit masks) hosting the first and the last stage class in a least hosting. */
  readonly leastHosting?: { readonly firstClassSites: number; readonly lastClassSites: number };
}

/**
 * The ring-pattern bound, with where a least hosting puts the pipeline's first and last classes.
 * `splitRoundTrips` false leaves out the split replicas' round trips (eq. 5.8) and keeps the
 * crossing floor alone, to show what they add (test/bounds-per-candidate.test.ts);
 * `wholeReplicas`, an integer solver, adds the whole-replica test (hosting-integrality.ts); without
 * one (the exhaustive mode's reduced enumeration, the closed-form tests) hostings are not asked it.
 * A hosting whose bound is at least `enoughS` (the caller's pruning threshold) is taken without
 * asking: the result is then either below `enoughS` and the least over hostings that passed the
 * test, or at least `enoughS`, which is all the caller needs of it, and either is a bound.
 * `pipelineCaps` (with a solver and a finite `enoughS`) adds condition (v), every replica's
 * pipeline phase under the threshold (hosting-pipeline-caps.ts): a complete hosting that would be
 * the least so far and has no placement faster than `enoughS` counts at that level.
 */
export function ringPatternSearch(
  scenario: Scenario, c: ConfigCoefficients, siteGpus: readonly number[], pipelineBoundS: number, nodeBudget = nodeBudgetFor(siteGpus.length), splitRoundTrips = true,
  wholeReplicas?: IntegerFeasibility, enoughS = Infinity, pipelineCaps = false,
): RingPattern {
  const siteCount = siteGpus.length;
  if (siteCount < 2 || siteCount > MAX_SITES || scenario.links.length === 0 || c.layouts.length === 0) return { boundS: -Infinity };
  // No placement of whole replicas at all (memory, GPUs, the batch's microbatch counts): no hosting has one.
  if (wholeReplicas && !anyWholeReplicaPlacement(c, siteGpus, wholeReplicas)) return { boundS: Infinity };
  // Condition (v) keeps the least so far at the threshold's level longer, so its search visits more
  // hostings: it gets more nodes (it is asked only of candidates the search without it left open).
  const withCaps = pipelineCaps && wholeReplicas !== undefined && Number.isFinite(enoughS);
  return searchHostings(scenario, c, siteGpus, pipelineBoundS, withCaps ? nodeBudget * CAPPED_NODE_FACTOR : nodeBudget, splitRoundTrips, wholeReplicas, enoughS, withCaps);
}

/** Condition (v)'s search may visit this many times the nodes of the search without it (4-site DeepSeek-V3 row: 55,882 against 30,000). */
const CAPPED_NODE_FACTOR = 4;

/** The branch and bound over hostings, with or without condition (v). */
function searchHostings(
  scenario: Scenario, c: ConfigCoefficients, siteGpus: readonly number[], pipelineBoundS: number, nodeBudget: number, splitRoundTrips: boolean,
  wholeReplicas: IntegerFeasibility | undefined, enoughS: number, withCaps: boolean,
): RingPattern {
  const siteCount = siteGpus.length;
  const classes = stageClasses(c).map((stages) => [...stages].sort((a, b) => a - b));
  classes.sort((a, b) => a[0]! - b[0]!);
  // Contiguous classes in stage order (whole and once-split layouts always give them).
  let expected = 0;
  for (const stages of classes) for (const j of stages) if (j !== expected++) return { boundS: -Infinity };
  const classCount = classes.length;
  const firstStage = classes.map((stages) => stages[0]!);

  // Where each site's membership may change: cuts of split layouts starting (prefix ends) or
  // ending (suffix starts) there; whole layouts let a site host every class.
  const prefixEnds = siteGpus.map(() => new Set<number>());
  const suffixStarts = siteGpus.map(() => new Set<number>());
  const whole = siteGpus.map(() => false);
  for (const { layout } of c.layouts) {
    const first = layout.stageSite[0]!;
    const cut = layout.stageSite.findIndex((s) => s !== first);
    if (cut < 0) { whole[first] = true; continue; }
    prefixEnds[first]!.add(cut);
    suffixStarts[layout.stageSite[cut]!]!.add(cut);
  }
  const hostsAll = siteGpus.map((_, s) => whole[s]! || [...prefixEnds[s]!].some((a) => [...suffixStarts[s]!].some((b) => b <= a)));

  const table = ringLoadTable(scenario, siteCount);
  const directionBytesPerS = c.linkBytesPerS.flatMap((bw) => [bw, bw]);
  const classBytes = classes.map((stages) => stages.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0));
  const classGpus = classes.map((stages) => stages.length * c.config.tp * c.config.cp);
  const windows = c.stages.map((_, j) => largestWindowsS(c, j));
  const subsetCount = 1 << siteCount;
  const sitesIn = Uint8Array.from({ length: subsetCount }, (_, h) => popcount(h));
  // In-site ring of stage j when its class is hosted by the sites in h (eq. 4.1): one of them
  // holds at least the busiest-site count of replicas (ceil(dp / |h|), more when small sites cap
  // their share; busiestSiteReplicas), and a ring never gets faster with more ranks.
  const classOfStage = new Int32Array(c.stages.length);
  classes.forEach((stages, i) => { for (const j of stages) classOfStage[j] = i; });
  const inSiteS = c.stages.map((_, j) => Float64Array.from({ length: subsetCount }, (_, h) => {
    const gpus = classGpus[classOfStage[j]!]!;
    const replicas = busiestSiteReplicas(c.dp, siteGpus, gpus, h);
    let least = Infinity;
    for (let site = 0; site < siteCount; site++) {
      if (h & (1 << site) && Math.floor(siteGpus[site]! / gpus) >= replicas) least = Math.min(least, c.ringS(j, site, replicas, false));
    }
    return least;
  }));
  const exposure = (j: number, h: number, crossS: number) => exposedSyncS(c.config, c.overlapDp, inSiteS[j]![h]! + crossS, windows[j]![0], windows[j]![1]);
  // Exposure grows with the sync (so with the gradient bytes) and shrinks with the windows: within
  // a class only the stages no other stage beats on all three count (as for the MIP's F11 rows).
  const decisive = classes.map((stages) => undominatedStages(c, stages, (j) => windows[j]!));
  /** The worst exposed sync of class i's stages hosted by h, with the cross-site phase when it spans. */
  const classExposure = (i: number, h: number, crossS: number) => {
    let worst = 0;
    for (const j of decisive[i]!) worst = Math.max(worst, exposure(j, h, crossS));
    return worst;
  };

  const hosting = new Int32Array(classCount);
  const load = new Float64Array(directionBytesPerS.length);
  let nodes = 0;
  let best = Infinity;
  let leastHosting: RingPattern['leastHosting'];

  // Gale's condition, kept as classes are added (each with one replica per hosting site): for every
  // site subset T, the replicas still to place of the classes hosted only inside T fit T's spare GPUs.
  const spareGpus = siteGpus.slice();
  const demandInside = new Float64Array(subsetCount);
  const supplyOf = (subset: number) => { let supply = 0; for (let s = 0; s < siteCount; s++) if (subset & (1 << s)) supply += spareGpus[s]!; return supply; };
  const addClass = (i: number, h: number, sign: 1 | -1) => {
    for (let s = 0; s < siteCount; s++) if (h & (1 << s)) spareGpus[s]! -= sign * classGpus[i]!;
    const rest = sign * (c.dp - sitesIn[h]!) * classGpus[i]!;
    for (let subset = h; subset < subsetCount; subset = (subset + 1) | h) demandInside[subset]! += rest;
  };
  const gpusSuffice = (): boolean => {
    for (let s = 0; s < siteCount; s++) if (spareGpus[s]! < -1e-9) return false;
    for (let subset = 1; subset < subsetCount; subset++) if (demandInside[subset]! > supplyOf(subset) + 1e-9) return false;
    return true;
  };
  // A class on one site has no cross-site phase: its exposure depends on its hosting alone,
  // tabulated once. Along the search path, fixedWorst[i] is the worst of these over classes
  // 0..i-1 that stay on one site, and spanningClasses[0..spanningCount[i]-1] are those that span.
  const oneSiteExposure = classes.map((_, i) => Float64Array.from({ length: subsetCount }, (_, h) => (h > 0 && sitesIn[h]! < 2 ? classExposure(i, h, 0) : 0)));
  const fixedWorst = new Float64Array(classCount + 1);
  const spanningCount = new Int32Array(classCount + 1);
  const spanningClasses = new Int32Array(classCount);
  /** The worst exposed sync of classes 0..upTo-1 given the cross-site phase of their rings so far. */
  const exposedSoFar = (upTo: number, mostSites: number, hopLatencyS: number): number => {
    let busiest = 0;
    for (let d = 0; d < load.length; d++) if (load[d]! > 0) busiest = Math.max(busiest, load[d]! / directionBytesPerS[d]!);
    const crossS = busiest > 0 ? busiest + 2 * (mostSites - 1) * hopLatencyS : 0;
    let worst = fixedWorst[upTo]!;
    for (let k = 0; k < spanningCount[upTo]!; k++) {
      const i = spanningClasses[k]!;
      worst = Math.max(worst, classExposure(i, hosting[i]!, crossS));
    }
    return worst;
  };

  // Fewest sites first: hostings that span less are cheaper, so good incumbents come early.
  const subsets = Array.from({ length: subsetCount - 1 }, (_, k) => k + 1).filter((h) => popcount(h) <= c.dp).sort((a, b) => popcount(a) - popcount(b) || a - b);
  /**
   * A replica changes site at most once (whole, or split once), so over disjoint runs of class
   * boundaries the replicas that must change add up to at most dp. Between classes k and i, every
   * replica changes but those that keep classes k..i on one site hosting all of them, each using
   * their GPUs there (less one replica of each earlier class the site hosts); at one boundary, at
   * least one replica leaves each site that stops hosting and enters each that starts.
   * changesUpTo[i]: the most that provably change at boundaries 1..i, over disjoint runs.
   */
  const changesUpTo = new Float64Array(classCount);
  // usedBefore[k * S + s]: GPUs of one replica of each class before k that site s hosts.
  const usedBefore = new Float64Array((classCount + 1) * siteCount);
  const changesThrough = (i: number): number => {
    const before = hosting[i - 1]!;
    const after = hosting[i]!;
    let most = changesUpTo[i - 1]! + Math.max(sitesIn[before & ~after]!, sitesIn[after & ~before]!);
    let common = after;
    let runGpus = classGpus[i]!;
    for (let k = i - 1; k >= 0; k--) {
      common &= hosting[k]!;
      runGpus += classGpus[k]!;
      let stayers = 0;
      for (let site = 0; site < siteCount; site++) {
        if (common & (1 << site)) stayers += Math.max(0, siteGpus[site]! - usedBefore[k * siteCount + site]!) / runGpus;
      }
      most = Math.max(most, changesUpTo[k]! + c.dp - stayers);
      // No site hosts the whole run: longer runs give no more (changesUpTo never falls as k grows).
      if (common === 0) break;
    }
    return most;
  };
  // Where site s may change at class i (its first stage is a cut of one of s's layouts).
  const prefixMayEnd = siteGpus.map((_, site) => Uint8Array.from(firstStage, (stage) => (prefixEnds[site]!.has(stage) ? 1 : 0)));
  const suffixMayStart = siteGpus.map((_, site) => Uint8Array.from(firstStage, (stage) => (suffixStarts[site]!.has(stage) ? 1 : 0)));
  // The sites' phases as one code, two bits per site (at most 8 sites: 65,536 codes).
  const phaseOf = (code: number, site: number): Phase => (code >> (2 * site)) & 3;
  // Per class and phase code, the hostings allowed there and the phase code after each, in the
  // order of `subsets`: each site's membership may change only at a cut some layout makes there.
  // Computed once per (class, code) reached, instead of site by site at every node.
  const transitionCache = new Map<number, Int32Array>();
  const transitions = (i: number, code: number): Int32Array => {
    let pairs = transitionCache.get(i * (1 << (2 * siteCount)) + code);
    if (pairs) return pairs;
    const list: number[] = [];
    for (const h of subsets) {
      let allowed = true;
      let nextCode = 0;
      for (let s = 0; s < siteCount && allowed; s++) {
        const inside = (h & (1 << s)) !== 0;
        const phase = phaseOf(code, s);
        let next = phase;
        if (i === 0) next = inside ? Phase.Prefix : Phase.None;
        else if (phase === Phase.Prefix) { if (!inside) { allowed = prefixMayEnd[s]![i] === 1; next = Phase.Gap; } }
        else if (phase === Phase.Suffix) allowed = inside;
        else if (inside) { allowed = suffixMayStart[s]![i] === 1; next = Phase.Suffix; }
        nextCode |= next << (2 * s);
      }
      if (allowed) list.push(h, nextCode);
    }
    pairs = Int32Array.from(list);
    transitionCache.set(i * (1 << (2 * siteCount)) + code, pairs);
    return pairs;
  };
  // What the replicas that must change site add over the pipeline bound (0 when nothing must):
  // non-decreasing in them, and they only grow along the search path.
  const linkCount = scenario.links.length;
  // Bytes/s of the links touching each site subset's sites.
  const touchingBytesPerS = Float64Array.from({ length: subsetCount }, (_, h) => {
    let sum = 0;
    for (const link of scenario.links) if (h & (1 << link.siteA) || h & (1 << link.siteB)) sum += c.linkBytesPerS[link.index]!;
    return sum;
  });
  const crossingFloor = crossingFloorOf(c, linkCount);
  const crossingExcessS = (changing: number, endBytesPerS: number): number => Math.max(0, crossingFloor(changing, endBytesPerS) - pipelineBoundS);
  // At a complete hosting, the busiest split replica's round trips (eq. 5.8) through a split
  // layout whose stages sit on sites hosting their classes (crossing-floor.ts).
  const splitFloors = splitRoundTrips ? splitRoundTripFloors(c, linkCount) : [];
  const hostedFloors: SplitLayoutFloor[] = [];
  const splitExcessS = (changing: number, queued: boolean): number => {
    if (changing <= 1e-9 || splitFloors.length === 0) return 0;
    hostedFloors.length = 0;
    for (const floor of splitFloors) {
      let hosted = true;
      for (let j = 0; j < floor.stageSite.length && hosted; j++) hosted = (hosting[classOfStage[j]!]! & (1 << floor.stageSite[j]!)) !== 0;
      if (hosted) hostedFloors.push(floor);
    }
    let least = Infinity;
    if (!queued) {
      for (const { floorS } of hostedFloors) least = Math.min(least, floorS(changing));
    } else {
      // The queued floors (a schedule simulation each) in the order of the cheap ones, which are
      // below them: none after a cheap one at the least so far can be less.
      hostedFloors.sort((a, b) => a.floorS(changing) - b.floorS(changing));
      for (const { floorS, queuedFloorS } of hostedFloors) {
        if (floorS(changing) >= least) break;
        least = Math.min(least, queuedFloorS(changing));
      }
    }
    return Number.isFinite(least) ? Math.max(0, least - pipelineBoundS) : 0;
  };
  const wholeReplicasFit = wholeReplicas ? integralHostingCheck(c, siteGpus, classOfStage, classCount, wholeReplicas) : () => true;
  // Condition (v): with a threshold, every replica's pipeline phase under it (hosting-pipeline-caps.ts).
  const underCaps = withCaps ? pipelineCapCheck(c, siteGpus, classOfStage, classCount, wholeReplicas!) : undefined;
  /** The exposure at which a hosting's bound reaches the threshold. */
  const thresholdLevelS = enoughS - pipelineBoundS - c.optimizerS;
  /** What a complete hosting that passes adds over the pipeline bound at least: its exposure, or the threshold's level when no placement of it beats the threshold; undefined when it has no placement. */
  const passedExposureS = (syncS: number, exposedS: number): number | undefined => {
    if (exposedS >= thresholdLevelS) return exposedS;
    // The cap a hair above its value, so that rounding can only weaken it (a replica whose phase ties it).
    const capped = underCaps ? underCaps(hosting, (enoughS - syncS - c.optimizerS) * (1 + 1e-9)) : 'unknown';
    // No placement of this hosting is faster than the threshold (or none exists): it counts at the threshold.
    if (capped === 'infeasible') return thresholdLevelS;
    return capped === 'feasible' || wholeReplicasFit(hosting) ? exposedS : undefined;
  };
  // Several links: the split replicas on the busiest link touching the first (or last) class's sites.
  const severalLinks = splitRoundTrips && linkCount > 1 ? severalLinksSplitFloorOf(c) : undefined;
  const leastTouchingBytesPerS = !severalLinks ? new Float64Array(0) : Float64Array.from({ length: subsetCount }, (_, h) => {
    let least = Infinity;
    for (const link of scenario.links) if (h & (1 << link.siteA) || h & (1 << link.siteB)) least = Math.min(least, c.linkBytesPerS[link.index]!);
    return least;
  });
  const hostedSplit: number[] = [];
  const severalLinksCache = new Map<string, number>();
  const severalLinksExcessS = (changingReplicas: number): number => {
    // The floor grows with the replicas that change site, so it may be taken at fewer: at most 16
    // values per power of two (the whole count rounded down to a multiple of 2^floor(log2(n) - 4)),
    // which repeat across hostings and keep the schedule floors computed to a few hundred.
    const whole = Math.floor(changingReplicas + 1e-9);
    const grain = 2 ** Math.max(0, Math.floor(Math.log2(Math.max(1, whole))) - 4);
    const changing = whole - (whole % grain);
    if (!severalLinks || changing < 1) return 0;
    hostedSplit.length = 0;
    severalLinks.splitLayouts.forEach(({ stageSite }, index) => {
      for (let j = 0; j < stageSite.length; j++) if ((hosting[classOfStage[j]!]! & (1 << stageSite[j]!)) === 0) return;
      hostedSplit.push(index);
    });
    // The ends whose links carry less (the larger step), as the crossing floor takes them.
    const first = hosting[0]!;
    const last = hosting[classCount - 1]!;
    const end = touchingBytesPerS[first]! <= touchingBytesPerS[last]! ? first : last;
    const key = `${changing}|${end}|${hostedSplit.join(',')}`;
    let floorS = severalLinksCache.get(key);
    if (floorS === undefined) {
      floorS = severalLinks.floorS(hostedSplit, changing, touchingBytesPerS[end]!, leastTouchingBytesPerS[end]!);
      severalLinksCache.set(key, floorS);
    }
    return Math.max(0, floorS - pipelineBoundS);
  };
  const search = (i: number, code: number, mostSites: number, hopLatencyS: number): boolean => {
    if (++nodes > nodeBudget) return false;
    const here = i * siteCount;
    const after = here + siteCount;
    if (i === classCount) {
      // A site hosted to the end from the start must be able to host every class.
      for (let s = 0; s < siteCount; s++) if (phaseOf(code, s) === Phase.Prefix && !hostsAll[s]) return true;
      const changing = changesUpTo[classCount - 1]!;
      const syncS = exposedSoFar(classCount, mostSites, hopLatencyS);
      const crossingS = crossingExcessS(changing, Math.min(touchingBytesPerS[hosting[0]!]!, touchingBytesPerS[hosting[classCount - 1]!]!));
      // The split round trips only raise a hosting's value: not needed where it cannot be the least.
      if (syncS + crossingS >= best) return true;
      let exposedS = syncS + Math.max(crossingS, splitExcessS(changing, false));
      // The queued floors only raise it further: only where it would otherwise be the least.
      if (exposedS < best) exposedS = syncS + Math.max(crossingS, splitExcessS(changing, true));
      if (exposedS < best) exposedS = Math.max(exposedS, syncS + severalLinksExcessS(changing));
      // Whole replicas last: an integer program, asked only of a hosting that would be the least
      // and would leave the candidate below the caller's threshold.
      const passedS = exposedS < best ? passedExposureS(syncS, exposedS) : undefined;
      if (passedS !== undefined && passedS < best) { best = passedS; leastHosting = { firstClassSites: hosting[0]!, lastClassSites: hosting[classCount - 1]! }; }
      return true;
    }
    const pairs = transitions(i, code);
    for (let t = 0; t < pairs.length; t += 2) {
      const h = pairs[t]!;
      hosting[i] = h;
      for (let s = 0; s < siteCount; s++) usedBefore[after + s] = usedBefore[here + s]! + (h & (1 << s) ? classGpus[i]! : 0);
      changesUpTo[i] = i === 0 ? 0 : changesThrough(i);
      if (changesUpTo[i]! > c.dp * (1 + 1e-9)) continue;
      const spans = sitesIn[h]! >= 2;
      fixedWorst[i + 1] = spans ? fixedWorst[i]! : Math.max(fixedWorst[i]!, oneSiteExposure[i]![h]!);
      spanningCount[i + 1] = spanningCount[i]! + (spans ? 1 : 0);
      if (spans) spanningClasses[spanningCount[i]!] = i;
      const ring = table.perDirection[h]!;
      if (spans) for (let d = 0; d < load.length; d++) load[d]! += classBytes[i]! * ring[d]!;
      const sites = Math.max(mostSites, sitesIn[h]!);
      const latency = spans ? Math.max(hopLatencyS, table.hopLatencyS[h]!) : hopLatencyS;
      // Loads, latencies and spanning only grow with more classes: the partial exposure bounds every completion.
      let finished = true;
      if (exposedSoFar(i + 1, sites, latency) + crossingExcessS(changesUpTo[i]!, touchingBytesPerS[hosting[0]!]!) < best) {
        addClass(i, h, 1);
        finished = !gpusSuffice() || search(i + 1, pairs[t + 1]!, sites, latency);
        addClass(i, h, -1);
      }
      if (spans) for (let d = 0; d < load.length; d++) load[d]! -= classBytes[i]! * ring[d]!;
      if (!finished) return false;
    }
    return true;
  };
  if (!search(0, 0, 1, 0)) return { boundS: -Infinity };
  if (!leastHosting) return { boundS: Infinity };
  // A least hosting at the threshold's level is at the threshold, whatever the rounding of the sum.
  const boundS = pipelineBoundS + best + c.optimizerS;
  return { boundS: best >= thresholdLevelS ? Math.max(boundS, enoughS) : boundS, leastHosting };
}
