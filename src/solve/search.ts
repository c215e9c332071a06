/**
 * Best-first search over (configuration, dp) candidates with a placement MIP for each, pruned
 * by lower bounds (docs/formulation.md §4). Returns the best plan found, checked by the cost
 * model, and a bound valid for every plan in the space.
 */
import { batchTooSmallForReplicas, capacityLowerBound } from '../formulation/capacity-bound';
import { forcedSpanningLowerBound, outerLowerBound, zero3GatherLowerBound } from '../formulation/closed-form-bounds';
import { planOfGroups, type ConfigCoefficients, type LayoutGroup } from '../formulation/coefficients';
import { candidateWithinBudget, layoutWithinBudget, type GpuBudget } from '../formulation/gpu-budget';
import { layoutCapacityLowerBound } from '../formulation/layout-capacity-bound';
import { buildPlacementMip, incumbentObjectiveCutoff, provenIterationBoundS, type PlacementMip } from '../formulation/placement-mip';
import { ringPatternSearch, type RingPattern } from '../formulation/ring-pattern-bound';
import { planInSpace, scenarioForSpace, type SpaceRestriction } from '../formulation/search-space';
import { frameworkIssues } from '../model/framework-issues';
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { enumerateCandidates } from './candidates';
import { concentratedPlacement, greedyPlacement } from './heuristic';
import { polishPlacement } from './placement-polish';
import { checkMipPlan } from './independent-check';
import { BackendFault, checkSolution, type MipBackend, type MipSolution, type MipSolveOptions } from './mip-backend';
import { chooseNetworkSettings } from './network-post-solver';
import type { Bound, SolverReport } from './plan-result';

export interface SearchOptions {
  readonly timeLimitS: number;
  readonly gap: number;
  /** Tried in order for every MIP; the first that answers (and passes the check) wins. */
  readonly backends: readonly MipBackend[];
  /**
   * More first-choice backends (each with the same fallbacks after it): candidates' MIPs are
   * solved on all of them at once, one each (default none: one at a time).
   */
  readonly concurrentBackends?: readonly MipBackend[];
  readonly restriction: SpaceRestriction;
  /** Seconds a backend may overrun its time limit before the planner abandons it (default 5). */
  readonly backendGraceS?: number;
  /** Candidates the greedy heuristic seeds the incumbent from (default 20). */
  readonly heuristicSeeds?: number;
  /** Feasibility mode: stop at the first plan that fits (diagnosis re-solves). */
  readonly stopAtFirstFit?: boolean;
  /** Plans to consider first (ignored unless they lie in the restricted space). */
  readonly seedPlans?: readonly PlanSpec[];
  /** Only plans within this budget of GPUs or their hourly price (docs/formulation.md §10); the bound is then for those. */
  readonly gpuBudget?: GpuBudget;
  readonly onProgress?: (progress: { readonly incumbentS: number; readonly boundS: number; readonly gap: number; readonly elapsedS: number }) => void;
}

export interface SearchResult {
  readonly plan?: PlanSpec;
  readonly evaluation?: Evaluation;
  readonly bound: Bound;
  readonly solver: SolverReport;
  readonly reasons: readonly string[];
}

interface Incumbent {
  readonly plan: PlanSpec;
  readonly evaluation: Evaluation;
  readonly engine: string;
}

const HEURISTIC_SEEDS = 20;
/** MIPs with at most this many (layout, microbatch) choices solve in milliseconds: they go first. */
const SMALL_MIP_CHOICES = 40;
const BATCH_SPLIT_REASON = 'the batch cannot be shared by dp replicas (each runs at least one microbatch, at least pp with the interleaved schedule)';
/** Share of the search's elapsed time that placement polishing may take. */
const POLISH_SHARE = 0.2;
/** Cost-model evaluations one placement polish may spend (about 0.2-0.6 ms each). */
const POLISH_EVALUATIONS = 300;
/** Seconds any backend may overrun its time limit before the planner gives up on it. */
const HARD_LIMIT_GRACE_S = 5;

