/**
 * layOutPlan keeps the layouts it made by scenario and plan object (src/model/placement.ts): the
 * same plan object gets the same layout back, an equal new object an equal layout of its own, a
 * plan laid out against another scenario object its own layout, and a plan with a structural
 * error is refused every time.
 */
import { layOutPlan } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { readFixture } from './helpers/fixtures';

const plan: PlanSpec = {
  tp: 1, cp: 1, ep: 1, pp: 2, dp: 4, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1,
  placement: { replicaGroups: [{ replicas: 4, stageSites: [{ site: 'a', stages: 1 }, { site: 'b', stages: 1 }] }] },
};

describe('layout of a plan object', () => {
  const scenario = parseScenario(readFixture('small/two-sites'), 'two-sites');

  it('is made once per scenario and plan object', () => {
    const first = layOutPlan(scenario, plan);
    expect(layOutPlan(scenario, plan)).toBe(first);
    const copy = { ...plan };
    const again = layOutPlan(scenario, copy);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    const otherScenario = parseScenario(readFixture('small/two-sites'), 'two-sites');
    const elsewhere = layOutPlan(otherScenario, plan);
    expect(elsewhere).not.toBe(first);
    expect(elsewhere).toEqual(first);
  });

  it('is refused every time when the plan does not fit the model', () => {
    const bad = { ...plan, tp: 3 };
    expect(() => layOutPlan(scenario, bad)).toThrow(ScenarioValidationError);
    expect(() => layOutPlan(scenario, bad)).toThrow(/plan\.tp: 3 does not divide/);
  });
});
