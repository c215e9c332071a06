/**
 * Layouts of the planner's own plans are made once per scenario and plan object
 * (`layOutBuiltPlan`, src/model/placement.ts); the public `layOutPlan` keeps none, so a caller
 * that edits a plan in place gets the edited plan's layout.
 */
import { layOutBuiltPlan, layOutPlan } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { readFixture } from './helpers/fixtures';

const built = (): PlanSpec => ({
  tp: 1, cp: 1, ep: 1, pp: 2, dp: 4, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1,
  placement: { replicaGroups: [{ replicas: 4, stageSites: [{ site: 'a', stages: 1 }, { site: 'b', stages: 1 }] }] },
});

describe('layouts of plan objects', () => {
  const scenario = parseScenario(readFixture('small/two-sites'), 'two-sites');

  it('of a plan the planner built are made once per scenario and plan object', () => {
    const plan = built();
    const first = layOutBuiltPlan(scenario, plan);
    expect(layOutBuiltPlan(scenario, plan)).toBe(first);
    expect(first).toEqual(layOutPlan(scenario, plan));
    const copy = built();
    const again = layOutBuiltPlan(scenario, copy);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    const otherScenario = parseScenario(readFixture('small/two-sites'), 'two-sites');
    const elsewhere = layOutBuiltPlan(otherScenario, plan);
    expect(elsewhere).not.toBe(first);
    expect(elsewhere).toEqual(first);
  });

  it('of a plan a caller edits in place follow the edit (the public entry keeps none)', () => {
    const plan = built();
    expect(layOutPlan(scenario, plan).stages).toHaveLength(2);
    plan.pp = 1;
    plan.placement = { replicaGroups: [{ replicas: 4, stageSites: [{ site: 'a', stages: 1 }] }] };
    expect(layOutPlan(scenario, plan).stages).toHaveLength(1);
  });

  it('of a plan that does not fit the model are refused every time', () => {
    const bad = { ...built(), tp: 3 };
    expect(() => layOutBuiltPlan(scenario, bad)).toThrow(ScenarioValidationError);
    expect(() => layOutBuiltPlan(scenario, bad)).toThrow(/plan\.tp: 3 does not divide/);
  });
});
