/**
 * "Does any plan fit this scenario?" — the re-solve every diagnosis step asks (docs/diagnosis.md
 * §2). It runs the planner's own search in feasibility mode (stop at the first plan that fits),
 * so an answer of `infeasible` carries the planner's proof: every candidate's bound is infinite or
 * past training.maxIterationTimeS. Answers are cached by the scenario's JSON.
 */
import { FULL_SPACE } from '../formulation/search-space';
import type { Evaluation } from '../model/evaluate';
import type { PlanSpec } from '../model/plan-schema';
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

export class FeasibilityOracle {
  private readonly cache = new Map<string, FeasibilityAnswer>();
  /** Re-solves asked for, and how many the cache answered. */
  calls = 0;
  cacheHits = 0;

  constructor(private readonly backends: readonly MipBackend[], private readonly timeLimitS: number) {}

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
  async optimize(spec: ScenarioSpec, seedPlans: readonly PlanSpec[] = [], timeLimitS = this.timeLimitS): Promise<FeasibilityAnswer & { readonly lowerBoundS?: number }> {
    this.calls++;
    return this.solve(spec, false, seedPlans, timeLimitS);
  }

  private async solve(spec: ScenarioSpec, stopAtFirstFit = true, seedPlans: readonly PlanSpec[] = [], timeLimitS = this.timeLimitS): Promise<FeasibilityAnswer & { readonly lowerBoundS?: number }> {
    let scenario: Scenario;
    try {
      scenario = parseScenario(spec);
    } catch (error) {
      if (error instanceof ScenarioValidationError) return { feasibility: 'invalid', reasons: [error.message] };
      throw error;
    }
    const result = await searchPlans(scenario, { timeLimitS, gap: 0.01, backends: this.backends, restriction: FULL_SPACE, stopAtFirstFit, seedPlans });
    if (result.plan && result.evaluation) {
      return { feasibility: 'feasible', plan: result.plan, evaluation: result.evaluation, reasons: [], lowerBoundS: result.bound.lowerBoundS };
    }
    const deadlineS = scenario.training.maxIterationTimeS ?? Infinity;
    const proven = !result.solver.timedOut && (!Number.isFinite(result.bound.lowerBoundS) || result.bound.lowerBoundS > deadlineS);
    return { feasibility: proven ? 'infeasible' : 'unknown', reasons: result.reasons };
  }
}
