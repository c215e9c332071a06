/**
 * Phase 2 of the search: a first incumbent before any MIP, so that the bounds prune from the
 * start. The caller's seed plans, then the greedy and concentrated placements of the most
 * promising candidates (heuristic.ts), then the candidates that fit on one site.
 */
import { planOfGroups, type ConfigCoefficients } from '../../formulation/coefficients';
import { planInSpace } from '../../formulation/search-space';
import { concentratedPlacement } from '../heuristic';
import { consider, considerBestFirst, type BoundedPlan } from './consider';
import { greedyOf, haveFirstFit, type SearchState } from './state';
import type { SearchOptions } from './types';

const HEURISTIC_SEEDS = 20;
/** The fewest-sites starts go up to candidates that need this many of the largest sites. */
const MOST_SEED_SITES = 4;

/** Candidates the greedy heuristic seeds the incumbent from. */
const heuristicSeedCount = (options: SearchOptions): number => options.heuristicSeeds ?? HEURISTIC_SEEDS;

/**
 * Seeds the incumbent. Returns the coefficients of the candidates seeded from the top of the list
 * (index -> coefficients), computed once for the refine phase.
 */
export function seedPhase(state: SearchState): Map<number, ConfigCoefficients> {
  for (const seed of state.options.seedPlans ?? []) if (planInSpace(seed, state.options.restriction)) consider(state, seed, 'seed');
  const seeded = seedFromHeuristic(state);
  seedOnFewestSites(state, seeded);
  return seeded;
}

/**
 * A first incumbent from the greedy heuristic on the most promising candidates: the best
 * candidates first; if none of them gives a plan, keep going down the list (within a fifth of
 * the time) so that large scenarios start with an incumbent.
 */
function seedFromHeuristic(state: SearchState): Map<number, ConfigCoefficients> {
  const { scenario, candidates, options } = state;
  const seeded = new Map<number, ConfigCoefficients>();
  const seeds = heuristicSeedCount(options);
  const seedDeadline = state.startedMs + options.timeLimitS * 200;
  // The first `seeds` greedy plans are considered together, best case first; later ones one by one.
  const greedyPlans: BoundedPlan[] = [];
  for (let i = 0; i < candidates.length && seeds > 0; i++) {
    if (haveFirstFit(state)) break;
    if (i === seeds) considerBestFirst(state, greedyPlans.splice(0), 'heuristic');
    if (i >= seeds && (state.incumbent || Date.now() >= seedDeadline)) break;
    const candidate = candidates[i]!;
    if (!Number.isFinite(candidate.quickBoundS)) break;
    const coefficients = candidate.coefficients();
    if (i < seeds) seeded.set(i, coefficients);
    // The fastest-first start and, where it differs, the one on the fewest, largest sites.
    const concentrated = concentratedPlacement(scenario, coefficients);
    if (concentrated) {
      const plan = planOfGroups(coefficients, scenario, concentrated);
      if (i < seeds) greedyPlans.push({ plan, lowerBoundS: state.bounds[i]! });
      else consider(state, plan, 'heuristic');
    }
    const groups = greedyOf(state, i, coefficients);
    if (!groups) continue;
    const plan = planOfGroups(coefficients, scenario, groups);
    if (i < seeds) greedyPlans.push({ plan, lowerBoundS: state.bounds[i]! });
    else consider(state, plan, 'heuristic');
  }
  considerBestFirst(state, greedyPlans, 'heuristic');
  return seeded;
}

/**
 * Candidates whose replicas all fit on one site, the best `seeds` of them by quick bound, start
 * on the fewest, largest sites too: no gradient sync crosses a link there, which the quick bound
 * (compute and pipeline only) does not reward, so they may sit far down the list. Then, for k = 2
 * to 4, the best `seeds` that need the k largest sites (and not fewer): rings over k sites
 * instead of all of them (on six and eight sites the first incumbent had been 1.5-7x the best
 * plan; most of the time limit then went to refining the bounds it could not prune, and few MIPs
 * ran). Where the fewest-sites start is the fastest-first one (concentratedPlacement is then
 * undefined), that one is offered: it had been left out, and with it the 8-site 70B scenario's
 * best plan (one GB200 site, 1.438 s; the first incumbent had been 5.387 s).
 */
function seedOnFewestSites(state: SearchState, seeded: ReadonlyMap<number, ConfigCoefficients>): void {
  const { scenario, candidates } = state;
  if (scenario.sites.length <= 1 || haveFirstFit(state)) return;
  const seeds = heuristicSeedCount(state.options);
  // reach[k - 1]: GPUs of the k largest sites.
  const reach: number[] = [];
  for (const gpus of scenario.sites.map((site) => site.gpus).sort((a, b) => b - a)) reach.push((reach[reach.length - 1] ?? 0) + gpus);
  for (let sites = 1; sites <= Math.min(MOST_SEED_SITES, scenario.sites.length - 1); sites++) {
    const plans: BoundedPlan[] = [];
    let tried = 0;
    for (let i = 0; i < candidates.length && tried < seeds && Date.now() < state.deadlineMs; i++) {
      const candidate = candidates[i]!;
      if (!Number.isFinite(candidate.quickBoundS)) break;
      if (state.incumbent && candidate.quickBoundS >= state.incumbent.evaluation.predicted.iterationTimeS) break;
      const { tp, cp, pp } = candidate.config;
      const gpus = candidate.dp * tp * cp * pp;
      if (seeded.has(i) || gpus > reach[sites - 1]! || (sites > 1 && gpus <= reach[sites - 2]!)) continue;
      tried++;
      const coefficients = candidate.coefficients();
      // Undefined when it is the fastest-first start: that one then.
      const groups = concentratedPlacement(scenario, coefficients) ?? greedyOf(state, i, coefficients);
      if (groups) plans.push({ plan: planOfGroups(coefficients, scenario, groups), lowerBoundS: state.bounds[i]! });
    }
    considerBestFirst(state, plans, 'heuristic');
  }
}

/** The greedy placements of the best refined candidates (by bound, in MIP order on ties), before any MIP runs. */
export function seedFromRefined(state: SearchState, refined: ReadonlyMap<number, ConfigCoefficients>, mipOrder: readonly number[]): void {
  const { bounds } = state;
  const plans: BoundedPlan[] = [];
  for (const i of [...mipOrder].sort((a, b) => bounds[a]! - bounds[b]!).slice(0, heuristicSeedCount(state.options))) {
    const groups = greedyOf(state, i, refined.get(i)!);
    if (groups) plans.push({ plan: planOfGroups(refined.get(i)!, state.scenario, groups), lowerBoundS: bounds[i]! });
  }
  considerBestFirst(state, plans, 'heuristic');
}
