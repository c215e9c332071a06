/**
 * The reduced exhaustive enumeration's walk over one candidate's placements (exhaustive.ts,
 * docs/formulation.md §9): a depth-first search over replica counts per (layout, microbatch
 * count) choice, pruned by the choices' own bounds and by counting, that evaluates only the
 * lexicographically greatest placement of each orbit of the cost model's site symmetries.
 */
import type { ConfigCoefficients, LayoutCoefficients } from '../formulation/coefficients';
import { choiceFloorsS } from '../formulation/placement-mip-replicas';
import { toPlan, type SpaceRestriction } from '../formulation/search-space';
import { frameworkIssues } from '../model/framework-issues';
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { networkCombinationCount, timeNetworkSettings } from './exhaustive-network';
import type { SitePermutation } from './site-symmetry';
import { branchShares, CHECKPOINT_VISITS, type WalkCheckpoint } from './walk-progress';

interface Choice {
  readonly layout: LayoutCoefficients;
  readonly k: number;
  readonly upper: number;
  /** GPUs one replica of the layout uses, over all its sites. */
  readonly gpus: number;
  /** The least time of any plan with a replica on this choice: the least choiceFloorsS over its orbit. */
  boundS: number;
}

/**
 * Each site symmetry as a permutation of the candidate's choices (a layout moved site by site,
 * the same microbatch count), identity first; only the identity when some image is not a choice
 * (then the candidate is enumerated without symmetry).
 */
function choicePermutations(choices: readonly Choice[], symmetries: readonly SitePermutation[]): number[][] {
  const key = (stageSite: readonly number[], k: number) => `${stageSite.join(',')}/${k}`;
  const index = new Map(choices.map((ch, i) => [key(ch.layout.layout.stageSite, ch.k), i]));
  const identity = choices.map((_, i) => i);
  const permutations: number[][] = [identity];
  for (const sigma of symmetries.slice(1)) {
    const image: number[] = [];
    for (const ch of choices) {
      const j = index.get(key(ch.layout.layout.stageSite.map((s) => sigma.sites[s]!), ch.k));
      if (j === undefined || choices[j]!.upper !== ch.upper || choices[j]!.gpus !== ch.gpus) return [identity];
      image.push(j);
    }
    permutations.push(image);
  }
  return permutations;
}

/**
 * The least bound of the choices from position i on (in `ordered`) running at least `k`
 * microbatches, for every i and k, in O(1) per query: a suffix minimum per distinct microbatch
 * count, so that each node of the walk does not scan the choices left.
 */
export function leastBoundTable(ordered: readonly { readonly k: number; readonly boundS: number }[]): (i: number, k: number) => number {
  const ks = [...new Set(ordered.map((ch) => ch.k))].sort((a, b) => a - b);
  const n = ordered.length;
  // table[t][i]: least bound from i on among choices with k >= ks[t].
  const table = ks.map((threshold) => {
    const row = new Float64Array(n + 1).fill(Infinity);
    for (let i = n - 1; i >= 0; i--) row[i] = ordered[i]!.k >= threshold ? Math.min(row[i + 1]!, ordered[i]!.boundS) : row[i + 1]!;
    return row;
  });
  return (i, k) => {
    // The first distinct count >= k (counts are few: a linear scan).
    let t = 0;
    while (t < ks.length && ks[t]! < k) t++;
    return t === ks.length ? Infinity : table[t]![i]!;
  };
}

/** What a placement walk counts (its coverage in the exhaustive mode's report). */
export interface PlacementTally { choicesPrunedByBound: number; partialPlacementsPruned: number; placementsCovered: number; placementsEvaluated: number; plansCovered: number; plansEvaluated: number }

/** A tally at zero, for a walk whose counts are not reported. */
export const emptyPlacementTally = (): PlacementTally => ({ choicesPrunedByBound: 0, partialPlacementsPruned: 0, placementsCovered: 0, placementsEvaluated: 0, plansCovered: 0, plansEvaluated: 0 });

/**
 * Depth-first over replica counts per choice (every placement of the candidate up to symmetry
 * and bounds). False when the time limit or the checkpoint stopped it.
 */
