/**
 * The seed phase's best-first consideration (src/solve/search/consider.ts): plans are evaluated
 * lazily in order of their candidates' proven bounds, and one whose bound is at least the
 * incumbent's time is never evaluated, and every plan bounded below it is. The incumbent's time it
 * ends with is the one that considering every plan, each evaluated, gives.
 */
import { planOfGroups } from '../src/formulation/coefficients';
import { FULL_SPACE } from '../src/formulation/search-space';
import * as evaluateModule from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { PP_ACROSS_SPACE } from '../src/solve/plan';
import { chooseNetworkSettings } from '../src/solve/network-post-solver';
import { consider, considerBestFirst, type BoundedPlan } from '../src/solve/search/consider';
import { enumeratePhase } from '../src/solve/search/enumerate';
import { greedyOf, type SearchState } from '../src/solve/search/state';
import { readFixture } from './helpers/fixtures';

const small = (name: string): Scenario => parseScenario(readFixture(`small/${name}`), name);

/** The greedy plans of the first `count` candidates, each with its candidate's quick bound. */
function greedyPlans(state: SearchState, count: number): BoundedPlan[] {
  const plans: BoundedPlan[] = [];
  for (let i = 0; i < state.candidates.length && plans.length < count; i++) {
    if (!Number.isFinite(state.bounds[i]!)) break;
    const coefficients = state.candidates[i]!.coefficients();
    const groups = greedyOf(state, i, coefficients);
    if (groups) plans.push({ plan: planOfGroups(coefficients, state.scenario, groups), lowerBoundS: state.bounds[i]! });
  }
  return plans;
}

const incumbentS = (state: SearchState): number => state.incumbent?.evaluation.predicted.iterationTimeS ?? Infinity;

describe('best-first consideration of bounded plans', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each([
    ['two-sites', FULL_SPACE],
    ['three-heterogeneous', FULL_SPACE],
    ['moe-two-sites', FULL_SPACE],
    ['two-sites', PP_ACROSS_SPACE],
  ] as const)('ends with the incumbent that considering every plan gives, without evaluating plans bounded above it: %s', (name, restriction) => {
    const scenario = small(name);
    const options = { timeLimitS: 600, gap: 0.01, backends: [], restriction };
    const reference = enumeratePhase(scenario, options);
    const plans = greedyPlans(reference, 30);
    expect(plans.length).toBeGreaterThan(5);
    for (const p of plans) consider(reference, p.plan, 'heuristic');
    expect(reference.incumbent).toBeDefined();

    const lazy = enumeratePhase(scenario, options);
    const evaluated: unknown[] = [];
    const real = evaluateModule.evaluateLayout;
    jest.spyOn(evaluateModule, 'evaluateLayout').mockImplementation((s, layout, timing) => {
      if (timing === 'closed-form') evaluated.push(layout.plan);
      return real(s, layout, timing);
    });
    considerBestFirst(lazy, plans, 'heuristic');
    expect(incumbentS(lazy)).toBe(incumbentS(reference));

    // With the best plan as the incumbent from the start, no plan bounded at or above it is evaluated.
    const seeded = enumeratePhase(scenario, options);
    consider(seeded, reference.incumbent!.plan, 'seed');
    const bestS = incumbentS(seeded);
    evaluated.length = 0;
    considerBestFirst(seeded, plans, 'heuristic');
    expect(incumbentS(seeded)).toBe(bestS);
    const boundedAbove = plans.filter((p) => p.lowerBoundS * (1 - 1e-9) >= bestS);
    const boundedBelow = plans.filter((p) => p.lowerBoundS * (1 - 1e-9) < bestS);
    expect(boundedAbove.length).toBeGreaterThan(0);
    expect(boundedBelow.length).toBeGreaterThan(0);
    const laidOut = new Set(evaluated.map((plan) => JSON.stringify(plan)));
    const key = (p: BoundedPlan) => JSON.stringify(layOutPlan(scenario, p.plan).plan);
    for (const p of boundedAbove) expect(laidOut.has(key(p))).toBe(false);
    // and every plan bounded below it is (the incumbent cannot fall below the best plan's time).
    for (const p of boundedBelow) expect(laidOut.has(key(p))).toBe(true);
    // Every bound is a true bound on the time the search can give its plan (network settings chosen where the space chooses them).
    for (const p of plans) {
      const timed = restriction.defaultNetworkOnly ? real(scenario, layOutPlan(scenario, p.plan)) : chooseNetworkSettings(scenario, p.plan).evaluation;
      if (timed.fitsResources) expect(timed.predicted.iterationTimeS).toBeGreaterThanOrEqual(p.lowerBoundS * (1 - 1e-9));
    }
  });
});
