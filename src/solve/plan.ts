/**
 * `plan`: the best plan in the full space with its bound, the two baselines in their restricted
 * spaces, and the independent re-check of everything printed.
 */
import { availableParallelism } from 'os';
import type { IntegerFeasibility } from '../formulation/hosting-integrality';
import { FULL_SPACE, withFramework, type SpaceRestriction } from '../formulation/search-space';
import type { Framework } from '../model/framework-capabilities';
import { frameworkFit } from '../model/framework-issues';
import { layOutPlan } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { integerFeasibilityOnThisThread } from './highs-integer-feasibility';
import { HighsWorkerBackend } from './highs-worker-backend';
import { recheckPlan } from './independent-check';
import { chooseNetworkSettings } from './network-post-solver';
import { LpSolverBackend } from './lp-solver-backend';
import type { MipBackend } from './mip-backend';
import type { BaselineResult, PlanResult } from './plan-result';
import { searchPlans, type SearchOptions } from './search';

export interface PlanOptions {
  /** Seconds for the whole call, baselines included (default 10). */
  readonly timeLimitS?: number;
  /** Target relative gap (default 0.01). */
  readonly gap?: number;
  /** MIP backends in fallback order; default HiGHS worker, fresh HiGHS worker, javascript-lp-solver. */
  readonly backends?: readonly MipBackend[];
  /**
   * More HiGHS workers that solve candidates' MIPs at the same time as the first backend. Default:
   * one more when no backends are given and the machine has a second core, else none.
   */
  readonly concurrentBackends?: readonly MipBackend[];
  /** Compute the production and pp-across baselines (default true). */
  readonly baselines?: boolean;
  readonly onProgress?: SearchOptions['onProgress'];
  /** Candidates the greedy heuristic seeds the search with (default 20; 0 makes every candidate go to the MIP). */
  readonly heuristicSeeds?: number;
  /** Seconds a backend may overrun its time limit before it is abandoned (default 5). */
  readonly backendGraceS?: number;
  /** Search only what this framework runs as planned, baselines too (default: the scenario's search.framework; absent: the framework-free space). */
  readonly framework?: Framework;
  /**
   * Plans to start each search from (a neighbouring sweep point's answers): each is only an
   * incumbent candidate, evaluated by the cost model on this scenario like any other plan, and
   * dropped when it does not lay out on it. They change no bound.
   */
  readonly seeds?: PlanSeeds;
  /**
   * Answers the ring-pattern bound's whole-replica integer programs (docs/formulation.md §4 step
   * 3(d)). Default on more than one site: HiGHS on this thread (Node); false: the bound relaxes
   * whole replicas.
   */
  readonly integerFeasibility?: IntegerFeasibility | false;
}

/** Seed plans per search of {@link plan}. */
export interface PlanSeeds {
  readonly main?: readonly PlanSpec[];
  readonly production?: readonly PlanSpec[];
  readonly 'pp-across'?: readonly PlanSpec[];
}

/**
 * The seeds that lay out on `scenario` (a plan for other sites, layers or GPU counts throws there),
 * and with `search.allowIdleGpus: false` use every GPU.
 */
export function seedsFor(scenario: Scenario, plans: readonly PlanSpec[] | undefined): PlanSpec[] {
  const allGpus = scenario.sites.reduce((sum, site) => sum + site.gpus, 0);
  return (plans ?? []).filter((seed) => {
    if (scenario.search?.allowIdleGpus === false && seed.tp * seed.cp * seed.pp * seed.dp !== allGpus) return false;
    try {
      layOutPlan(scenario, seed);
      return true;
    } catch {
      return false;
    }
  });
}

export const PRODUCTION_SPACE: SpaceRestriction = { layouts: 'whole', schedules: ['1f1b', 'interleaved'], defaultNetworkOnly: true };
export const PP_ACROSS_SPACE: SpaceRestriction = { layouts: 'split', defaultNetworkOnly: true };

/** Default solver chain. Callers that pass no backends get theirs closed at the end. */
export function defaultBackends(): MipBackend[] {
  const highs = new HighsWorkerBackend(false);
  highs.warmUp();
  return [highs, new HighsWorkerBackend(true), new LpSolverBackend()];
}

/** A second HiGHS worker when the machine has a second core (for `concurrentBackends`), else none. */
export function defaultConcurrentBackends(): MipBackend[] {
  if (availableParallelism() < 2) return [];
  const highs = new HighsWorkerBackend(false);
  highs.warmUp();
  return [highs];
}

