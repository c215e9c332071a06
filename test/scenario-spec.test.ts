/** Scenario spec v1: the fixtures are accepted, derived values are right, and the JSON Schemas match zod. */
import Ajv2020 from 'ajv/dist/2020';
import * as fs from 'fs';
import * as path from 'path';
import { jsonSchemas } from '../src/model/json-schemas';
import { parseScenario } from '../src/model/scenario';
import { totalParams } from '../src/model/transformer';
import { ROOT, SCENARIO_FIXTURES, loadFixture, readFixture, readPlanFixture } from './helpers/fixtures';

describe('scenario fixtures', () => {
  it('accepts the issue example verbatim with its defaults applied', () => {
    const scenario = loadFixture('llama3-405b-two-buildings');
    expect(scenario.sites.map((s) => [s.name, s.gpu.name, s.gpus])).toEqual([['bldg-a', 'H100-SXM', 8192], ['bldg-b', 'H100-SXM', 8192]]);
    expect(scenario.links).toHaveLength(1);
    expect(scenario.links[0]!.rttS).toBeCloseTo(0.0006, 9);
    expect(scenario.links[0]!.bandwidthBytesPerS).toBeCloseTo(51200e9 / 8, 0);
    expect(scenario.model.kvHeads).toBe(8);
    expect(scenario.training.flashAttention).toBe(true);
    expect(scenario.routes[0]![1]).toEqual([0]);
  });

  it('derives RTT from fiber distance (4.9 us/km one way) and routes through an intermediate site', () => {
    const scenario = loadFixture('llama3-70b-three-regions');
    expect(scenario.links[0]!.rttS).toBeCloseTo(2 * 4.9e-6 * 1200, 12);
    const east = scenario.sites.findIndex((s) => s.name === 'east');
    const west = scenario.sites.findIndex((s) => s.name === 'west');
    expect(scenario.routes[east]![west]).toEqual([0, 1]);
    expect(scenario.sites[2]!.gpu.name).toBe('B200-custom');
    expect(scenario.sites[0]!.podGpus).toBe(1024);
  });

  it('counts parameters of known models within 1.5% of their published size', () => {
    expect(totalParams(loadFixture('llama3-405b-two-buildings').model) / 405.8e9).toBeCloseTo(1, 1);
    expect(Math.abs(totalParams(loadFixture('llama3-70b-three-regions').model) / 70.6e9 - 1)).toBeLessThan(0.015);
    expect(Math.abs(totalParams(loadFixture('llama3-8b-one-site').model) / 8.03e9 - 1)).toBeLessThan(0.015);
    // DeepSeek-V3: 671B in all; its MLA attention is modelled as MHA, so allow 3%.
    expect(Math.abs(totalParams(loadFixture('deepseek-v3-moe-two-sites').model) / 671e9 - 1)).toBeLessThan(0.03);
  });
});

describe('JSON Schemas', () => {
  it('committed schemas/ files equal the ones generated from zod (run `npm run schemas`)', () => {
    for (const [file, schema] of Object.entries(jsonSchemas())) {
      const committed = JSON.parse(fs.readFileSync(path.join(ROOT, 'schemas', file), 'utf8'));
      expect(committed).toEqual(schema);
    }
  });

  it('ajv accepts every scenario and plan fixture against the generated schemas', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const scenarioValidator = ajv.compile(jsonSchemas()['scenario.schema.json']!);
    const planValidator = ajv.compile(jsonSchemas()['plans.schema.json']!);
    for (const name of SCENARIO_FIXTURES) {
      expect({ name, ok: scenarioValidator(readFixture(name)), errors: scenarioValidator.errors ?? null }).toEqual({ name, ok: true, errors: null });
      expect({ name, ok: planValidator(readPlanFixture(name)) }).toEqual({ name, ok: true });
    }
  });

  it('ajv and zod both reject schema-level errors', () => {
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(jsonSchemas()['scenario.schema.json']!);
    const bad = JSON.parse(JSON.stringify(readFixture('llama3-405b-two-buildings')));
    bad.cluster.sites[1].gpus = 0;
    expect(validate(bad)).toBe(false);
    expect(() => parseScenario(bad)).toThrow('cluster.sites[1].gpus: must be a positive integer');
  });
});
