/**
 * The enumeration perf work changes no result: the current candidate enumeration and refined
 * bounds against a frozen copy of the code before it (bench/reference): same candidates in the
 * same order (configuration, dp, quick bound and memory need bit for bit), same coefficients
 * (what the placement MIP is built from) and the same refined bounds, on the fixtures, on
 * generated multi-site scenarios (bench/plan-scaling.ts) and on random mutations of the fixtures.
 */
import fc from 'fast-check';
import {
  enumerationDifferences, fixtureEnumerationCases, planScalingCases, runEnumeration, spreadIndices, type EnumerationCase,
} from '../bench/enumeration-cases';
import { FULL_SPACE, type SpaceRestriction } from '../src/formulation/search-space';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import type { ScenarioSpec } from '../src/model/scenario-schema';
import { clone, loadFixture, readFixture } from './helpers/fixtures';
import * as referenceMemory from '../bench/reference/memory';
import * as referencePlacement from '../bench/reference/placement';
import * as referenceStageCost from '../bench/reference/stage-cost';
import { stageMemory } from '../src/model/memory';
import { balancedLayers, buildStages } from '../src/model/placement';
import { RECOMPUTE_MODULES, type PlanSpec } from '../src/model/plan-schema';
import { stageTime } from '../src/model/stage-cost';

type Json = any; // a scenario document being mutated

const RESTRICTIONS: readonly (readonly [string, SpaceRestriction])[] = [
  ['full space', FULL_SPACE],
  ['whole replicas, 1f1b/interleaved', { layouts: 'whole', schedules: ['1f1b', 'interleaved'], defaultNetworkOnly: true }],
  ['split replicas', { layouts: 'split', defaultNetworkOnly: true }],
];

function expectSame(c: EnumerationCase, restriction: SpaceRestriction, refinedLimit: number): void {
  const indices = spreadIndices(refinedLimit);
  const expected = runEnumeration('reference', c.scenario, restriction, indices, true);
  const actual = runEnumeration('current', c.scenario, restriction, indices, true);
  expect(enumerationDifferences(expected, actual)).toEqual([]);
}