/** Rejects with a BackendFault if `promise` has not settled within `seconds`. */
function withHardLimit<T>(backend: string, promise: Promise<T>, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BackendFault(backend, `no answer within ${seconds.toFixed(1)} s`)), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function searchPlans(given: Scenario, options: SearchOptions): Promise<SearchResult> {
  const started = Date.now();
  // A framework's space (docs/formulation.md §8) also leaves out network settings it cannot apply.
  const scenario = scenarioForSpace(given, options.restriction);
  const framework = options.restriction.framework;
  const deadline = started + options.timeLimitS * 1000;
  const candidates = enumerateCandidates(scenario, options.restriction).filter((c) => candidateWithinBudget(scenario, c.config, c.dp, options.gpuBudget));
  const bounds = candidates.map((c) => c.quickBoundS);
  const faults: string[] = [];
  const fallbacksUsed = new Set<string>();
  const faultCounts = new Map<MipBackend, number>();
  const reasons = new Map<string, number>();
  let incumbent: Incumbent | undefined;
  // The required iteration time, with room for rounding: no plan slower than it fits.
  const deadlineS = (scenario.training.maxIterationTimeS ?? Infinity) * (1 + 1e-9);
  let mipsSolved = 0;
  let pruned = 0;
  let frameworkRejects = 0;
  let timedOut = false;

  /**
   * Keeps a plan if it beats the incumbent. `evaluation`, if given, and every screen here use the
   * closed-form pipeline timing, a lower bound on the cost model's time (docs/cost-model.md §5):
   * only a plan whose closed form beats the incumbent is timed op by op (`timed`), and the
   * incumbent holds the cost model's own evaluation.
   */
  const consider = (plan: PlanSpec, engine: string, evaluation?: Evaluation) => {
    if (options.gpuBudget && !layoutWithinBudget(scenario, layOutPlan(scenario, plan), options.gpuBudget)) return;
    const asGiven = evaluation ?? evaluateLayout(scenario, layOutPlan(scenario, plan), 'closed-form');
    if (!asGiven.fitsResources) return; // network settings change no memory, GPU count or batch
    let result = { plan, evaluation: asGiven };
    if (!options.restriction.defaultNetworkOnly && scenario.links.length > 0) {
      // Network settings change only the cross-site time and the gradient sync: a plan that could
      // not beat the incumbent even with both at zero is not worth the post-solver's evaluations.
      const bestCaseS = networkBestCaseS(asGiven);
      if (incumbent && bestCaseS >= incumbent.evaluation.predicted.iterationTimeS) return;
      // Nor is one that would miss the required iteration time even then.
      if (bestCaseS > deadlineS) return;
      result = chooseNetworkSettings(scenario, plan, 'closed-form');
    }
    if (!result.evaluation.fits) return;
    if (incumbent && result.evaluation.predicted.iterationTimeS >= incumbent.evaluation.predicted.iterationTimeS) return;
    // In a framework's space the configurations and microbatch counts are its own already; what is
    // left is per placement (ranks of two sites on one node): such a plan is not kept.
    if (framework !== undefined && frameworkIssues(framework, scenario, layOutPlan(scenario, result.plan)).length > 0) { frameworkRejects++; return; }
    const timed = evaluateLayout(scenario, layOutPlan(scenario, result.plan));
    if (!timed.fits) return;
    if (!incumbent || timed.predicted.iterationTimeS < incumbent.evaluation.predicted.iterationTimeS) {
      incumbent = { plan: result.plan, evaluation: timed, engine };
    }
  };
  /**
   * Considers plans in order of the least time the network post-solver could give them (their
   * time less cross-site and sync time), so that the first good one lets the rest skip it.
   */
  const considerBestFirst = (plans: readonly PlanSpec[], engine: string) => {
    const withTimes = plans.map((plan) => {
      const evaluation = evaluateLayout(scenario, layOutPlan(scenario, plan), 'closed-form');
      return { plan, evaluation, bestCaseS: networkBestCaseS(evaluation) };
    }).filter((p) => p.evaluation.fitsResources).sort((a, b) => a.bestCaseS - b.bestCaseS);
    for (const p of withTimes) consider(p.plan, engine, p.evaluation);
  };
  // bounds[i] is candidate i's best proven bound so far (its quick bound until it is visited).
  const globalBound = () => bounds.reduce((least, b) => Math.min(least, b), Infinity);
  let lastReport = 0;
  const report = () => {
    if (!options.onProgress || !incumbent || Date.now() - lastReport < 200) return;
    lastReport = Date.now();
    const incumbentS = incumbent.evaluation.predicted.iterationTimeS;
    const boundS = Math.min(globalBound(), incumbentS);
    options.onProgress({ incumbentS, boundS, gap: (incumbentS - boundS) / incumbentS, elapsedS: (Date.now() - started) / 1000 });
  };

  const memoryBound = candidates.filter((c) => c.memoryNeedGiB !== undefined);
  if (memoryBound.length > 0) {
    const leanest = Math.min(...memoryBound.map((c) => c.memoryNeedGiB!));
    const largest = Math.max(...scenario.sites.map((s) => s.gpu.memoryGiB));
    reasons.set(`does not fit GPU memory even with one microbatch in flight: the leanest needs ${leanest.toFixed(1)} GiB per GPU, the largest GPU has ${largest}`, memoryBound.length);
  }
  for (const seed of options.seedPlans ?? []) if (planInSpace(seed, options.restriction)) consider(seed, 'seed');
  // A first incumbent from the greedy heuristic on the most promising candidates.
  // Seeds: the best candidates first; if none of them gives a plan, keep going down the list
  // (within a fifth of the time) so that large scenarios start with an incumbent.
  const seeded = new Map<number, ConfigCoefficients>();
  // The greedy placement of candidate i, computed once: the seed phase, the refined candidates'
  // seeds, the polish while a MIP runs and a MIP's fallback all start from it.
  const greedyByCandidate = new Map<number, LayoutGroup[] | undefined>();
  const greedyOf = (i: number, coefficients: ConfigCoefficients) => {
    if (!greedyByCandidate.has(i)) greedyByCandidate.set(i, greedyPlacement(scenario, coefficients));
    return greedyByCandidate.get(i);
  };
  const seeds = options.heuristicSeeds ?? HEURISTIC_SEEDS;
  const seedDeadline = started + options.timeLimitS * 200;
  // The first `seeds` greedy plans are considered together, best case first; later ones one by one.
  const greedyPlans: PlanSpec[] = [];
  for (let i = 0; i < candidates.length && seeds > 0; i++) {
    if (options.stopAtFirstFit && incumbent) break;
    if (i === seeds) considerBestFirst(greedyPlans.splice(0), 'heuristic');
    if (i >= seeds && (incumbent || Date.now() >= seedDeadline)) break;
    const candidate = candidates[i]!;
    if (!Number.isFinite(candidate.quickBoundS)) break;
    const coefficients = candidate.coefficients();
    if (i < seeds) seeded.set(i, coefficients);
    // The fastest-first start and, where it differs, the one on the fewest, largest sites.
    const concentrated = concentratedPlacement(scenario, coefficients);
    if (concentrated) {
      const plan = planOfGroups(coefficients, scenario, concentrated);
      if (i < seeds) greedyPlans.push(plan);
      else consider(plan, 'heuristic');
    }
    const groups = greedyOf(i, coefficients);
    if (!groups) continue;
    const plan = planOfGroups(coefficients, scenario, groups);
    if (i < seeds) greedyPlans.push(plan);
    else consider(plan, 'heuristic');
  }
  considerBestFirst(greedyPlans, 'heuristic');
  // Candidates whose replicas all fit on one site, the best `seeds` of them by quick bound, start
  // on the fewest, largest sites too: no gradient sync crosses a link there, which the quick bound
  // (compute and pipeline only) does not reward, so they may sit far down the list.
  if (scenario.sites.length > 1 && !(options.stopAtFirstFit && incumbent)) {
    const largestSiteGpus = Math.max(...scenario.sites.map((site) => site.gpus));
    const oneSitePlans: PlanSpec[] = [];
    let tried = 0;
    for (let i = 0; i < candidates.length && tried < seeds && Date.now() < deadline; i++) {
      const candidate = candidates[i]!;
      if (!Number.isFinite(candidate.quickBoundS)) break;
      if (incumbent && candidate.quickBoundS >= incumbent.evaluation.predicted.iterationTimeS) break;
      const { tp, cp, pp } = candidate.config;
      if (seeded.has(i) || candidate.dp * tp * cp * pp > largestSiteGpus) continue;
      tried++;
      const coefficients = candidate.coefficients();
      const concentrated = concentratedPlacement(scenario, coefficients);
      if (concentrated) oneSitePlans.push(planOfGroups(coefficients, scenario, concentrated));
    }
    considerBestFirst(oneSitePlans, 'heuristic');
  }

  // Polishing is a heuristic: it may take at most a fifth of the search's time so far (measured
  // on the 3-site row: 2.1-2.2 s unbudgeted, 1.20-1.37 s with this budget, the same plan; the
  // 4-site MoE row, whose MIPs run for seconds, keeps every polish it had).
  let polishedS = 0;
  const budgetedPolish = (coefficients: ConfigCoefficients, start: readonly LayoutGroup[]) => {
    if (polishedS > POLISH_SHARE * ((Date.now() - started) / 1000)) return undefined;
    const began = Date.now();
    try {
      return polishPlacement(scenario, coefficients, start, POLISH_EVALUATIONS);
    } finally {
      polishedS += (Date.now() - began) / 1000;
    }
  };
  /** Decodes a MIP solution, checks it against the cost model, and keeps it if it is the best. */
  const adoptMipPlan = (coefficients: ConfigCoefficients, placement: PlacementMip, solution: MipSolution, engine: string) => {
    const groups = decodeGroups(placement, solution.values!);
    const plan = planOfGroups(coefficients, scenario, groups);
    // The closed form: the MIP is a relaxation of it (docs/formulation.md §2).
    const evaluation = evaluateLayout(scenario, layOutPlan(scenario, plan), 'closed-form');
    checkMipPlan(scenario, placement, solution.values!, solution.boundProven ? provenIterationBoundS(placement, solution.dualBound) : -Infinity, evaluation, coefficients.sendBytes);
    consider(plan, engine, evaluation);
    // The MIP thought this placement beats the incumbent, the cost model disagrees by more than
    // the target gap: its rings share links the MIP saw as spread (§4, placement polish).
    const mipS = solution.objective ?? Infinity;
    const timeS = evaluation.predicted.iterationTimeS;
    if (!evaluation.fitsResources || !(timeS > mipS * (1 + options.gap)) || (incumbent && mipS >= incumbent.evaluation.predicted.iterationTimeS)) return;
    const polished = budgetedPolish(coefficients, groups);
    if (polished && polished.moves > 0) consider(polished.plan, `${engine} + cost-model polish`, polished.evaluation);
  };
  const solvedMips: { index: number; coefficients: ConfigCoefficients }[] = [];
  // A candidate is pruned once its bound reaches the threshold: the incumbent less the target gap,
  // or the scenario's required iteration time (training.maxIterationTimeS), whichever is less.
  const threshold = () => Math.min(deadlineS, incumbent ? incumbent.evaluation.predicted.iterationTimeS * (1 - options.gap) : Infinity);
  // Placements no faster than the incumbent are of no use to a MIP: the solver prunes by it (§4, step 4).
  const cutoffFor = (placement: PlacementMip) => (incumbent ? incumbentObjectiveCutoff(placement, incumbent.evaluation.predicted.iterationTimeS) : undefined);

  // Refine phase: the refined bound of every candidate the quick bound cannot prune (closed
  // form, milliseconds each), so that most candidates never need a MIP and those left unsolved
  // hold the global bound at their refined bound.
  const refinedCoefficients = new Map<number, ConfigCoefficients>();
  const siteGpus = scenario.sites.map((site) => site.gpus);
  let index = 0;
  for (; index < candidates.length; index++) {
    const candidate = candidates[index]!;
    if (candidate.quickBoundS >= threshold()) break; // sorted: every later candidate is pruned too
    if (options.stopAtFirstFit && incumbent) break;
    if (Date.now() >= deadline) { timedOut = true; break; }
    const coefficients = seeded.get(index) ?? candidate.coefficients();
    seeded.delete(index);
    let refined = Math.max(candidate.quickBoundS, outerLowerBound(coefficients, candidate.quickBoundS),
      capacityLowerBound(coefficients, siteGpus), forcedSpanningLowerBound(coefficients, siteGpus, candidate.quickBoundS));
    // In a framework's space, ZeRO-3's per-microbatch weight gathers floor the candidate too (torchtitan's
    // FSDP2); the framework-free space keeps today's bounds bit for bit (test/candidates-equivalence).
    if (framework !== undefined) refined = Math.max(refined, zero3GatherLowerBound(coefficients));
    // The layout LP (step 3(e)) solves a few small LPs: only for candidates the closed forms keep.
    if (refined < threshold()) refined = Math.max(refined, layoutCapacityLowerBound(coefficients, siteGpus, refined));
    if (!Number.isFinite(refined)) {
      bounds[index] = Infinity;
      tally(reasons, !coefficients.layouts.some((l) => l.fittingMicrobatches.length > 0) ? 'no replica layout fits in GPU memory'
        : batchTooSmallForReplicas(coefficients) ? BATCH_SPLIT_REASON
          : 'its replicas cannot fit the sites\' GPUs and carry the batch with microbatch counts that fit memory');
      continue;
    }
    bounds[index] = Math.max(bounds[index]!, refined);
    if (refined >= threshold()) { pruned++; continue; }
    refinedCoefficients.set(index, coefficients);
  }
  const unrefined = timedOut ? 0 : Math.max(0, candidates.length - index);
  // Candidates whose quick bound is infinite without a memory reason cannot share the batch.
  for (let j = index; j < candidates.length; j++) {
    if (!Number.isFinite(candidates[j]!.quickBoundS) && candidates[j]!.memoryNeedGiB === undefined) tally(reasons, BATCH_SPLIT_REASON);
  }
  // MIPs: the small ones (milliseconds each) first, for an early incumbent that shrinks the rest
  // (F0), then in refined-bound order (measured with two MIP lanes: MoE 4-site gap 27.7% -> 20.4%
  // against bound order alone, the others unchanged within noise). The greedy placements of the best refined first.
  const isLarge = new Map([...refinedCoefficients].map(([i, c]) => [i, c.layouts.reduce((sum, l) => sum + l.fittingMicrobatches.length, 0) > SMALL_MIP_CHOICES]));
  const mipOrder = [...refinedCoefficients.keys()].sort((a, b) => Number(isLarge.get(a)) - Number(isLarge.get(b)) || bounds[a]! - bounds[b]! || a - b);
  const refinedGreedy: PlanSpec[] = [];
  for (const i of [...mipOrder].sort((a, b) => bounds[a]! - bounds[b]!).slice(0, seeds)) {
    const groups = greedyOf(i, refinedCoefficients.get(i)!);
    if (groups) refinedGreedy.push(planOfGroups(refinedCoefficients.get(i)!, scenario, groups));
  }
  considerBestFirst(refinedGreedy, 'heuristic');

  /** The greedy placement of candidate i, polished on the cost model, as a heuristic plan. */
  const polishGreedy = (i: number, coefficients: ConfigCoefficients) => {
    const groups = greedyOf(i, coefficients);
    if (!groups) return;
    const polished = budgetedPolish(coefficients, groups);
    if (polished) consider(polished.plan, polished.moves > 0 ? 'heuristic + cost-model polish' : 'heuristic', polished.evaluation);
  };
  /** No placement of candidate i is faster than `fasterThanS` (none at all when it is infinite). */
  const noneFaster = (i: number, fasterThanS: number) => {
    if (Number.isFinite(fasterThanS)) bounds[i] = Math.max(bounds[i]!, fasterThanS);
    else { bounds[i] = Infinity; tally(reasons, 'no placement fits the GPUs and the batch'); }
  };
  /**
   * The ring-pattern bound (§4, step 3(d)) of candidate i, taken when it comes up for its MIP
   * (takeNextMip): it searches the class hostings (milliseconds to a tenth of a second on four
   * sites), so it waits until the incumbent is as good as it gets before that candidate.
   */
  const lifted = new Map<number, RingPattern>();
  const liftByRingPattern = (i: number) => {
    const pattern = ringPatternSearch(scenario, refinedCoefficients.get(i)!, siteGpus, candidates[i]!.quickBoundS);
    lifted.set(i, pattern);
    if (pattern.boundS === Infinity) tally(reasons, 'no hosting of its stage classes by the sites fits the GPUs');
    bounds[i] = Math.max(bounds[i]!, pattern.boundS);
  };
  /**
   * A plan from the MIP over the layouts that start where a least ring pattern hosts the first
   * stage class and end where it hosts the last (§4, step 4): a heuristic, its dual bound covers
   * only those layouts and is not recorded. On the 405B 4-site row (21 of 88 layouts, all
   * replicas starting at one site) it solves in 0.2 s warm against 0.75 s for the full MIP, and its
   * plan is within 0.35% of the bound, so the full MIP is never built.
   */
  const solveLeastPatternMip = async (i: number, coefficients: ConfigCoefficients, primary: MipBackend, timeLimitS: number) => {
    const least = lifted.get(i)?.leastHosting;
    if (!least) return;
    const layouts = coefficients.layouts.filter((l) => least.firstClassSites & (1 << l.layout.stageSite[0]!) && least.lastClassSites & (1 << l.layout.stageSite[l.layout.stageSite.length - 1]!));
    if (layouts.length === 0 || layouts.length * 2 > coefficients.layouts.length) return;
    const restricted = { ...coefficients, layouts };
    // Nothing to gain when these layouts alone cannot beat the threshold (the 3-site row's four
    // restricted MIPs, 0.3 s of cold HiGHS, all proved that).
    if (layoutCapacityLowerBound(restricted, siteGpus, bounds[i]!) >= threshold()) return;
    const placement = buildPlacementMip(scenario, restricted, bounds[i]!, threshold(), options.gpuBudget);
    if (!placement) return;
    const solved = await solveWithFallbacks(placement, { ...options, gap: options.gap / 4, backends: [primary] },
      { timeLimitS, stopWhenBoundAtLeast: Number.isFinite(threshold()) ? threshold() : undefined, haveIncumbent: true, objectiveCutoff: cutoffFor(placement) }, faults, fallbacksUsed, faultCounts);
    if (solved?.solution.values) adoptMipPlan(restricted, placement, solved.solution, `${solved.engine} (layouts of a least ring pattern)`);
  };
  /**
   * What a MIP built with F0 at `fasterThanS` proves about candidate i: its dual bound, capped there
   * (F0). 'Infeasible' under an objective cutoff proves nothing past the cutoff, which its dual
   * bound then is: at least the incumbent, so at least `fasterThanS` whenever the gap is not
   * negative (the library's `plan` does not forbid one).
   */
  const recordMipBound = (i: number, fasterThanS: number, placement: PlacementMip, solution: MipSolution) => {
    const provenS = solution.boundProven && Number.isFinite(solution.dualBound) ? Math.min(fasterThanS, provenIterationBoundS(placement, solution.dualBound)) : undefined;
    if (solution.status === 'infeasible') noneFaster(i, provenS ?? fasterThanS);
    else if (provenS !== undefined) bounds[i] = Math.max(bounds[i]!, provenS);
  };

  /** Candidates whose MIP is being solved: a free lane may solve the same MIP with another seed. */
  const inFlight = new Map<number, { readonly position: number; readonly coefficients: ConfigCoefficients; readonly done: AbortController; helped: boolean }>();
  /**
   * Solves candidate i's MIP on `primary` (then the fallback chain); 'stop' ends the MIP phase.
   * With `seed`, a second solve of a MIP already in flight, on its own (no fallbacks): whichever
   * finishes first stops the other, which answers with what it has.
   */
  const solveCandidateMip = async (position: number, i: number, primary: MipBackend, seed?: number): Promise<'stop' | undefined> => {
    const coefficients = seed === undefined ? refinedCoefficients.get(i)! : inFlight.get(i)!.coefficients;
    if (options.stopAtFirstFit && incumbent) return 'stop';
    if (Date.now() >= deadline) { timedOut = true; return 'stop'; }
    refinedCoefficients.delete(i);
    // Before a large MIP, this thread polishes the candidate's greedy placement on the cost model
    // (§4, placement polish): a start that the MIP's view of cross-site rings cannot mislead, and
    // whose plan may prune the candidate before its MIP starts (measured against polishing while
    // the MIP runs: MoE 4-site row 1.60-1.97 s fresh, no MIP, against 2.26-2.66 s with one; MoE
    // and 405B 2-site rows no MIP either; 3-site and 405B 4-site rows the same within noise).
    if (seed === undefined && isLarge.get(i) && bounds[i]! < threshold()) {
      try {
        polishGreedy(i, coefficients);
      } catch (error) {
        // A heuristic's failure must not lose the candidate: recorded, and the search goes on.
        faults.push(`placement polish: ${error instanceof Error ? error.message : String(error)}`);
      }
      stopSolvesNoLongerNeeded();
      if (bounds[i]! < threshold() && Date.now() < deadline) {
        // A fifth of the time left, at most 2 s (its 405B 4-site MIP: 0.2 s warm, 1.1 s in a fresh process).
        await solveLeastPatternMip(i, coefficients, primary, Math.max(0.05, Math.min(2, (deadline - Date.now()) / 5000)));
        stopSolvesNoLongerNeeded();
      }
    }
    if (bounds[i]! >= threshold()) { if (seed === undefined) pruned++; return undefined; }
    // Only placements faster than the threshold matter: slower (layout, microbatch) choices are left
    // out (F0), so an answer bounds this candidate by min(its dual bound, the threshold).
    const fasterThanS = threshold();
    const placement = buildPlacementMip(scenario, coefficients, bounds[i]!, fasterThanS, options.gpuBudget);
    if (!placement) { noneFaster(i, fasterThanS); return undefined; }
    // One MIP may use a fifth of what is left (at least 0.25 s), so a hard one cannot starve the
    // rest; with fewer than five MIPs to go, an equal share of what is left.
    const leftS = (deadline - Date.now()) / 1000;
    const share = Math.min(5, Math.max(1, mipOrder.length - position));
    const remainingS = Math.max(0.05, Math.min(leftS, Math.max(0.25, leftS / share)));
    // No MIP start: measured, a greedy start made HiGHS slower on these models (1.1 s vs 0.55 s).
    const stopAt = Number.isFinite(threshold()) ? threshold() : undefined;
    // HiGHS's callbacks keep the progress display alive during a long MIP.
    const heartbeat = options.onProgress ? () => report() : undefined;
    // The candidate that holds the global bound decides the gap: its MIP's own 1% would leave
    // placements whose cost-model time is above the MIP's (the MIP is a relaxation), so it is
    // solved four times tighter.
    const holdsBound = bounds[i]! <= globalBound();
    const mipOptions = { ...options, gap: holdsBound ? options.gap / 4 : options.gap, backends: seed === undefined ? [primary, ...options.backends.slice(1)] : [primary] };
    const done = seed === undefined ? new AbortController() : inFlight.get(i)!.done;
    if (seed === undefined) inFlight.set(i, { position, coefficients, done, helped: false });
    const solving = solveWithFallbacks(placement, mipOptions, { timeLimitS: remainingS, stopWhenBoundAtLeast: stopAt, onProgress: heartbeat, haveIncumbent: incumbent !== undefined, randomSeed: seed, abort: done.signal, objectiveCutoff: cutoffFor(placement) }, faults, fallbacksUsed, faultCounts);
    const solved = await solving;
    // A conclusive answer (solved to the gap, infeasible, or bound past the threshold) stops the
    // other copy of this MIP; a copy that merely failed or ran out of time leaves the other running.
    const conclusive = solved !== undefined && (solved.solution.status === 'optimal' || solved.solution.status === 'infeasible'
      || (stopAt !== undefined && solved.solution.boundProven && solved.solution.dualBound >= stopAt));
    if (conclusive || seed === undefined) done.abort();
    if (seed === undefined) { inFlight.delete(i); mipsSolved++; }
    try {
      if (!solved || !solved.solution.values) {
        // Every backend failed or found nothing: keep the closed-form bound, and try the heuristic here.
        const groups = greedyOf(i, coefficients);
        if (groups) consider(planOfGroups(coefficients, scenario, groups), 'heuristic');
        if (!solved) return undefined;
      }
      const { solution, engine } = solved;
      recordMipBound(i, fasterThanS, placement, solution);
      if (solution.status === 'infeasible') return undefined;
      if (solution.values) adoptMipPlan(coefficients, placement, solution, engine);
      if (!solvedMips.some((m) => m.index === i)) solvedMips.push({ index: i, coefficients });
      report();
      return undefined;
    } finally {
      stopSolvesNoLongerNeeded();
    }
  };
  /** Stops MIPs still running whose candidate a better incumbent has pruned (or all, once feasibility mode has its plan). */
  const stopSolvesNoLongerNeeded = () => {
    for (const [j, f] of inFlight) if ((options.stopAtFirstFit && incumbent) || bounds[j]! >= threshold()) f.done.abort();
  };
  // Lanes: the first backend and each concurrent one take the next MIP in order as they free up
  // (HiGHS runs in worker threads, so two lanes use two cores). Incumbent and threshold are shared.
  let next = 0;
  /**
   * The next MIP to solve, its ring-pattern bound taken first. A candidate the bound lifts past
   * the next one in order goes back in line by its new bound (each is lifted once), so MIPs run
   * in order of the bounds they will be solved with (MoE 4-site row: the candidate whose greedy
   * placement polishes to the best plan had been second, behind one lifted from 1.559 to 1.872 s).
   */
  const takeNextMip = (): number => {
    const key = (i: number) => [Number(isLarge.get(i)), bounds[i]!] as const;
    const before = (a: number, b: number) => key(a)[0] < key(b)[0] || (key(a)[0] === key(b)[0] && key(a)[1] < key(b)[1]);
    for (;;) {
      const i = mipOrder[next]!;
      // Past the deadline the MIP phase stops at this candidate (solveCandidateMip): no more lifting.
      if (lifted.has(i) || bounds[i]! >= threshold() || !refinedCoefficients.has(i) || Date.now() >= deadline) return next++;
      liftByRingPattern(i);
      let to = next;
      while (to + 1 < mipOrder.length && before(mipOrder[to + 1]!, i)) to++;
      if (to === next) return next++;
      mipOrder.splice(next, 1);
      mipOrder.splice(to, 0, i);
    }
  };
  let stopped = false;
  const laneBackends = [options.backends[0]!, ...(options.concurrentBackends ?? [])];
  const lanes = laneBackends.map(async (primary, lane) => {
    while (!stopped) {
      if (next < mipOrder.length) {
        const position = takeNextMip();
        if (await solveCandidateMip(position, mipOrder[position]!, primary) === 'stop') stopped = true;
        continue;
      }
      // Nothing left to start: help the in-flight MIP with the least bound, solving it again
      // with another random seed (measured: HiGHS's time to a good placement on the symmetric
      // 4-site MIPs varies several-fold with its path).
      if (!incumbent || (faultCounts.get(primary) ?? 0) >= 2) break;
      const open = [...inFlight.entries()].filter(([, f]) => !f.helped).sort((a, b) => bounds[a[0]]! - bounds[b[0]]!)[0];
      if (!open) break;
      open[1].helped = true;
      if (await solveCandidateMip(open[1].position, open[0], primary, lane + 1) === 'stop') stopped = true;
    }
  });
  await Promise.all(lanes);
  if (!timedOut && refinedCoefficients.size > 0 && !(options.stopAtFirstFit && incumbent)) timedOut = true;

  // Second pass with the time left: the MIPs stopped at the target gap on their own objective,
  // which slightly underestimates the cost model; re-solve the candidates that hold the global
  // bound down, four times tighter, until the gap closes or time runs out. On both lanes: each
  // takes the next candidate, and the first to close the gap stops the other (measured on the
  // 3-site row in a fresh process: two re-solves of 0.56 and 0.28 s had run one after the other).
  const gapNow = () => (incumbent ? (incumbent.evaluation.predicted.iterationTimeS - globalBound()) / incumbent.evaluation.predicted.iterationTimeS : Infinity);
  const gapClosed = () => gapNow() <= options.gap * (1 + 1e-9);
  const secondPass = [...solvedMips].sort((a, b) => bounds[a.index]! - bounds[b.index]!);
  const secondPassDone = new AbortController();
  await Promise.all(laneBackends.map(async (primary) => {
    for (let entry = secondPass.shift(); entry; entry = secondPass.shift()) {
      if (timedOut || (options.stopAtFirstFit && incumbent) || gapClosed() || Date.now() >= deadline) break;
      const stopAt = threshold();
      if (bounds[entry.index]! >= stopAt) continue;
      // Rebuilt with today's threshold: the incumbent has usually improved, so fewer choices remain (F0).
      const placement = buildPlacementMip(scenario, entry.coefficients, bounds[entry.index]!, stopAt, options.gpuBudget);
      if (!placement) { noneFaster(entry.index, stopAt); continue; }
      const solved = await solveWithFallbacks(placement, { ...options, gap: options.gap / 4, backends: [primary, ...options.backends.slice(1)] },
        { timeLimitS: Math.max(0.05, (deadline - Date.now()) / 1000), stopWhenBoundAtLeast: stopAt, haveIncumbent: incumbent !== undefined, abort: secondPassDone.signal, objectiveCutoff: cutoffFor(placement) }, faults, fallbacksUsed, faultCounts);
      if (!solved) continue;
      const { solution, engine } = solved;
      recordMipBound(entry.index, stopAt, placement, solution);
      if (solution.values) adoptMipPlan(entry.coefficients, placement, solution, engine);
      if (gapClosed()) secondPassDone.abort();
      report();
    }
  }));

  const lowerBoundS = globalBound();
  const time = incumbent?.evaluation.predicted.iterationTimeS;
  const gap = time === undefined ? Infinity : Math.max(0, (time - Math.min(lowerBoundS, time)) / time);
  if (!incumbent && Number.isFinite(lowerBoundS) && lowerBoundS >= deadlineS) {
    reasons.set(`every plan takes at least ${lowerBoundS.toFixed(3)} s, over training.maxIterationTimeS ${scenario.training.maxIterationTimeS}`, candidates.length);
  }
  if (candidates.length === 0) tally(reasons, 'no configuration in the search space fits the sites (tp x cp x pp larger than every site, or no valid degree)');
  if (!incumbent && framework !== undefined && frameworkRejects > 0) {
    reasons.set(`${frameworkRejects} plan(s) that fit were left out: ${framework} cannot launch them as placed (ranks of two sites on one node)`, candidates.length);
  }
  return {
    plan: incumbent?.plan,
    evaluation: incumbent?.evaluation,
    bound: { lowerBoundS: time === undefined ? lowerBoundS : Math.min(lowerBoundS, time), gap, proven: true },
    solver: {
      engine: incumbent?.engine ?? 'none',
      timeS: (Date.now() - started) / 1000,
      fallbacksUsed: [...fallbacksUsed],
      faults,
      candidates: candidates.length,
      mipsSolved,
      // Candidates after the refine phase's break are pruned by the sorted quick bound.
      pruned: pruned + unrefined,
      timedOut,
    },
    reasons: [...reasons.entries()].map(([reason, count]) => `${reason} (${count} of ${candidates.length} configurations)`),
  };
}

