/**
 * The reduced exhaustive enumeration (site symmetry, bound pruning, dominated network settings;
 * docs/formulation.md §9) against the naive one, plan by plan, on small scenarios: the same least
 * time; with the bounds off, exactly the naive enumeration's placements and plans covered; and the
 * site symmetries the cost model has.
 *
 * FUZZ_RUNS and FUZZ_SEED widen or move the random sample.
 */
import fc from 'fast-check';
import { FULL_SPACE } from '../src/formulation/search-space';
import { evaluate } from '../src/model/evaluate';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { exhaustiveSearch, type ExhaustiveResult } from '../src/solve/exhaustive';
import { costModelSiteSymmetries } from '../src/solve/site-symmetry';
import { smallScenarioArbitrary } from '../bench/random-scenarios';
import { clone, readFixture } from './helpers/fixtures';

type Json = any; // scenario JSON

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 8);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261202);
const NAIVE_CAP_S = 8;

const bestS = (r: ExhaustiveResult): number => r.evaluation?.predicted.iterationTimeS ?? Infinity;

/** Every site a copy of the first (names kept) and every link a copy of the first: the most symmetric version of a scenario. */
function symmetrized(spec: Json): Json {
  const copy = clone(spec);
  const [first, ...rest] = copy.cluster.sites;
  copy.cluster.sites = [first, ...rest.map((site: Json) => ({ ...clone(first), name: site.name }))];
  const link = copy.cluster.links[0];
  copy.cluster.links = copy.cluster.links.map((l: Json) => ({ ...clone(link), between: l.between }));
  return copy;
}

/** Two equal H800 sites (a MoE model), a narrower search than the fixture's. */
function twoEqualSites(): Json {
  const spec: Json = clone(readFixture('small/moe-two-sites'));
  spec.training.globalBatchSeqs = 4;
  spec.search = { ...spec.search, ep: [1, 2], recompute: ['none'], schedules: ['1f1b'] };
  return spec;
}

/** Three equal H100 sites in a mesh of equal links: the rotations are symmetries, the reflections are not. */
function threeEqualSitesMesh(): Json {
  const spec: Json = clone(readFixture('small/three-heterogeneous'));
  for (const site of spec.cluster.sites) site.gpuType = 'H100-SXM';
  spec.cluster.links = [['h100', 'a100'], ['a100', 'b200'], ['h100', 'b200']].map((between) => ({ between, bandwidthGbps: 400, distanceKm: 50 }));
  // Three replicas, one per site, load all three links: 24^3 network settings for that placement.
  spec.training.globalBatchSeqs = 3;
  spec.search = { ...spec.search, pp: [1], schedules: ['1f1b'], recompute: ['none'] };
  return spec;
}

function compare(scenario: Scenario, naiveCapS = NAIVE_CAP_S): { naive: ExhaustiveResult; symmetryOnly: ExhaustiveResult; reduced: ExhaustiveResult } | undefined {
  const naive = exhaustiveSearch(scenario, FULL_SPACE, naiveCapS, undefined, { mode: 'naive' });
  if (!naive.complete) return undefined;
  const symmetryOnly = exhaustiveSearch(scenario, FULL_SPACE, 60, undefined, { mode: 'reduced', bounds: false });
  const reduced = exhaustiveSearch(scenario, FULL_SPACE, 60);
  const choiceBoundsOnly = exhaustiveSearch(scenario, FULL_SPACE, 60, undefined, { candidateBounds: false });
  expect(symmetryOnly.complete).toBe(true);
  expect(reduced.complete).toBe(true);
  expect(choiceBoundsOnly.complete).toBe(true);
  const naiveS = bestS(naive);
  if (Number.isFinite(naiveS)) {
    // Images of a plan are timed the same up to floating-point summation order.
    expect(bestS(symmetryOnly) / naiveS).toBeCloseTo(1, 9);
    expect(bestS(reduced) / naiveS).toBeCloseTo(1, 9);
    expect(bestS(choiceBoundsOnly) / naiveS).toBeCloseTo(1, 9);
    // The reported plan is a real plan of the space with that time.
    expect(evaluate(scenario, reduced.plan!).predicted.iterationTimeS / naiveS).toBeCloseTo(1, 9);
  } else {
    expect(bestS(symmetryOnly)).toBe(Infinity);
    expect(bestS(reduced)).toBe(Infinity);
    expect(bestS(choiceBoundsOnly)).toBe(Infinity);
  }
  // Orbits counted with their sizes add up to the naive enumeration, placement by placement and plan by plan.
  expect(symmetryOnly.coverage.placementsCovered).toBe(naive.coverage.placementsEvaluated);
  expect(symmetryOnly.coverage.plansCovered).toBe(naive.coverage.plansEvaluated);
  expect(symmetryOnly.coverage.placementsEvaluated).toBeLessThanOrEqual(naive.coverage.placementsEvaluated);
  expect(reduced.coverage.candidatesEnumerated + reduced.coverage.candidatesPrunedByBound).toBe(reduced.coverage.candidates);
  return { naive, symmetryOnly, reduced };
}