export function enumeratePlacements(
  scenario: Scenario, restriction: SpaceRestriction, c: ConfigCoefficients, symmetries: readonly SitePermutation[],
  prunes: (boundS: number) => boolean, bounds: boolean, bestS: () => number, onPlan: (plan: PlanSpec, evaluation: Evaluation) => void,
  deadline: number, tally: PlacementTally, checkpoint?: WalkCheckpoint,
): boolean {
  const all: Choice[] = [];
  for (const layout of c.layouts) {
    let capacity = c.dp;
    let gpus = 0;
    for (const [site, perReplica] of layout.gpusPerSite) {
      capacity = Math.min(capacity, Math.floor(scenario.sites[site]!.gpus / perReplica));
      gpus += perReplica;
    }
    for (const k of layout.fittingMicrobatches) {
      const upper = Math.min(capacity, Math.floor(c.totalMicrobatches / k));
      // A valid lower bound on the iteration time of every plan with a replica running this choice
      // (the MIP's F0/F6 term: the replica's own pipeline, bubble, fill crossings and optimizer,
      // each at its most favourable value; docs/formulation.md §2-3).
      if (upper >= 1) all.push({ layout, k, upper, gpus, boundS: choiceFloorsS(c, layout, k) });
    }
  }
  const perms = choicePermutations(all, symmetries);
  // Images of a choice share its bound (their least), so that leaving choices out keeps every orbit whole.
  // (The orbit of choice i is {pi(i)} over the group's permutations.)
  const own = all.map((ch) => ch.boundS);
  all.forEach((ch, i) => { for (const pi of perms) ch.boundS = Math.min(ch.boundS, own[pi[i]!]!); });
  const order: number[] = [];
  all.forEach((ch, i) => { if (prunes(ch.boundS)) tally.choicesPrunedByBound++; else order.push(i); });
  // Least bound first: the first placements reached are the likeliest to be fast.
  order.sort((a, b) => all[a]!.boundS - all[b]!.boundS || a - b);
  const n = order.length;
  // What the choices from position i on can do for the replicas still to place.
  const mostK = Array<number>(n + 1).fill(-Infinity);
  const leastK = Array<number>(n + 1).fill(Infinity);
  const leastGpus = Array<number>(n + 1).fill(Infinity);
  for (let i = n - 1; i >= 0; i--) {
    const ch = all[order[i]!]!;
    mostK[i] = Math.max(mostK[i + 1]!, ch.k);
    leastK[i] = Math.min(leastK[i + 1]!, ch.k);
    leastGpus[i] = Math.min(leastGpus[i + 1]!, ch.gpus);
  }
  const leastBoundFrom = leastBoundTable(order.map((i) => all[i]!));
  const counts = all.map(() => 0);
  const image = all.map(() => 0);
  const free = scenario.sites.map((s) => s.gpus);
  let freeTotal = free.reduce((a, b) => a + b, 0);
  let steps = 0;
  let leaves = 0;
  // The share of the tree the walk is back from (WalkProgress.doneShare).
  let doneShare = 0;
  const goOnAt = () => !checkpoint || checkpoint({ visits: steps, leaves, doneShare });

  /** Orbit size of the placement when it is its orbit's lexicographically greatest, else 0. */
  const orbitIfCanonical = (): number => {
    let fixed = 1;
    for (let p = 1; p < perms.length; p++) {
      const pi = perms[p]!;
      for (let i = 0; i < counts.length; i++) image[pi[i]!] = counts[i]!;
      let cmp = 0;
      for (let i = 0; i < counts.length && cmp === 0; i++) cmp = counts[i]! - image[i]!;
      if (cmp < 0) return 0;
      if (cmp === 0) fixed++;
    }
    return perms.length / fixed;
  };

  const leaf = (): boolean => {
    const orbit = orbitIfCanonical();
    if (orbit === 0) return true;
    // Groups in the naive enumeration's order (layouts, then microbatch counts), so that a plan is
    // written, and ranked for a framework's node check, exactly as the naive enumeration writes it.
    const groups = all.flatMap((ch, i) => (counts[i]! > 0 ? [{ layout: ch.layout.layout, microbatches: ch.k, replicas: counts[i]! }] : []));
    const plan = toPlan(c.config, scenario, groups);
    const laidOut = layOutPlan(scenario, plan);
    tally.placementsCovered += orbit;
    tally.placementsEvaluated++;
    if (restriction.framework !== undefined && frameworkIssues(restriction.framework, scenario, laidOut).length > 0) return true;
    const base = evaluateLayout(scenario, laidOut, 'closed-form');
    const loaded = base.predicted.links.map((l) => l.bytesPerIteration > 0);
    tally.plansCovered += orbit * networkCombinationCount(scenario, restriction, loaded);
    return timeNetworkSettings(scenario, restriction, plan, laidOut, loaded, bounds, bestS, onPlan, deadline, tally);
  };

  /**
   * Whether a node ends without branching (counting, a bound or the replicas placed without the
   * microbatches), and whether by a prune the tally counts: the tests visit makes first.
   */
  const endsAt = (i: number, replicasLeft: number, microbatchesLeft: number, chosenBoundS: number, gpusLeft: number): 'no' | 'pruned' | 'unmatched' => {
    // A chosen replica's own bound may have reached a better plan found meanwhile.
    if (prunes(chosenBoundS)) return 'pruned';
    if (replicasLeft === 0) return microbatchesLeft === 0 ? 'no' : 'unmatched';
    // Feasibility of the rest with the choices left (pure counting: exact).
    if (i === n || microbatchesLeft > replicasLeft * mostK[i]! || microbatchesLeft < replicasLeft * leastK[i]! || replicasLeft * leastGpus[i]! > gpusLeft) return 'pruned';
    // The replicas still to place run the microbatches left, so one of them runs at least
    // ceil(left / replicas): some choice from i on with at least that many is used, and its own
    // bound bounds every completion (the least such bound).
    return bounds && prunes(leastBoundFrom(i, Math.ceil(microbatchesLeft / replicasLeft))) ? 'pruned' : 'no';
  };

  const visit = (i: number, replicasLeft: number, microbatchesLeft: number, chosenBoundS: number, share: number): boolean => {
    if (++steps % 4096 === 0 && Date.now() >= deadline) return false;
    if (steps % CHECKPOINT_VISITS === 0 && !goOnAt()) return false;
    const ends = endsAt(i, replicasLeft, microbatchesLeft, chosenBoundS, freeTotal);
    if (ends !== 'no') {
      if (ends === 'pruned') tally.partialPlacementsPruned++;
      doneShare += share;
      return true;
    }
    if (replicasLeft === 0) {
      const goOn = leaf();
      leaves++;
      doneShare += share;
      return goOn && goOnAt();
    }
    const ch = all[order[i]!]!;
    // The best plan may have improved since the choice was kept.
    let most = prunes(ch.boundS) ? 0 : Math.min(ch.upper, replicasLeft, Math.floor(microbatchesLeft / ch.k));
    for (const [site, gpus] of ch.layout.gpusPerSite) most = Math.min(most, Math.floor(free[site]! / gpus));
    const index = order[i]!;
    const childBoundS = (count: number) => (count > 0 ? Math.max(chosenBoundS, ch.boundS) : chosenBoundS);
    // The progress share goes to the branches that do not end at once (walk-progress.ts; only
    // for a walk with a checkpoint, which alone reads it).
    let shares: number[] | undefined;
    if (checkpoint) {
      const live = Array.from({ length: most + 1 }, (_, count) =>
        endsAt(i + 1, replicasLeft - count, microbatchesLeft - count * ch.k, childBoundS(count), freeTotal - count * ch.gpus) === 'no');
      shares = branchShares(share, live, replicasLeft, n - i - 1);
      if (!live.includes(true)) doneShare += share;
    }
    for (let count = most; count >= 0; count--) {
      counts[index] = count;
      for (const [site, gpus] of ch.layout.gpusPerSite) free[site]! -= count * gpus;
      freeTotal -= count * ch.gpus;
      const goOn = visit(i + 1, replicasLeft - count, microbatchesLeft - count * ch.k, childBoundS(count), shares?.[count] ?? 0);
      for (const [site, gpus] of ch.layout.gpusPerSite) free[site]! += count * gpus;
      freeTotal += count * ch.gpus;
      counts[index] = 0;
      if (!goOn) return false;
    }
    return true;
  };
  return visit(0, c.dp, c.totalMicrobatches, -Infinity, 1);
}
