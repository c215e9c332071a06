/**
 * The ring-pattern bound's whole-replica test (src/formulation/hosting-integrality.ts; off in the
 * planner, turned on here): a
 * candidate without any placement of dp whole replicas gets no hosting (an infinite bound at
 * once), one with a placement keeps its finite bound; the bound's validity against exhaustive
 * optima is checked in test/bounds-per-candidate.test.ts.
 */
import { FULL_SPACE } from '../src/formulation/search-space';
import { anyWholeReplicaPlacement } from '../src/formulation/hosting-integrality';
import { ringPatternSearch } from '../src/formulation/ring-pattern-bound';
import { parseScenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
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

describe('whole replicas for the ring-pattern bound', () => {
  it('dp 3 x pp 4 on sites of 4, 4 and 4 GPUs: a placement exists, the bound is finite', () => {
    const { scenario, candidate, siteGpus } = threeSites([4, 4, 4]);
    expect(anyWholeReplicaPlacement(candidate.coefficients(), siteGpus)).toBe(true);
    expect(Number.isFinite(ringPatternSearch(scenario, candidate.coefficients(), siteGpus, candidate.quickBoundS, undefined, true, true).boundS)).toBe(true);
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
    expect(anyWholeReplicaPlacement(c, siteGpus)).toBe(false);
    expect(ringPatternSearch(scenario, c, siteGpus, 0, undefined, true, true).boundS).toBe(Infinity);
    // Fractional replicas (Gale's condition alone) did not see it: the bound was finite.
    expect(Number.isFinite(ringPatternSearch(scenario, c, siteGpus, 0, undefined, true, false).boundS)).toBe(true);
  });
});
