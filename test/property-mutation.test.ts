/**
 * Property test: mutating valid scenarios and plans anywhere never makes the library throw
 * anything but ScenarioValidationError, and every accepted input evaluates to finite numbers.
 */
import fc from 'fast-check';
import { evaluatePlans } from '../src/index';
import { parseScenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { SCENARIO_FIXTURES, clone, readFixture, readPlanFixture } from './helpers/fixtures';

type Json = any; // free-form JSON being mutated

/** Every path to a value inside a JSON document. */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') for (const k of Object.keys(value)) out.push(...paths(value[k], [...prefix, k]));
  return out;
}

const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(NaN, Infinity, -Infinity, -1, 0, 1, 2, 3, 7, 8, 16, 1e9, 1e15, 1e308, 0.5, 1.5, '', 'bldg-a', 'H100-SXM', null, [], {}),
  fc.integer({ min: -10, max: 5000 }),
);

const mutation = fc.record({
  pick: fc.nat(),
  kind: fc.constantFrom('replace', 'delete', 'add-key', 'duplicate-element'),
  value: replacement,
  key: fc.constantFrom('extra', 'gpus', 'tp', 'site', 'stages', '__proto__', 'constructor'),
});

function mutate(document: Json, m: { pick: number; kind: string; value: unknown; key: string }): Json {
  const copy = clone(document);
  const all = paths(copy);
  const path = all[m.pick % all.length]!;
  if (path.length === 0) return m.kind === 'replace' ? m.value : copy;
  const parent = path.slice(0, -1).reduce((node: Json, k) => node[k], copy);
  const last = path[path.length - 1]!;
  if (m.kind === 'replace') parent[last] = m.value;
  else if (m.kind === 'delete') { if (Array.isArray(parent)) parent.splice(Number(last), 1); else delete parent[last]; }
  else if (m.kind === 'add-key') { const node = parent[last]; if (node && typeof node === 'object' && !Array.isArray(node)) node[m.key] = m.value; }
  else if (Array.isArray(parent)) parent.push(clone(parent[Number(last)]));
  return copy;
}

function onlyValidationErrors(action: () => void): void {
  try {
    action();
  } catch (error) {
    if (!(error instanceof ScenarioValidationError)) throw error;
    expect(error.issues.length).toBeGreaterThan(0);
    for (const line of error.message.split('\n')) expect(line.length).toBeGreaterThan(0);
  }
}

function expectFinite(result: ReturnType<typeof evaluatePlans>): void {
  for (const evaluation of Array.isArray(result) ? result : [result]) {
    const p = evaluation.predicted;
    for (const value of [p.iterationTimeS, p.mfu, p.tokensPerSecondPerGpu, p.memoryGiBPerGpu, ...Object.values(p.breakdown)]) {
      expect(Number.isFinite(value)).toBe(true);
    }
  }
}

describe.each(SCENARIO_FIXTURES)('mutations of %s', (name) => {
  const scenarioSpec = readFixture(name);
  const plan = readPlanFixture(name);

  it('scenario mutations throw only ScenarioValidationError', () => {
    fc.assert(fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
      const spec = mutations.reduce(mutate, scenarioSpec);
      onlyValidationErrors(() => {
        const scenario = parseScenario(spec);
        onlyValidationErrors(() => expectFinite(evaluatePlans(scenario, plan)));
      });
    }), { numRuns: 300, seed: 20261129 });
  });

  it('plan mutations throw only ScenarioValidationError, and accepted plans evaluate to finite numbers', () => {
    const scenario = parseScenario(scenarioSpec);
    fc.assert(fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
      const mutated = mutations.reduce(mutate, plan);
      onlyValidationErrors(() => expectFinite(evaluatePlans(scenario, mutated)));
    }), { numRuns: 300, seed: 20261129 });
  });
});
