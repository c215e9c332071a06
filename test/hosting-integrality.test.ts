/**
 * The ring-pattern bound's whole-replica test (src/formulation/hosting-integrality.ts), its integer
 * programs answered by HiGHS on this thread as in the planner: a candidate without any placement
 * of dp whole replicas gets no hosting (an infinite bound at once), one with a placement keeps its
 * finite bound; the bound's validity against exhaustive optima is checked in
 * test/bounds-per-candidate.test.ts.
 */
import { FULL_SPACE } from '../src/formulation/search-space';
import { anyWholeReplicaPlacement, type IntegerFeasibility } from '../src/formulation/hosting-integrality';
import { MipBuilder } from '../src/formulation/mip';
import { ringPatternSearch } from '../src/formulation/ring-pattern-bound';
import { parseScenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import * as highsIntegerFeasibility from '../src/solve/highs-integer-feasibility';
import { plan } from '../src/solve/plan';
import { clone, readFixture } from './helpers/fixtures';

type Json = any; // scenario JSON mutated below

/** Three H100 sites of `gpus` each in a chain, dp x pp 4 one-GPU stages, 6 sequences. */
function threeSites(gpus: readonly number[]) {
  const spec: Json = clone(readFixture('small/three-heterogeneous'));
  spec.cluster.sites.forEach((site: Json, i: number) => { site.gpuType = 'H100-SXM'; site.gpus = gpus[i]; site.gpusPerNode = gpus[i]; });
  spec.training.globalBatchSeqs = 6;
  spec.search = { tp: [1], pp: [4], microBatchSeqs: [1], schedules: ['1f1b'], recompute: ['none'], zero: [1] };
  const scenario = parseScenario(spec, 'three sites');
  const candidate = enumerateCandidates(scenario, FULL_SPACE).find((c) => c.dp === 3)!;
  return { scenario, candidate, siteGpus: scenario.sites.map((s) => s.gpus) };
}

let wholeReplicas: IntegerFeasibility;
beforeAll(async () => {
  const loaded = await highsIntegerFeasibility.integerFeasibilityOnThisThread();
  if (!loaded) throw new Error('HiGHS did not load on the test thread');
  wholeReplicas = loaded;
});

describe('whole replicas for the ring-pattern bound', () => {
  it('dp 3 x pp 4 on sites of 4, 4 and 4 GPUs: a placement exists, the bound is finite', () => {
    const { scenario, candidate, siteGpus } = threeSites([4, 4, 4]);
    expect(anyWholeReplicaPlacement(candidate.coefficients(), siteGpus, wholeReplicas)).toBe(true);
    expect(Number.isFinite(ringPatternSearch(scenario, candidate.coefficients(), siteGpus, candidate.quickBoundS, undefined, true, wholeReplicas).boundS)).toBe(true);
  });

  it('dp 6 x pp 2 interleaved with 6 sequences: each replica needs pp = 2 microbatches, 12 > 6, whatever the hosting', () => {
    const spec: Json = clone(readFixture('small/three-heterogeneous'));
    for (const site of spec.cluster.sites) site.gpuType = 'H100-SXM';
    spec.training.globalBatchSeqs = 6;
    spec.search = { tp: [1], pp: [2], microBatchSeqs: [1], schedules: ['interleaved'], virtualStages: [2], recompute: ['none'], zero: [1] };
    const scenario = parseScenario(spec, 'interleaved');
    const siteGpus = scenario.sites.map((s) => s.gpus);
    const candidate = enumerateCandidates(scenario, FULL_SPACE).find((c) => c.dp === 6)!;
    const c = candidate.coefficients();
    expect(anyWholeReplicaPlacement(c, siteGpus, wholeReplicas)).toBe(false);
    expect(ringPatternSearch(scenario, c, siteGpus, 0, undefined, true, wholeReplicas).boundS).toBe(Infinity);
    // Fractional replicas (Gale's condition alone) did not see it: the bound was finite.
    expect(Number.isFinite(ringPatternSearch(scenario, c, siteGpus, 0, undefined, true).boundS)).toBe(true);
  });

  it('the 8-site program of 192 replicas split over chained pairs, which filled every GPU exactly: answered, feasible', () => {
    // The planner-scaling 8-site row's tp 8, pp 64, ZB-H1, dp 192 candidate: 512-GPU replicas,
    // each split between neighbouring sites at a multiple of 64 GPUs (both stage orders), on eight
    // sites of 12,288 GPUs. javascript-lp-solver's phase one did not return on it.
    const builder = new MipBuilder();
    const replicas: [number, number][] = [];
    const most: [number, number][] = [];
    const fewest: [number, number][] = [];
    const gpus: [number, number][][] = Array.from({ length: 8 }, () => []);
    for (let site = 0; site < 7; site++) {
      for (const order of [0, 1]) {
        for (let k = 1; k < 8; k++) {
          const x = builder.addColumn(`split${site}o${order}k${k}`, 0, 192, { integer: true });
          replicas.push([x, 1]);
          most.push([x, 256]);
          fewest.push([x, 32]);
          gpus[site]!.push([x, 64 * k]);
          gpus[site + 1]!.push([x, 512 - 64 * k]);
        }
      }
    }
    builder.addRow('replicas', replicas, 192, 192);
    builder.addRow('mostMicrobatches', most, 16384, Infinity);
    builder.addRow('fewestMicrobatches', fewest, -Infinity, 16384);
    gpus.forEach((terms, site) => builder.addRow(`gpusOfSite${site}`, terms, -Infinity, 12288));
    expect(wholeReplicas(builder.build(), 0.2)).toBe('feasible');
    // One GPU fewer on the first site: 192 x 512 GPUs no longer fit, and HiGHS proves it.
    const short = builder.build();
    const tighter = { ...short, rows: short.rows.map((row) => (row.name === 'gpusOfSite0' ? { ...row, upper: 12287 } : row)) };
    expect(wholeReplicas(tighter, 0.2)).toBe('infeasible');
  });

  it('integrality is proven, not only the linear relaxation: 2x = 1 has no integer x, 2x = 2 has', () => {
    const half = new MipBuilder();
    const x = half.addColumn('x', 0, 10, { integer: true });
    half.addRow('twice', [[x, 2]], 1, 1);
    expect(wholeReplicas(half.build(), 0.2)).toBe('infeasible');
    const one = new MipBuilder();
    const y = one.addColumn('y', 0, 10, { integer: true });
    one.addRow('twice', [[y, 2]], 2, 2);
    expect(wholeReplicas(one.build(), 0.2)).toBe('feasible');
    // A fractional relaxation (its vertex x = 0.5) is not taken for infeasibility: x = 1 is a solution.
    const between = new MipBuilder();
    const z = between.addColumn('z', 0, 2, { integer: true });
    between.addRow('between', [[z, 1]], 0.5, 1.5);
    expect(wholeReplicas(between.build(), 0.2)).toBe('feasible');
  });

  it('plan() asks the whole-replica programs of HiGHS on its own thread by default, and not when told not to', async () => {
    const { scenario } = threeSites([4, 4, 4]);
    const loaded = jest.spyOn(highsIntegerFeasibility, 'integerFeasibilityOnThisThread');
    try {
      const asked: number[] = [];
      // The instance beforeAll loaded (this very function's), counted.
      loaded.mockImplementation(async () => (mip, timeLimitS) => { asked.push(mip.columns.length); return wholeReplicas(mip, timeLimitS); });
      const withTest = await plan(scenario, { timeLimitS: 20, baselines: false });
      expect(loaded).toHaveBeenCalledTimes(1);
      expect(asked.length).toBeGreaterThan(0);
      const without = await plan(scenario, { timeLimitS: 20, baselines: false, integerFeasibility: false });
      expect(loaded).toHaveBeenCalledTimes(1);
      // The same plan; the bound with whole replicas is never below the one without them.
      expect(without.evaluation?.predicted.iterationTimeS).toBeCloseTo(withTest.evaluation!.predicted.iterationTimeS, 9);
      expect(withTest.bound.lowerBoundS).toBeGreaterThanOrEqual(without.bound.lowerBoundS * (1 - 1e-9));
    } finally {
      loaded.mockRestore();
    }
  }, 60_000);
});
