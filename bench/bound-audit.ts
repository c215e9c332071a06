/**
 * Audits the planner's bounds on one scenario against exhaustive search: every candidate's
 * closed-form bounds (quick, outer, capacity, layout capacity, forced spanning, ring pattern) and,
 * for the first few, the placement MIP solved to optimality must be at most the candidate's least
 * time; and `plan` must agree with the exhaustive optimum (a plan exactly when one exists, never
 * faster than it, its printed bound never above it, within the gap when it says `optimal`).
 * Violations are returned, not thrown, so that the random-scenario test asserts none and the
 * bound-validity benchmark counts them over a wide sample.
 */
import type { IntegerFeasibility } from '../src/formulation/hosting-integrality';
import { buildPlacementMip, provenIterationBoundS } from '../src/formulation/placement-mip';
import { ringPatternSearch } from '../src/formulation/ring-pattern-bound';
import { FULL_SPACE, type SpaceRestriction } from '../src/formulation/search-space';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import type { Candidate } from '../src/solve/candidates';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { InternalCheckError } from '../src/solve/independent-check';
import type { MipBackend } from '../src/solve/mip-backend';
import { plan } from '../src/solve/plan';
import { searchPlans } from '../src/solve/search';
import { closedFormBounds } from './bound-checks';

export interface BoundAuditOptions {
  /** Solves the per-candidate MIPs to optimality. */
  readonly highs: MipBackend;
  /** The planner's backends. */
  readonly backends: readonly MipBackend[];
  /** Seconds of exhaustive search; a scenario that needs more is reported as too large. */
  readonly exhaustiveCapS: number;
  /** Candidates per scenario whose placement MIP is solved to optimality. */
  readonly mipsPerScenario: number;
  readonly gap: number;
  /** `plan`'s greedy seeds (default: the planner's). */
  readonly heuristicSeeds?: number;
  /**
   * The space audited (default the full space). A restricted one (a baseline's) is enumerated
   * with its own coefficients, and its search (not `plan`, which searches the full space) is
   * compared with the exhaustive optimum.
   */
  readonly restriction?: SpaceRestriction;
  /**
   * The planner's synchronous integer solver: with it, each candidate's ring-pattern bound with
   * the pipeline caps (docs/formulation.md §4, step 3(d), condition (v)) is audited at a
   * threshold just above the candidate's least time, where a placement beats the threshold, so
   * the bound may not pass that least time.
   */
  readonly integerFeasibility?: IntegerFeasibility;
}

export interface BoundAudit {
  /** invalid: the draw is not a valid spec; too-large: exhaustive search did not finish. */
  readonly outcome: 'invalid' | 'too-large' | 'audited';
  readonly scenario?: Scenario;
  readonly violations: string[];
  readonly candidates: number;
  readonly mips: number;
  readonly withPlan: boolean;
  readonly planStatus?: string;
}

const TOLERANCE = 1e-9;

/** The scenario, or undefined when the draw is not a valid spec (e.g. no tp divides a site's nodes). */
export function parsedOrUndefined(spec: unknown): Scenario | undefined {
  try {
    return parseScenario(spec, 'random');
  } catch (error) {
    if (error instanceof ScenarioValidationError) return undefined;
    throw error;
  }
}

const describeCandidate = (candidate: Candidate) => `${JSON.stringify(candidate.config)} dp ${candidate.dp}`;

