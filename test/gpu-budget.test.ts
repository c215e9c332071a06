/** GPU and price budgets (docs/formulation.md §10): the candidate filter and the placement MIP's F15 rows. */
import { candidateGpus, candidateWithinBudget, layoutWithinBudget } from '../src/formulation/gpu-budget';
import { buildPlacementMip } from '../src/formulation/placement-mip';
import { FULL_SPACE } from '../src/formulation/search-space';
import { layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import { readFixture } from './helpers/fixtures';

const scenario = parseScenario(readFixture('small/three-heterogeneous'));
/** h100, a100 and b200 at different prices per GPU-hour. */
const gpuHourUsd = [2.5, 1.2, 6];
const priceOf = (gpusPerSite: ReadonlyMap<number, number>) => [...gpusPerSite].reduce((sum, [s, g]) => sum + g * gpuHourUsd[s]!, 0);

describe('GPU and price budgets', () => {
  const candidates = enumerateCandidates(scenario, FULL_SPACE).filter((c) => Number.isFinite(c.quickBoundS));

  it('drops a candidate exactly when its GPUs, or their cheapest price, exceed the budget', () => {
    for (const c of candidates.slice(0, 40)) {
      const g = candidateGpus(c.config, c.dp);
      expect(candidateWithinBudget(scenario, c.config, c.dp, { maxGpus: g })).toBe(true);
      expect(candidateWithinBudget(scenario, c.config, c.dp, { maxGpus: g - 1 })).toBe(false);
      // The cheapest g GPUs: the a100s first ($1.20), then the h100s ($2.50), then the b200s.
      const cheapest = [[4, 1.2], [4, 2.5], [4, 6]].reduce((acc, [n, p]) => {
        const take = Math.min(n!, acc.left);
        return { left: acc.left - take, usd: acc.usd + take * p! };
      }, { left: g, usd: 0 }).usd;
      expect(candidateWithinBudget(scenario, c.config, c.dp, { maxUsdPerHour: cheapest, gpuHourUsd })).toBe(true);
      expect(candidateWithinBudget(scenario, c.config, c.dp, { maxUsdPerHour: cheapest - 0.01, gpuHourUsd })).toBe(false);
    }
  });

  it('adds F15 rows whose coefficients are each choice\'s GPUs and their price', () => {
    const c = candidates.find((x) => x.dp >= 2)!.coefficients();
    const placement = buildPlacementMip(scenario, c, 0, Infinity, { maxGpus: 7, maxUsdPerHour: 20, gpuHourUsd })!;
    const row = (name: string) => placement.mip.rows.find((r) => r.name === name)!;
    for (const [name, upper, coefficientOf] of [
      ['gpu_budget', 7, (g: ReadonlyMap<number, number>) => [...g.values()].reduce((a, b) => a + b, 0)],
      ['gpu_budget_usd_per_hour', 20, priceOf],
    ] as const) {
      const r = row(name);
      expect(r.upper).toBe(upper);
      for (const choice of placement.choices) {
        expect(r.coefficients[r.columns.indexOf(choice.replicasColumn)]).toBeCloseTo(coefficientOf(choice.layout.gpusPerSite), 12);
      }
    }
    expect(buildPlacementMip(scenario, c)!.mip.rows.some((r) => r.name.startsWith('gpu_budget'))).toBe(false);
  });

  it('makes the MIP place replicas within the price budget, or find none', async () => {
    const highs = new HighsWorkerBackend(false);
    try {
      let bound = 0;
      for (const candidate of candidates.filter((x) => x.dp >= 2).slice(0, 6)) {
        const c = candidate.coefficients();
        const free = buildPlacementMip(scenario, c);
        if (!free) continue;
        const freeSolution = await highs.solve(free.mip, { timeLimitS: 5, relativeGap: 0 });
        if (!freeSolution.values) continue;
        const priceOfSolution = (placement: typeof free, values: readonly number[]) =>
          placement.choices.reduce((sum, ch) => sum + Math.round(values[ch.replicasColumn]!) * priceOf(ch.layout.gpusPerSite), 0);
        const freeUsd = priceOfSolution(free, freeSolution.values);
        // Just under the unbudgeted optimum's price: the budget must move or forbid it.
        const budget = { maxUsdPerHour: freeUsd - 0.01, gpuHourUsd };
        const limited = buildPlacementMip(scenario, c, 0, Infinity, budget)!;
        const solution = await highs.solve(limited.mip, { timeLimitS: 5, relativeGap: 0 });
        if (solution.values) {
          expect(priceOfSolution(limited, solution.values)).toBeLessThanOrEqual(budget.maxUsdPerHour + 1e-6);
          bound++;
        } else {
          expect(solution.status).toBe('infeasible');
        }
      }
      expect(bound).toBeGreaterThan(0);
    } finally {
      await highs.close();
    }
  }, 30000);

  it('checks a laid-out plan against both budgets', () => {
    const plan = {
      tp: 2, cp: 1, ep: 1, pp: 1, dp: 2, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1,
      placement: { replicaGroups: [{ replicas: 1, stageSites: [{ site: 'h100', stages: 1 }] }, { replicas: 1, stageSites: [{ site: 'b200', stages: 1 }] }] },
    };
    const layout = layOutPlan(scenario, plan);
    // 2 GPUs at $2.50 and 2 at $6.
    expect(layoutWithinBudget(scenario, layout, { maxGpus: 4, maxUsdPerHour: 17, gpuHourUsd })).toBe(true);
    expect(layoutWithinBudget(scenario, layout, { maxGpus: 3 })).toBe(false);
    expect(layoutWithinBudget(scenario, layout, { maxUsdPerHour: 16.99, gpuHourUsd })).toBe(false);
  });
});