describe('candidate enumeration and refined bounds equal the reference (code before the perf work)', () => {
  // The restricted spaces (the baselines' searches) on the small fixtures and the 405B example; the
  // full space on every fixture.
  const restrictedCases = fixtureEnumerationCases().filter((c) => !/deepseek|70b|8b-one-site/.test(c.name));
  describe.each(RESTRICTIONS)('%s', (name, restriction) => {
    test.each((name === 'full space' ? fixtureEnumerationCases() : restrictedCases).map((c) => [c.name, c] as const))('%s', (_name, c) => {
      expectSame(c, restriction, 120);
    });
  });

  test.each(planScalingCases([3, 5]).map((c) => [c.name, c] as const))('%s (full space)', (_name, c) => {
    expectSame(c, FULL_SPACE, 100);
  });

  test('random mutations of the fixtures (search space, ZeRO, schedules, model shape, sites)', () => {
    const bases = ['small/one-site', 'small/two-sites', 'small/moe-two-sites', 'small/three-heterogeneous', 'llama3-8b-one-site']
      .map((name) => readFixture(name) as ScenarioSpec);
    const mutation = fc.record({
      base: fc.nat({ max: bases.length - 1 }),
      layers: fc.option(fc.integer({ min: 2, max: 40 })),
      moe: fc.option(fc.record({ experts: fc.constantFrom(4, 8, 16), topK: fc.constantFrom(1, 2), denseLayers: fc.integer({ min: 0, max: 3 }), sharedExperts: fc.constantFrom(0, 1) })),
      tiedEmbeddings: fc.boolean(),
      dropout: fc.boolean(),
      flashAttention: fc.boolean(),
      seqLen: fc.option(fc.constantFrom(1024, 2048, 4096, 32768)),
      globalBatchSeqs: fc.option(fc.constantFrom(6, 8, 12, 16, 24, 64)),
      gpus: fc.option(fc.constantFrom(8, 16, 24, 40, 64)),
      gpuType: fc.option(fc.constantFrom('A100-80GB', 'H100-SXM', 'H200', 'B200')),
      zero: fc.option(fc.subarray([0, 1, 2, 3] as const, { minLength: 1 })),
      schedules: fc.option(fc.subarray(['gpipe', '1f1b', 'interleaved', 'zb-h1'] as const, { minLength: 1 })),
      virtualStages: fc.option(fc.subarray([2, 3, 4], { minLength: 1 })),
      recompute: fc.option(fc.subarray(['none', 'selective', 'full'] as const, { minLength: 1 })),
      ep: fc.option(fc.subarray([1, 2, 4], { minLength: 1 })),
      cp: fc.option(fc.subarray([1, 2], { minLength: 1 })),
      compression: fc.boolean(),
    });
    let valid = 0;
    fc.assert(fc.property(mutation, (m) => {
      const spec: Json = clone(bases[m.base]!);
      const model: Json = spec.model;
      if (m.layers !== null) model['layers'] = m.layers;
      if (m.moe !== null) model['moe'] = { ...m.moe, expertFfnHidden: 512 };
      model['tiedEmbeddings'] = m.tiedEmbeddings;
      model['dropout'] = m.dropout;
      const training: Json = spec.training;
      training['flashAttention'] = m.flashAttention;
      if (m.seqLen !== null) training['seqLen'] = m.seqLen;
      if (m.globalBatchSeqs !== null) training['globalBatchSeqs'] = m.globalBatchSeqs;
      for (const site of spec.cluster.sites as Json[]) {
        if (m.gpus !== null) site['gpus'] = m.gpus;
        if (m.gpuType !== null) site['gpuType'] = m.gpuType;
      }
      const search: Json = { ...(spec.search ?? {}), allowGradientCompression: m.compression };
      for (const key of ['zero', 'schedules', 'virtualStages', 'recompute', 'ep', 'cp'] as const) if (m[key] !== null) search[key] = [...m[key]!];
      if (!model['moe'] && m.ep !== null) delete search['ep'];
      spec.search = search;
      let scenario: Scenario;
      try {
        scenario = parseScenario(spec, 'mutation');
      } catch (error) {
        if (error instanceof ScenarioValidationError) return; // an invalid mutation: nothing to enumerate
        throw error;
      }
      valid++;
      expectSame({ name: 'mutation', scenario }, FULL_SPACE, 60);
    }), { numRuns: 80, seed: 20240611 });
    expect(valid).toBeGreaterThanOrEqual(40);
  });

  test('balancedLayers equals the reference for every layer count up to 200 and stage count up to 64', () => {
    const mismatches: string[] = [];
    for (let layers = 1; layers <= 200; layers++) {
      for (let stages = 1; stages <= 64; stages++) {
        const now = balancedLayers(layers, stages).join(',');
        const before = referencePlacement.balancedLayers(layers, stages).join(',');
        if (now !== before) mismatches.push(`${layers} layers, ${stages} stages: ${now} vs ${before}`);
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  test('stage memory, stage times and stages equal the reference bit for bit (random plans, awkward sizes)', () => {
    const scenarios = ['deepseek-v3-moe-two-sites', 'llama3-70b-three-regions', 'small/three-heterogeneous'].map(loadFixture);
    // The DeepSeek-V3 fixture with multi-latent attention (the calibration row's shape), in bf16: the
    // reference prices every GEMM at one rate, as the cost model does in bf16.
    const deepseek = readFixture('deepseek-v3-moe-two-sites') as Json;
    deepseek.model.attention = { kind: 'mla', qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 };
    scenarios.push(parseScenario(deepseek, 'deepseek-v3-mla'));
    const planArbitrary = fc.record({
      scenario: fc.nat({ max: scenarios.length - 1 }),
      tp: fc.constantFrom(1, 2, 4, 8), cp: fc.constantFrom(1, 2, 3), ep: fc.constantFrom(1, 2, 4),
      pp: fc.integer({ min: 1, max: 16 }), dp: fc.integer({ min: 1, max: 300 }), microBatchSeqs: fc.constantFrom(1, 2, 3, 4),
      schedule: fc.constantFrom('gpipe', '1f1b', 'interleaved', 'zb-h1'), virtualStages: fc.constantFrom(1, 2, 3, 5),
      recompute: fc.constantFrom('none', 'selective', 'full'), zero: fc.constantFrom(0, 1, 2, 3),
      microbatches: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.double({ min: 0.5, max: 40, noNaN: true })),
      flashAttention: fc.boolean(), sitesUsedGpus: fc.constantFrom(0, 100000),
      recomputeModules: fc.option(fc.subarray([...RECOMPUTE_MODULES], { minLength: 1 })),
    });
    fc.assert(fc.property(planArbitrary, (a) => {
      const base = scenarios[a.scenario]!;
      const scenario = { ...base, training: { ...base.training, flashAttention: a.flashAttention } };
      const plan = { tp: a.tp, cp: a.cp, ep: a.ep, pp: a.pp, dp: a.dp, microBatchSeqs: a.microBatchSeqs, schedule: a.schedule, virtualStages: a.virtualStages, recompute: a.recompute, zero: a.zero } as PlanSpec;
      if (a.recompute === 'selective' && a.recomputeModules !== null) plan.recomputeModules = a.recomputeModules;
      const layers = referencePlacement.balancedLayers(scenario.model.layers, plan.pp);
      const stages = buildStages(scenario, plan, layers);
      expect(stages).toEqual(referencePlacement.buildStages(scenario, plan, layers));
      for (const stage of stages) {
        expect(stageMemory(scenario, plan, stage, a.microbatches)).toStrictEqual(referenceMemory.stageMemory(scenario, plan, stage, a.microbatches));
        for (const site of scenario.sites) {
          expect(stageTime(scenario, plan, stage, site, a.sitesUsedGpus)).toStrictEqual(referenceStageCost.stageTime(scenario, plan, stage, site, a.sitesUsedGpus));
        }
      }
    }), { numRuns: 300, seed: 7 });
  });
});
