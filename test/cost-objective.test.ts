/**
 * plan --objective cost and the limits (docs/formulation.md §10): never dearer than the time
 * objective's plan, never past its limits, its bound never above its cost nor, where the
 * exhaustive enumeration gives the optimum, above the optimum.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../src/cli/run';
import { candidateGpus } from '../src/formulation/gpu-budget';
import { FULL_SPACE } from '../src/formulation/search-space';
import { evaluate } from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import { planCost } from '../src/model/prices';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { minimiseCost } from '../src/solve/cost-objective';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends, plan } from '../src/solve/plan';
import { fastestWithinLimits } from '../src/solve/plan-limits';
import type { PlanResult } from '../src/solve/plan-result';
import { clone, fixturePath, readFixture } from './helpers/fixtures';

type Spec = { cluster: { sites: { gpuHourUsd?: number }[]; links: { egressUsdPerGB?: number }[] }; training: { totalTokens?: number }; search?: Record<string, unknown> };

const GAP = 0.01;
let backends: MipBackend[];
beforeAll(() => { backends = defaultBackends(); });
afterAll(async () => { await Promise.all(backends.map((b) => b.close())); });
const context = () => ({ gap: GAP, backends, concurrentBackends: [], restriction: FULL_SPACE });

function priced(name: string, prices: readonly number[], egressUsdPerGB: number, edit: (spec: Spec) => void = () => undefined): Scenario {
  const spec = clone(readFixture(`small/${name}`)) as Spec;
  spec.cluster.sites.forEach((site, i) => { site.gpuHourUsd = prices[i]; });
  spec.cluster.links.forEach((link) => { link.egressUsdPerGB = egressUsdPerGB; });
  spec.training.totalTokens = 1e9;
  edit(spec);
  return parseScenario(spec);
}

const costOf = (scenario: Scenario, result: PlanResult) => {
  expect(result.plan).toBeDefined();
  const fresh = evaluate(scenario, JSON.parse(JSON.stringify(result.plan)));
  expect(fresh.fits).toBe(true);
  return planCost(scenario, layOutPlan(scenario, result.plan), fresh)!;
};

describe('the cost objective', () => {
  it('finds the exhaustive least cost with alike prices and no egress, its bound below it', async () => {
    const scenario = priced('two-sites', [2, 2], 0);
    // Alike prices, no egress: a plan costs 2 x GPUs x time / 3600, and a candidate holds a fixed number of GPUs.
    let optimumUsd = Infinity;
    exhaustiveSearch(scenario, FULL_SPACE, Infinity, (candidate, leastS) => {
      optimumUsd = Math.min(optimumUsd, (2 * candidateGpus(candidate.config, candidate.dp) * leastS) / 3600);
    }, { mode: 'naive' });
    const cost = await minimiseCost(scenario, {}, 10, context());
    const usd = costOf(scenario, cost.result).usdPerIteration;
    expect(cost.costBound.usdPerIteration).toBeLessThanOrEqual(optimumUsd * (1 + 1e-9));
    expect(usd).toBeGreaterThanOrEqual(optimumUsd * (1 - 1e-9));
    expect(cost.result.status).toBe('optimal');
    expect(usd * (1 - GAP)).toBeLessThanOrEqual(cost.costBound.usdPerIteration * (1 + 1e-9));
  }, 30000);

  it.each([
    ['two-sites', [2, 3], 0.05],
    ['three-heterogeneous', [2.5, 1.2, 6], 0.02],
  ] as const)('on %s is never dearer than the time objective, and its bound is below its cost', async (name, prices, egress) => {
    const scenario = priced(name, prices, egress);
    const cost = await minimiseCost(scenario, {}, 10, context());
    const fastest = await plan(scenario, { timeLimitS: 10, gap: GAP, baselines: false, backends });
    const usd = costOf(scenario, cost.result).usdPerIteration;
    expect(usd).toBeLessThanOrEqual(costOf(scenario, fastest).usdPerIteration * (1 + 1e-9));
    expect(cost.costBound.usdPerIteration).toBeLessThanOrEqual(usd);
    expect(cost.costBound.gap).toBeCloseTo((usd - cost.costBound.usdPerIteration) / usd, 12);
    // Every price budget searched: its plan within it, its bound below its plan.
    for (const b of cost.budgets) if (b.iterationTimeS !== undefined) expect(b.lowerBoundS).toBeLessThanOrEqual(b.iterationTimeS);
  }, 40000);

  it('keeps to --max-usd-per-hour and --max-training-days, and says so when nothing can', async () => {
    const scenario = priced('three-heterogeneous', [2.5, 1.2, 6], 0.02);
    const free = costOf(scenario, (await minimiseCost(scenario, {}, 5, context())).result);
    const fastest = costOf(scenario, await plan(scenario, { timeLimitS: 5, gap: GAP, baselines: false, backends }));
    // Caps between the cheapest plan's and the fastest plan's figures bind.
    const maxUsdPerHour = (free.usdPerHour + fastest.usdPerHour) / 2;
    const maxTrainingDays = (free.trainingDays! + fastest.trainingDays!) / 2;
    for (const limits of [{ maxUsdPerHour }, { maxTrainingDays }, { maxUsdPerHour: fastest.usdPerHour, maxTrainingDays }]) {
      for (const result of [(await minimiseCost(scenario, limits, 5, context())).result, await fastestWithinLimits(scenario, limits, 5, context())]) {
        const c = costOf(scenario, result);
        if (limits.maxUsdPerHour !== undefined) expect(c.usdPerHour).toBeLessThanOrEqual(limits.maxUsdPerHour * (1 + 1e-12));
        if (limits.maxTrainingDays !== undefined) expect(c.trainingDays!).toBeLessThanOrEqual(limits.maxTrainingDays * (1 + 1e-9));
      }
    }
    const none = await minimiseCost(scenario, { maxUsdPerHour: 0.01 }, 5, context());
    expect(none.result.status).toBe('infeasible');
    expect(none.result.reasons.join(' ')).toContain('--max-usd-per-hour');
    // The fastest plan within a cap that no plan meets names the cap first (its other reasons are the search's, within the cap).
    const fastestNone = await fastestWithinLimits(scenario, { maxUsdPerHour: 2 }, 5, context());
    expect(fastestNone.status).toBe('infeasible');
    expect(fastestNone.reasons[0]).toBe('--max-usd-per-hour 2 pays for at most 1 GPU(s), at the cheapest site\'s $1.2 per GPU-hour; the reasons after this one are of the plans within it');
    // Then the least cap that can help: a lower bound on the cheapest plan's price, which minimiseCost found above.
    const least = /^no plan of this space fits on fewer than (\d+) GPUs: at least \$([\d.]+) per hour/.exec(fastestNone.reasons[1] ?? '');
    expect(least).not.toBeNull();
    expect(Number(least![2])).toBeCloseTo(Number(least![1]) * 1.2, 2);
    expect(Number(least![2])).toBeGreaterThan(2);
    expect(Number(least![2])).toBeLessThanOrEqual(free.usdPerHour + 0.005);
  }, 60000);

  it('pays for every GPU when search.allowIdleGpus is false: the fastest plan is then the cheapest up to egress', async () => {
    const scenario = priced('two-sites', [2, 3], 0, (spec) => { spec.search = { ...spec.search, allowIdleGpus: false }; });
    const cost = await minimiseCost(scenario, {}, 5, context());
    const c = costOf(scenario, cost.result);
    expect(c.usdPerHour).toBe(8 * 2 + 8 * 3);
    expect(cost.costBound.usdPerIteration).toBeCloseTo((40 * cost.result.bound.lowerBoundS) / 3600, 12);
  }, 30000);
});

describe('plan --objective cost on the command line', () => {
  const run = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
    return { code, out, err };
  };

  it('prints the plan with cost and costBound', async () => {
    const spec = clone(readFixture('small/two-sites')) as Spec;
    spec.cluster.sites[0]!.gpuHourUsd = 2;
    spec.cluster.sites[1]!.gpuHourUsd = 3;
    const file = path.join(os.tmpdir(), `cost-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify(spec));
    const result = await run('plan', file, '--objective', 'cost', '--json', '--time-limit', '5');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out);
    expect(json.objective).toBe('cost');
    expect(json.cost.trainingDays).toBeNull();
    expect(json.costBound.usdPerIteration).toBeLessThanOrEqual(json.cost.usdPerIteration);
    const text = await run('plan', file, '--objective', 'cost', '--time-limit', '5');
    expect(text.out).toContain('Bound: every plan within the limits costs at least');
    expect(text.out).toContain('give training.totalTokens');
  }, 30000);

  it('gives plain plan --json and evaluate --json the same cost of the same plan', async () => {
    const spec = clone(readFixture('small/two-sites')) as Spec;
    spec.cluster.sites[0]!.gpuHourUsd = 2;
    spec.cluster.sites[1]!.gpuHourUsd = 3;
    spec.cluster.links[0]!.egressUsdPerGB = 0.05;
    spec.training.totalTokens = 1e9;
    const file = path.join(os.tmpdir(), `cost-plain-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify(spec));
    const planned = JSON.parse((await run('plan', file, '--json', '--time-limit', '5')).out);
    expect(Object.keys(planned.cost)).toEqual(expect.arrayContaining(['usdPerHour', 'usdPerIteration', 'egressUsdPerIteration', 'trainingDays', 'trainingUsd', 'egressUsd']));
    const planFile = path.join(os.tmpdir(), `cost-plain-${process.pid}.plan.json`);
    fs.writeFileSync(planFile, JSON.stringify(planned.plan));
    const evaluated = JSON.parse((await run('evaluate', file, '--plan', planFile, '--json')).out);
    expect(evaluated.cost.usdPerIteration).toBeCloseTo(planned.cost.usdPerIteration, 12);
    expect(planned.cost.trainingDays).toBeCloseTo((61036 * planned.predicted.iterationTimeS) / 86400, 9);
  }, 30000);

  it('exits 2 with one line when the scenario lacks what an option needs', async () => {
    const scenario = fixturePath('small/two-sites.json');
    const cost = await run('plan', scenario, '--objective', 'cost');
    expect([cost.code, cost.err.trim()]).toEqual([2, 'scaleacross: --objective cost needs a price for every site (cluster.sites[].gpuHourUsd in the scenario) (see scaleacross --help)']);
    expect((await run('plan', scenario, '--max-training-days', '3')).err).toContain('--max-training-days needs training.totalTokens');
    expect((await run('plan', scenario, '--max-usd-per-hour', '-1')).err.trim()).toBe('scaleacross: --max-usd-per-hour must be a positive number (see scaleacross --help)');
  });
});
