/**
 * The GPU-budget frontier (plan --pareto, docs/formulation.md §10) against the naive exhaustive
 * enumeration: each candidate holds a fixed number of GPUs, so the least time within a budget is
 * the least over the candidates that fit it.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FULL_SPACE } from '../src/formulation/search-space';
import { candidateGpus } from '../src/formulation/gpu-budget';
import { evaluate } from '../src/model/evaluate';
import { parseScenario } from '../src/model/scenario';
import { runCli } from '../src/cli/run';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultGpuBudgets, gpuFrontier, leastGpusOfSpace } from '../src/solve/pareto';
import { defaultBackends, plan } from '../src/solve/plan';
import { clone, fixturePath, readFixture } from './helpers/fixtures';

const GAP = 0.01;
let backends: MipBackend[];
beforeAll(() => { backends = defaultBackends(); });
afterAll(async () => { await Promise.all(backends.map((b) => b.close())); });
const context = () => ({ gap: GAP, backends, concurrentBackends: [], restriction: FULL_SPACE });

describe.each(['two-sites', 'three-heterogeneous'])('the frontier of %s', (name) => {
  const scenario = parseScenario(readFixture(`small/${name}`));
  // The least time of every candidate's fitting plans, by the GPUs it holds.
  const leastByGpus = new Map<number, number>();
  exhaustiveSearch(scenario, FULL_SPACE, Infinity, (candidate, leastS) => {
    const gpus = candidateGpus(candidate.config, candidate.dp);
    leastByGpus.set(gpus, Math.min(leastByGpus.get(gpus) ?? Infinity, leastS));
  }, { mode: 'naive' });
  const optimumWithin = (budget: number) => Math.min(...[...leastByGpus].filter(([g]) => g <= budget).map(([, s]) => s));
  const total = scenario.sites.reduce((sum, site) => sum + site.gpus, 0);

  it('is monotone, its bounds are below its times and below the exhaustive optimum of each budget', async () => {
    const budgets = [1, 2, 3, 4, 6, 8, total];
    const points = await gpuFrontier(scenario, budgets, 15, context());
    expect(points.map((p) => p.gpus)).toEqual(budgets);
    let previousS = Infinity;
    for (const p of points) {
      const optimumS = optimumWithin(p.gpus);
      // A valid bound never passes the true optimum of its budget.
      expect(p.lowerBoundS).toBeLessThanOrEqual(optimumS * (1 + 1e-9));
      if (!Number.isFinite(optimumS)) {
        expect(p.plan).toBeUndefined();
        expect(p.status).toBe('infeasible');
        continue;
      }
      expect(p.plan).toBeDefined();
      const fresh = evaluate(scenario, JSON.parse(JSON.stringify(p.plan)));
      expect(fresh.fits).toBe(true);
      expect(fresh.predicted.gpusUsed).toBeLessThanOrEqual(p.gpus);
      expect(fresh.predicted.iterationTimeS).toBeCloseTo(p.iterationTimeS!, 9);
      expect(p.iterationTimeS!).toBeGreaterThanOrEqual(optimumS * (1 - 1e-9));
      expect(p.lowerBoundS).toBeLessThanOrEqual(p.iterationTimeS! * (1 + 1e-12));
      if (p.status === 'optimal') expect(p.iterationTimeS!).toBeLessThanOrEqual(optimumS / (1 - GAP) * (1 + 1e-9));
      // More GPUs are never slower.
      expect(p.iterationTimeS!).toBeLessThanOrEqual(previousS);
      previousS = p.iterationTimeS!;
    }
  }, 60000);

  it('at the cluster\'s size takes the time of plain plan within the gap', async () => {
    const [point] = await gpuFrontier(scenario, [total], 10, context());
    const plain = await plan(scenario, { timeLimitS: 10, gap: GAP, baselines: false, backends });
    const planS = plain.evaluation!.predicted.iterationTimeS;
    expect(point!.iterationTimeS!).toBeLessThanOrEqual(planS / (1 - GAP));
    expect(planS).toBeLessThanOrEqual(point!.iterationTimeS! / (1 - GAP));
  }, 30000);

  it('grids the cluster from the least GPUs a plan needs up to all of them', () => {
    const least = leastGpusOfSpace(scenario, { restriction: FULL_SPACE });
    const grid = defaultGpuBudgets(scenario, least);
    expect(grid[0]).toBe(least);
    expect(grid[grid.length - 1]).toBe(total);
    expect(least).toBe(Math.min(...[...leastByGpus].filter(([, s]) => Number.isFinite(s)).map(([g]) => g)));
  });
});

describe('plan --pareto', () => {
  const run = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
    return { code, out, err };
  };

  it('prints frontier: [{ gpus, usdPerHour, iterationTimeS, lowerBoundS, plan }] with prices', async () => {
    const spec = clone(readFixture('small/two-sites')) as { cluster: { sites: { gpuHourUsd?: number }[] } };
    spec.cluster.sites[0]!.gpuHourUsd = 2;
    spec.cluster.sites[1]!.gpuHourUsd = 3;
    const file = path.join(os.tmpdir(), `pareto-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify(spec));
    const result = await run('plan', file, '--pareto', '--budgets', '8,16,4', '--json', '--time-limit', '10');
    expect(result.code).toBe(0);
    const { frontier } = JSON.parse(result.out);
    expect(frontier.map((p: { gpus: number }) => p.gpus)).toEqual([4, 8, 16]);
    for (const p of frontier) {
      expect(Object.keys(p)).toEqual(expect.arrayContaining(['gpus', 'usdPerHour', 'iterationTimeS', 'lowerBoundS', 'plan']));
      const fresh = evaluate(parseScenario(spec), p.plan);
      // The price of the GPUs the plan uses: the cheaper site's first whenever that is as fast.
      const usd = fresh.predicted.sites[0]!.gpusUsed * 2 + fresh.predicted.sites[1]!.gpusUsed * 3;
      expect(p.usdPerHour).toBeCloseTo(usd, 9);
    }
  }, 30000);

  it('exits 2 naming the option for bad budgets or combinations', async () => {
    const scenario = fixturePath('small/two-sites.json');
    expect((await run('plan', scenario, '--pareto', '--budgets', '8,x')).err.trim()).toBe("scaleacross: --budgets must be comma-separated positive GPU counts, got '8,x' (see scaleacross --help)");
    expect((await run('plan', scenario, '--budgets', '8')).code).toBe(2);
    expect((await run('plan', scenario, '--pareto', '--objective', 'cost')).code).toBe(2);
  });
});