describe('site symmetries of the cost model', () => {
  it('two equal sites swap; three equal sites in an equal mesh rotate but do not reflect; unequal sites or links have none', () => {
    expect(costModelSiteSymmetries(parseScenario(twoEqualSites())).length).toBe(2);
    expect(costModelSiteSymmetries(parseScenario(threeEqualSitesMesh())).length).toBe(3);
    const chain = threeEqualSitesMesh();
    chain.cluster.links = chain.cluster.links.slice(0, 2);
    // The chain's only automorphism swaps its ends, which reverses the ring over all three sites.
    expect(costModelSiteSymmetries(parseScenario(chain)).length).toBe(1);
    const otherGpu = twoEqualSites();
    otherGpu.cluster.sites[1].gpus = 16;
    expect(costModelSiteSymmetries(parseScenario(otherGpu)).length).toBe(1);
    const fourMesh = symmetrized(readFixture('small/four-site-mesh'));
    // Four equal sites in an equal mesh: the permutations that keep every ring of 3 or 4 sites in its cyclic direction.
    expect(costModelSiteSymmetries(parseScenario(fourMesh)).length).toBe(4);
  });
});

describe('the naive enumeration, kept as the reference', () => {
  it('keeps to its time limit within one placement\'s network settings', () => {
    // Four sites in a full mesh: a placement whose traffic loads four links has 24^4 = 331,776
    // network settings (before the check inside them, a 1 s limit ran for 18.6 s on one such placement).
    const scenario = parseScenario(readFixture('small/four-site-mesh'));
    const naive = exhaustiveSearch(scenario, FULL_SPACE, 1, undefined, { mode: 'naive' });
    expect(naive.complete).toBe(false);
    expect(naive.timeS).toBeLessThan(2);
    expect(naive.coverage.mode).toBe('naive');
    // The reduced one finishes it.
    const reduced = exhaustiveSearch(scenario, FULL_SPACE, 60);
    expect(reduced.complete).toBe(true);
    expect(bestS(reduced)).toBeLessThanOrEqual(bestS(naive));
  });
});

describe('the reduced enumeration finds the naive enumeration\'s least time', () => {
  it.each([
    ['two equal sites (MoE)', twoEqualSites()],
    ['three equal sites, mesh', threeEqualSitesMesh()],
    ['two unequal sites with pods', (() => { const s: Json = clone(readFixture('small/two-sites')); s.search = { ...s.search, schedules: ['1f1b'], microBatchSeqs: [1], recompute: ['none'] }; return s; })()],
  ])('%s', (_name, spec) => {
    const scenario = parseScenario(spec);
    const result = compare(scenario, 60);
    expect(result).toBeDefined();
    const { naive, symmetryOnly, reduced } = result!;
    const symmetries = costModelSiteSymmetries(scenario).length;
    if (symmetries > 1) expect(symmetryOnly.coverage.placementsEvaluated).toBeLessThan(naive.coverage.placementsEvaluated);
    // The bounds and the dominated network settings skip work here (a rule that never pruned would not be tested).
    expect(reduced.coverage.plansEvaluated).toBeLessThan(symmetryOnly.coverage.plansEvaluated);
  }, 120_000);

  it('on random small scenarios, as drawn and with every site and link made alike', () => {
    let compared = 0;
    let symmetric = 0;
    fc.assert(fc.property(smallScenarioArbitrary, fc.boolean(), (drawn, alike) => {
      let scenario: Scenario;
      try {
        scenario = parseScenario(alike ? symmetrized(drawn) : drawn, 'random');
      } catch (error) {
        if (error instanceof ScenarioValidationError) return;
        throw error;
      }
      if (compare(scenario) === undefined) return; // the naive enumeration did not finish within its cap
      compared++;
      if (costModelSiteSymmetries(scenario).length > 1) symmetric++;
    }), { numRuns: RUNS, seed: SEED });
    expect(compared).toBeGreaterThanOrEqual(Math.ceil(RUNS / 2));
    expect(symmetric).toBeGreaterThan(0);
  }, Math.max(240_000, RUNS * 40_000));
});
