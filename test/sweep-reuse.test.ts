/**
 * Issue 20, item 3: reuse between neighbouring sweep points. A worker hands the plans of the
 * point it solved last to the next one when the two differ only in link figures or site sizes;
 * a seed is only an incumbent, evaluated on the new scenario, so the proven bound stays a bound
 * (checked here against exhaustive search), and a seed that does not lay out is dropped. Batches
 * send neighbouring points in chunks (guided sizes).
 */
import { chunkSize } from '../src/batch/run-batch';
import { NeighbourSeeds, neighbourShape, seedsOf } from '../src/batch/neighbour-seeds';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { plan, seedsFor } from '../src/solve/plan';
import { clone, readFixture } from './helpers/fixtures';

type Spec = { name: string; training: { globalBatchSeqs: number }; model: { layers: number }; cluster: { sites: { name: string; gpus: number; gpuType: string }[]; links: { bandwidthGbps: number; rttMs: number }[] }; search: Record<string, unknown> };
const base = readFixture('small/two-sites') as Spec;
/** The two-site fixture in a small space, so that exhaustive search is quick. */
const small = (): Spec => {
  const spec = clone(base);
  spec.search = { ...spec.search, recompute: ['none'], microBatchSeqs: [1] };
  return spec;
};
const withLink = (bandwidthGbps: number, rttMs: number): Spec => {
  const spec = small();
  spec.cluster.links[0] = { ...spec.cluster.links[0]!, bandwidthGbps, rttMs };
  return spec;
};

describe('neighbouring sweep points', () => {
  it('are scenarios that differ only in link figures and site sizes (and name)', () => {
    const a = small();
    const b = withLink(3200, 30);
    b.cluster.sites[1]!.gpus = 16;
    b.name = 'another name';
    expect(neighbourShape(b)).toBe(neighbourShape(a));
    const otherBatch = small();
    otherBatch.training.globalBatchSeqs = 16;
    const otherModel = small();
    otherModel.model.layers = 16;
    const otherGpu = small();
    otherGpu.cluster.sites[1]!.gpuType = 'H200';
    const otherSpace = small();
    otherSpace.search = { ...otherSpace.search, tp: [1] };
    for (const other of [otherBatch, otherModel, otherGpu, otherSpace]) expect(neighbourShape(other)).not.toBe(neighbourShape(a));
    expect(neighbourShape(null)).toBeUndefined();
    expect(neighbourShape([a])).toBeUndefined();
  });

  it('a seed is only an incumbent: with seeds from a neighbour the proven bound stays below the exhaustive optimum', async () => {
    const first = parseScenario(withLink(200, 4));
    const answered = await plan(first, { timeLimitS: 5 });
    expect(answered.plan).toBeDefined();
    const keeper = new NeighbourSeeds();
    keeper.remember(withLink(200, 4), answered);
    for (const [bandwidthGbps, rttMs] of [[3200, 4], [50, 30], [800, 0.5]] as const) {
      const spec = withLink(bandwidthGbps, rttMs);
      const seeds = keeper.for(spec);
      expect(seeds?.main).toEqual([answered.plan]);
      const scenario = parseScenario(spec);
      const seeded = await plan(scenario, { timeLimitS: 5, seeds });
      const exhaustive = exhaustiveSearch(scenario, FULL_SPACE, 120);
      expect(exhaustive.complete).toBe(true);
      const optimumS = exhaustive.evaluation!.predicted.iterationTimeS;
      expect(seeded.bound.lowerBoundS).toBeLessThanOrEqual(optimumS * (1 + 1e-9));
      expect(seeded.evaluation!.predicted.iterationTimeS).toBeGreaterThanOrEqual(optimumS * (1 - 1e-9));
      expect(seeded.bound.gap).toBeCloseTo((seeded.evaluation!.predicted.iterationTimeS - seeded.bound.lowerBoundS) / seeded.evaluation!.predicted.iterationTimeS, 12);
    }
  }, 300_000);

  it('a seed that does not lay out on the new scenario is dropped, not an error', async () => {
    const answered = await plan(parseScenario(withLink(200, 4)), { timeLimitS: 5 });
    const groups = answered.plan!.placement!.replicaGroups;
    // A site renamed: the seed names a site that no longer exists.
    const renamed = withLink(200, 4);
    renamed.cluster.sites[1]!.name = 'c';
    (renamed.cluster.links[0] as unknown as { between: string[] }).between = ['a', 'c'];
    const scenario = parseScenario(renamed);
    expect(groups.some((g) => g.stageSites.some((s) => s.site === 'b')) ? seedsFor(scenario, [answered.plan!]) : []).toEqual([]);
    const result = await plan(scenario, { timeLimitS: 5, seeds: seedsOf(answered) });
    expect(result.plan).toBeDefined();
  }, 120_000);

  it('seeds are forgotten for a point that is not a neighbour', () => {
    const keeper = new NeighbourSeeds();
    keeper.remember(small(), { status: 'infeasible', bound: { lowerBoundS: Infinity, gap: Infinity, proven: true }, solver: {} as never, reasons: [], baselines: [] });
    expect(keeper.for(withLink(800, 1))).toEqual({ main: [], production: [], 'pp-across': [] });
    const other = small();
    other.training.globalBatchSeqs = 32;
    expect(keeper.for(other)).toBeUndefined();
    keeper.forget();
    expect(keeper.for(small())).toBeUndefined();
  });
});

describe('chunks of neighbouring points per worker message', () => {
  it('are at least 1 and at most 16, shrinking as the batch ends so that the workers finish together', () => {
    for (const workers of [1, 2, 8]) {
      let previous = Infinity;
      for (let remaining = 1000; remaining >= 1; remaining--) {
        const size = chunkSize(remaining, workers);
        expect(size).toBeGreaterThanOrEqual(1);
        expect(size).toBeLessThanOrEqual(Math.min(16, remaining));
        expect(size).toBeLessThanOrEqual(previous);
        previous = size;
      }
      expect(chunkSize(4 * workers - 1, workers)).toBe(1);
    }
  });
});