export async function auditScenarioBounds(spec: unknown, options: BoundAuditOptions): Promise<BoundAudit> {
  const empty = { violations: [], candidates: 0, mips: 0, withPlan: false };
  const scenario = parsedOrUndefined(spec);
  if (scenario === undefined) return { outcome: 'invalid', ...empty };
  const visited: { candidate: Candidate; leastS: number }[] = [];
  const restriction = options.restriction ?? FULL_SPACE;
  const exhaustive = exhaustiveSearch(scenario, restriction, options.exhaustiveCapS, (candidate, leastS) => visited.push({ candidate, leastS }));
  if (!exhaustive.complete) return { outcome: 'too-large', scenario, ...empty };

  const violations: string[] = [];
  const above = (name: string, boundS: number, leastS: number, what: string) => {
    if (boundS > leastS * (1 + TOLERANCE)) violations.push(`${name} bound ${boundS} > least time ${leastS} for ${what}`);
  };
  let candidates = 0;
  let mips = 0;
  for (const { candidate, leastS } of visited) {
    if (!Number.isFinite(leastS)) continue;
    const bounds = closedFormBounds(candidate, scenario);
    for (const [name, boundS] of Object.entries(bounds)) above(name, boundS, leastS, describeCandidate(candidate));
    if (options.integerFeasibility && scenario.links.length > 0) {
      const siteGpus = scenario.sites.map((site) => site.gpus);
      // The planner's pipeline bound (the quick bound raised to the span floor).
      const pipelineS = Math.max(candidate.quickBoundS, candidate.pipelineFloorS());
      const capped = ringPatternSearch(scenario, candidate.coefficients(), siteGpus, pipelineS, undefined, true, options.integerFeasibility, leastS * (1 + 1e-6), true);
      above('pipeline-caps', capped.boundS, leastS, describeCandidate(candidate));
    }
    candidates++;
    if (mips >= options.mipsPerScenario) continue;
    const placement = buildPlacementMip(scenario, candidate.coefficients(), 0);
    if (placement === undefined) { violations.push(`no placement MIP for a fitting candidate ${describeCandidate(candidate)}`); continue; }
    // Solved towards optimality; a dual bound proven before the limit must hold all the same.
    const solution = await options.highs.solve(placement.mip, { timeLimitS: 5, relativeGap: 0 });
    if (!solution.boundProven) violations.push(`placement MIP proved no bound for ${describeCandidate(candidate)}`);
    else above('MIP', provenIterationBoundS(placement, solution.dualBound), leastS, describeCandidate(candidate));
    mips++;
  }

  const optimumS = exhaustive.evaluation?.predicted.iterationTimeS;
  let result;
  try {
    result = restriction === FULL_SPACE
      ? await plan(scenario, { timeLimitS: 20, gap: options.gap, baselines: false, backends: options.backends, heuristicSeeds: options.heuristicSeeds })
      : await restrictedSearch(scenario, restriction, options);
  } catch (error) {
    // The planner's own check refusing a bound is a bound that would have been wrong.
    if (!(error instanceof InternalCheckError)) throw error;
    violations.push(`plan: ${error.message}`);
    return { outcome: 'audited', scenario, violations, candidates, mips, withPlan: optimumS !== undefined };
  }
  const audit = { outcome: 'audited' as const, scenario, violations, candidates, mips, planStatus: result.status };
  if (optimumS === undefined) {
    // "No plan fits" is an answer, with its reasons.
    if (result.status !== 'infeasible') violations.push(`plan says ${result.status} where exhaustive search finds no plan`);
    else if (result.reasons.length === 0) violations.push('plan says infeasible without reasons');
    return { ...audit, withPlan: false };
  }
  if (result.status !== 'optimal' && result.status !== 'feasible') {
    violations.push(`plan says ${result.status} where exhaustive search finds a ${optimumS} s plan`);
    return { ...audit, withPlan: true };
  }
  const planS = result.evaluation!.predicted.iterationTimeS;
  if (planS < optimumS * (1 - TOLERANCE)) violations.push(`plan ${planS} s is faster than the exhaustive optimum ${optimumS} s`);
  above('printed', result.bound.lowerBoundS, optimumS, 'the whole space');
  if (result.status === 'optimal' && planS > (optimumS / (1 - options.gap)) * (1 + TOLERANCE)) {
    violations.push(`plan says optimal at ${planS} s, beyond the gap of the exhaustive optimum ${optimumS} s`);
  }
  return { ...audit, withPlan: true };
}

/** A restricted space's search, read as `plan` reads its own (status from the proven gap). */
async function restrictedSearch(scenario: Scenario, restriction: SpaceRestriction, options: BoundAuditOptions) {
  const found = await searchPlans(scenario, { timeLimitS: 20, gap: options.gap, backends: options.backends, restriction, heuristicSeeds: options.heuristicSeeds });
  const status = !found.plan ? (Number.isFinite(found.bound.lowerBoundS) ? 'unknown' : 'infeasible') : found.bound.gap <= options.gap * (1 + 1e-9) ? 'optimal' : 'feasible';
  return { ...found, status };
}