/** The least time network settings could give a plan: they change only its cross-site time and its gradient sync. */
function networkBestCaseS(evaluation: Evaluation): number {
  const { crossSiteS, dpExposedS } = evaluation.predicted.breakdown;
  return evaluation.predicted.iterationTimeS - Math.max(0, crossSiteS) - Math.max(0, dpExposedS);
}

async function solveWithFallbacks(
  placement: PlacementMip,
  options: SearchOptions,
  limits: { timeLimitS: number; stopWhenBoundAtLeast?: number; onProgress?: MipSolveOptions['onProgress']; haveIncumbent?: boolean; randomSeed?: number; abort?: AbortSignal; objectiveCutoff?: number },
  faults: string[],
  fallbacksUsed: Set<string>,
  faultCounts: Map<MipBackend, number>,
): Promise<{ solution: MipSolution; engine: string } | undefined> {
  let bestBound = -Infinity;
  for (let i = 0; i < options.backends.length; i++) {
    // Once stopped on purpose, no fallback is wanted.
    if (i > 0 && limits.abort?.aborted) break;
    const backend = options.backends[i]!;
    // A backend that has failed twice in this search is not asked again.
    if ((faultCounts.get(backend) ?? 0) >= 2 && i < options.backends.length - 1) continue;
    if (i > 0) fallbacksUsed.add(backend.name);
    try {
      const raw = await withHardLimit(backend.name, backend.solve(placement.mip, { ...limits, relativeGap: options.gap }), limits.timeLimitS + (options.backendGraceS ?? HARD_LIMIT_GRACE_S));
      const solution = checkSolution(backend.name, placement.mip, raw);
      if (solution.boundProven) bestBound = Math.max(bestBound, solution.dualBound);
      // Stopped on purpose (the other copy answered, or the candidate was pruned): an answer, not a fault.
      if (limits.abort?.aborted) return { solution, engine: backend.name };
      if (solution.status === 'no-solution') {
        // Stopped because its bound reached the pruning threshold: an answer, not a fault.
        if (limits.stopWhenBoundAtLeast !== undefined && solution.boundProven && solution.dualBound >= limits.stopWhenBoundAtLeast) return { solution, engine: backend.name };
        // Out of time without a placement. With an incumbent in hand this candidate keeps its
        // bound and the search moves on (the same solver again would spend the same time for the
        // same answer); without one, the fallback chain goes on to find a plan.
        if (limits.haveIncumbent && solution.boundProven) return { solution, engine: backend.name };
        faults.push(`${backend.name}: no solution within the limit`);
        continue;
      }
      return { solution: { ...solution, dualBound: Math.max(bestBound, solution.boundProven ? solution.dualBound : -Infinity), boundProven: solution.boundProven || bestBound > -Infinity }, engine: backend.name };
    } catch (error) {
      // Anything a backend throws is its fault: record it and fall back.
      const message = error instanceof Error ? error.message : String(error);
      faults.push(error instanceof BackendFault ? message : `${backend.name}: ${message}`);
      faultCounts.set(backend, (faultCounts.get(backend) ?? 0) + 1);
    }
  }
  return bestBound > -Infinity ? { solution: { status: 'no-solution', dualBound: bestBound, boundProven: true }, engine: 'none' } : undefined;
}

/** The placement a MIP solution describes: replicas per (layout, microbatch) choice. */
function decodeGroups(placement: PlacementMip, values: readonly number[]): LayoutGroup[] {
  return placement.choices
    .map((choice) => ({ layout: choice.layout, microbatches: choice.microbatches, replicas: Math.round(values[choice.replicasColumn]!) }))
    .filter((g) => g.replicas > 0);
}

function tally(reasons: Map<string, number>, reason: string): void {
  reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
}