export async function plan(scenario: Scenario, options: PlanOptions = {}): Promise<PlanResult> {
  const timeLimitS = options.timeLimitS ?? 10;
  const gap = options.gap ?? 0.01;
  const backends = options.backends ?? defaultBackends();
  const concurrentBackends = options.concurrentBackends ?? (options.backends ? [] : defaultConcurrentBackends());
  const withBaselines = options.baselines ?? true;
  const mainShare = withBaselines ? 0.7 : 1;
  const framework = options.framework ?? scenario.search?.framework;
  const inFramework = framework === undefined ? {} : { framework };
  const integerFeasibility = options.integerFeasibility === false ? undefined
    : options.integerFeasibility ?? (scenario.sites.length > 1 ? await integerFeasibilityOnThisThread() : undefined);
  try {
    const main = await searchPlans(scenario, { timeLimitS: timeLimitS * mainShare, gap, backends, concurrentBackends, integerFeasibility, restriction: withFramework(FULL_SPACE, framework), seedPlans: seedsFor(scenario, options.seeds?.main), onProgress: options.onProgress, backendGraceS: options.backendGraceS, heuristicSeeds: options.heuristicSeeds });
    if (!main.plan || !main.evaluation) {
      // Infeasible only when every candidate's bound is infinite or past the required iteration
      // time; otherwise the search ran out of time.
      const deadlineS = scenario.training.maxIterationTimeS ?? Infinity;
      if (Number.isFinite(main.bound.lowerBoundS) && main.bound.lowerBoundS <= deadlineS) {
        const reason = `no plan found within the time limit of ${timeLimitS} s; not proven infeasible (every plan would take at least ${main.bound.lowerBoundS.toFixed(3)} s): raise --time-limit`;
        return { status: 'unknown', bound: main.bound, solver: main.solver, reasons: [reason, ...main.reasons], baselines: [], ...inFramework };
      }
      return { status: 'infeasible', bound: main.bound, solver: main.solver, reasons: main.reasons, baselines: [], ...inFramework };
    }
    const evaluation = recheckPlan(scenario, main.plan, main.evaluation);
    const baselines: BaselineResult[] = [];
    if (withBaselines) {
      const share = (timeLimitS * (1 - mainShare)) / 2;
      baselines.push(await baseline(scenario, 'production', 'DP across sites (whole replicas per site), 1F1B/interleaved, default network', withFramework(PRODUCTION_SPACE, framework), share, gap, { backends, concurrentBackends, integerFeasibility }, [main.plan, ...seedsFor(scenario, options.seeds?.production)], evaluation.predicted.iterationTimeS));
      if (scenario.sites.length > 1) {
        baselines.push(await baseline(scenario, 'pp-across', 'pipeline stages split across sites, DP inside each site, default network', withFramework(PP_ACROSS_SPACE, framework), share, gap, { backends, concurrentBackends, integerFeasibility }, [main.plan, ...seedsFor(scenario, options.seeds?.['pp-across'])], evaluation.predicted.iterationTimeS));
      }
    }
    // A baseline's plan lies in the full space too (the framework's, with one): if its search found a faster one, it is ours.
    let chosen = { plan: main.plan, evaluation, solver: main.solver };
    for (const b of baselines) {
      if (b.plan && b.iterationTimeS !== undefined && b.iterationTimeS < chosen.evaluation.predicted.iterationTimeS) {
        const better = chooseNetworkSettings(scenario, b.plan);
        chosen = { plan: better.plan, evaluation: recheckPlan(scenario, better.plan, better.evaluation), solver: { ...main.solver, engine: `${main.solver.engine} + ${b.name} baseline search` } };
      }
    }
    const oursS = chosen.evaluation.predicted.iterationTimeS;
    // Which frameworks run the plan as is: the same check their exports make.
    const fit = frameworkFit(scenario, layOutPlan(scenario, chosen.plan));
    if (framework !== undefined && !fit.runnable.includes(framework)) {
      throw new Error(`the plan searched for ${framework} is not one it runs: ${fit.missing[framework]!.join('; ')}`);
    }
    const lowerBoundS = Math.min(main.bound.lowerBoundS, oursS);
    const finalGap = (oursS - lowerBoundS) / oursS;
    return {
      // Pruning at incumbent x (1 - gap) proves exactly the target gap, up to floating-point rounding.
      status: finalGap <= gap * (1 + 1e-9) ? 'optimal' : 'feasible',
      plan: chosen.plan,
      evaluation: chosen.evaluation,
      bound: { ...main.bound, lowerBoundS, gap: finalGap },
      solver: chosen.solver,
      reasons: [],
      baselines: baselines.map((b) => (b.iterationTimeS === undefined ? b : { ...b, speedup: b.iterationTimeS / oursS, ...speedupFloor(b, oursS) })),
      ...inFramework,
      frameworks: fit.runnable,
      frameworkGaps: fit.missing, frameworkDifferences: fit.differences,
    };
  } finally {
    if (!options.backends) await Promise.all(backends.map((b) => b.close()));
    if (!options.concurrentBackends) await Promise.all(concurrentBackends.map((b) => b.close()));
  }
}

async function baseline(
  scenario: Scenario,
  name: BaselineResult['name'],
  description: string,
  restriction: SpaceRestriction,
  timeLimitS: number,
  gap: number,
  backends: { readonly backends: readonly MipBackend[]; readonly concurrentBackends: readonly MipBackend[]; readonly integerFeasibility: IntegerFeasibility | undefined },
  seeds: readonly PlanSpec[],
  oursS: number,
): Promise<BaselineResult> {
  const result = await searchPlans(scenario, { timeLimitS, gap, ...backends, restriction, seedPlans: seeds, comparedWithS: oursS });
  if (!result.plan || !result.evaluation) return { name, description };
  const evaluation = recheckPlan(scenario, result.plan, result.evaluation);
  const iterationTimeS = evaluation.predicted.iterationTimeS;
  return { name, description, iterationTimeS, speedup: iterationTimeS / oursS, ...speedupFloor({ bound: result.bound }, oursS), plan: result.plan, bound: result.bound };
}

/** The proven least speedup over a baseline's space: its bound (never above its own plan) over our time. */
const speedupFloor = (b: Pick<BaselineResult, 'bound'>, oursS: number): Pick<BaselineResult, 'speedupAtLeast'> =>
  (b.bound && Number.isFinite(b.bound.lowerBoundS) ? { speedupAtLeast: b.bound.lowerBoundS / oursS } : {});
