/**
 * "Does any plan fit this scenario?" — the re-solve every diagnosis step asks (docs/diagnosis.md
 * §2). It runs the planner's own search in feasibility mode (stop at the first plan that fits),
 * so an answer of `infeasible` carries the planner's proof: every candidate's bound is infinite or
 * past training.maxIterationTimeS. Answers are cached by the scenario's JSON, and plans that fitted
 * earlier re-solves are tried first (a relaxed scenario still fits them).
 */
import { fieldKey } from '../formulation/field-key';
import { FULL_SPACE, enumerateConfigs, withFramework, type ParallelConfig } from '../formulation/search-space';
import { evaluate, type Evaluation } from '../model/evaluate';
import { expertTpOf, type PlanSpec } from '../model/plan-schema';
import { parseScenario, type Scenario } from '../model/scenario';
import type { ScenarioSpec } from '../model/scenario-schema';
import { ScenarioValidationError } from '../model/validation-error';
import type { MipBackend } from '../solve/mip-backend';
import { searchPlans } from '../solve/search';

export type Feasibility = 'feasible' | 'infeasible' | 'unknown' | 'invalid';

export interface FeasibilityAnswer {
  readonly feasibility: Feasibility;
  /** A plan that fits, when feasible. */
  readonly plan?: PlanSpec;
  readonly evaluation?: Evaluation;
  /** The planner's reasons when no plan fits. */
  readonly reasons: readonly string[];
}

/** Every field of a search-space configuration, as a key. */
export const parallelConfigKey = fieldKey<ParallelConfig>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'microBatchSeqs', 'schedule', 'virtualStages', 'recompute', 'recomputeModules', 'zero', 'rankOrder']);

/** The outer configuration of a plan or a search-space configuration, as a key (virtual stages count only when interleaved). */
const configKey = (c: ParallelConfig): string =>
  parallelConfigKey(c.schedule === 'interleaved' || c.virtualStages === 1 ? c : { ...c, virtualStages: 1 });

/** Plans kept for the known-plan check. */
const KNOWN_PLANS = 64;

/** The plan's evaluation on the scenario, or undefined if the plan does not apply (e.g. a site it names is gone). */
function tryEvaluate(scenario: Scenario, plan: PlanSpec): Evaluation | undefined {
  try {
    return evaluate(scenario, plan);
  } catch (error) {
    if (error instanceof ScenarioValidationError) return undefined;
    throw error;
  }
}

export class FeasibilityOracle {
  private readonly cache = new Map<string, FeasibilityAnswer>();
  /** Plans that fitted earlier re-solves, newest first: a relaxed scenario is often fitted by one of them. */
  private readonly knownPlans: PlanSpec[] = [];
  /** Re-solves asked for, and how many the cache answered. */
  calls = 0;
  cacheHits = 0;

  constructor(private readonly backends: readonly MipBackend[], readonly timeLimitS: number) {}

  async check(spec: ScenarioSpec): Promise<FeasibilityAnswer> {
    this.calls++;
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached) { this.cacheHits++; return cached; }
    const answer = await this.solve(spec);
    this.cache.set(key, answer);
    return answer;
  }

  /** The best plan (not the first that fits) for the scenario, or a non-feasible answer. */
  async optimize(spec: ScenarioSpec, seedPlans: readonly PlanSpec[] = [], timeLimitS = this.timeLimitS, gap = 0.01): Promise<FeasibilityAnswer & { readonly lowerBoundS?: number }> {
    this.calls++;
    return this.solve(spec, false, seedPlans, timeLimitS, gap);
  }

  private async solve(spec: ScenarioSpec, stopAtFirstFit = true, seedPlans: readonly PlanSpec[] = [], timeLimitS = this.timeLimitS, gap = 0.01): Promise<FeasibilityAnswer & { readonly lowerBoundS?: number }> {
    let scenario: Scenario;
    try {
      scenario = parseScenario(spec);
    } catch (error) {
      if (error instanceof ScenarioValidationError) return { feasibility: 'invalid', reasons: [error.message] };
      throw error;
    }
    // The scenario's framework space (search.framework), as `plan` searches it.
    const space = withFramework(FULL_SPACE, scenario.search?.framework);
    if (stopAtFirstFit) {
      // Any plan that fits answers "feasible": try the ones that fitted earlier re-solves before searching.
      // A known plan counts only if it also lies in this scenario's search space (evaluate does not check that).
      const allowed = new Set(enumerateConfigs(scenario, space).map(configKey));
      for (const known of this.knownPlans) {
        if (!allowed.has(configKey({ ...known, expertTp: expertTpOf(known) }))) continue;
        const evaluation = tryEvaluate(scenario, known);
        if (evaluation?.fits) return { feasibility: 'feasible', plan: known, evaluation, reasons: [] };
      }
    }
    const result = await searchPlans(scenario, { timeLimitS, gap, backends: this.backends, restriction: space, stopAtFirstFit, seedPlans });
    if (result.plan && result.evaluation) {
      this.knownPlans.unshift(result.plan);
      if (this.knownPlans.length > KNOWN_PLANS) this.knownPlans.pop();
      return { feasibility: 'feasible', plan: result.plan, evaluation: result.evaluation, reasons: [], lowerBoundS: result.bound.lowerBoundS };
    }
    const deadlineS = scenario.training.maxIterationTimeS ?? Infinity;
    const proven = !result.solver.timedOut && (!Number.isFinite(result.bound.lowerBoundS) || result.bound.lowerBoundS > deadlineS);
    return { feasibility: proven ? 'infeasible' : 'unknown', reasons: result.reasons };
  }
}
