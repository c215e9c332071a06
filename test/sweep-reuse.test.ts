/**
 * Issue 20, item 3: reuse between neighbouring sweep points. A worker hands the plans of the
 * point it solved last to the next one when the two differ only in link figures or site sizes;
 * a seed is only an incumbent, evaluated on the new scenario, so the proven bound stays a bound
 * (checked here against exhaustive search), and a seed that does not lay out is dropped. Batches
 * send neighbouring points in chunks (guided sizes).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { BatchRecord } from '../src/batch/record';
import { chunkSize } from '../src/batch/run-batch';
import { TEST_CRASH_ENV, TEST_CRASH_MARKER } from '../src/batch/solve-task';
import { NeighbourSeeds, neighbourShape, seedsOf } from '../src/batch/neighbour-seeds';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { plan, seedsFor } from '../src/solve/plan';
import { ROOT, clone, readFixture } from './helpers/fixtures';

const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

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

describe('a batch sent in chunks', () => {
  it('answers every scenario exactly once when a worker dies in the middle of a chunk (the rest of the chunk runs on its replacement)', async () => {
    // 40 one-site scenarios in a folder: with 2 workers the chunks are 0-4, 5-8, 9-11, 12-14, ...;
    // the crash is the second of the third chunk, so the third is handed back unrun. Through the built CLI: the crash hook reads the
    // worker's environment, which the test process's environment reaches only through a child.
    const base = readFixture('small/one-site') as { name: string; training: { globalBatchSeqs: number }; cluster: { sites: { gpus: number }[] } };
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-chunks-'));
    const out = path.join(folder, 'results.ndjson');
    const inputs = path.join(folder, 'in');
    fs.mkdirSync(inputs);
    for (let i = 0; i < 40; i++) {
      const spec = clone(base);
      spec.name = i === 10 ? `chunked ${TEST_CRASH_MARKER}` : `chunked ${i}`;
      spec.cluster.sites[0]!.gpus = 8 * (1 + (i % 4));
      spec.training.globalBatchSeqs = 8 * (1 + Math.floor(i / 4));
      fs.writeFileSync(path.join(inputs, `s${String(i).padStart(2, '0')}.json`), JSON.stringify(spec));
    }
    const starts: number[] = [];
    for (let next = 0; next < 40; next += chunkSize(40 - next, 2)) starts.push(next);
    expect(starts.slice(0, 4)).toEqual([0, 5, 9, 12]);
    const run = spawnSync(process.execPath, [CLI, 'batch', inputs, '--out', out, '--workers', '2', '--time-limit', '2', '--no-baselines', '--no-charts', '--quiet'],
      { cwd: ROOT, env: { ...process.env, [TEST_CRASH_ENV]: 'exit' }, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('1 worker(s) replaced');
    const written = fs.readFileSync(out, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as BatchRecord);
    expect(written).toHaveLength(40);
    expect(new Set(written.map((r) => r.name)).size).toBe(40);
    const crashed = written.filter((r) => r.status === 'error');
    expect(crashed.map((r) => r.name)).toEqual([`chunked ${TEST_CRASH_MARKER}`]);
    expect(crashed[0]!.error).toMatch(/worker exited with code 70/);
    expect(written.filter((r) => r.status !== 'error').every((r) => ['optimal', 'feasible'].includes(r.status))).toBe(true);
    fs.rmSync(folder, { recursive: true, force: true });
  }, 300_000);
});
