/** The price of a plan (docs/cost-model.md §8) against hand-computed cases. */
import { evaluateLayout } from '../src/model/evaluate';
import { linkBytesPerIteration } from '../src/model/link-traffic';
import { layOutPlan } from '../src/model/placement';
import { planCost, pricesOf } from '../src/model/prices';
import { parseScenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import {
  cheapestGpusUsdPerHour, egressUsdPerIteration, gpuUsdPerHour, iterationsForTokens, trainingCost, usdPerIteration,
} from '../src/model/training-cost';
import { clone, readFixture } from './helpers/fixtures';

type Spec = {
  cluster: { sites: { gpuHourUsd?: number }[]; links: { egressUsdPerGB?: number }[] };
  training: { totalTokens?: number };
  search?: Record<string, unknown>;
};

/** fixtures/small/two-sites.json (tiny-1b, hidden 2048, seqLen 2048, batch 8; 8 + 8 H100s) with prices. */
function pricedTwoSites(edit: (spec: Spec) => void = () => undefined) {
  const spec = clone(readFixture('small/two-sites')) as Spec;
  spec.cluster.sites[0]!.gpuHourUsd = 2;
  spec.cluster.sites[1]!.gpuHourUsd = 3;
  spec.cluster.links[0]!.egressUsdPerGB = 0.05;
  spec.training.totalTokens = 1e9;
  edit(spec);
  return parseScenario(spec);
}

/** pp 2 with stage 0 at a and stage 1 at b: 4 replicas of 2 microbatches of one sequence each. */
const splitPlan = {
  tp: 1, cp: 1, ep: 1, pp: 2, dp: 4, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1,
  placement: { replicaGroups: [{ replicas: 4, stageSites: [{ site: 'a', stages: 1 }, { site: 'b', stages: 1 }] }] },
};
/** pp 1, dp 8: four replicas at each site, so the gradient ring crosses the link. */
const spreadPlan = {
  tp: 1, cp: 1, ep: 1, pp: 1, dp: 8, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1,
  placement: { replicaGroups: [{ replicas: 4, stageSites: [{ site: 'a', stages: 1 }] }, { replicas: 4, stageSites: [{ site: 'b', stages: 1 }] }] },
};

describe('cost arithmetic', () => {
  it('prices GPUs per site, egress per direction, iterations and the run', () => {
    expect(gpuUsdPerHour([8, 4], [2, 3])).toBe(28);
    expect(egressUsdPerIteration([{ aToBBytes: 2e9, bToABytes: 1e9 }, { aToBBytes: 5e9, bToABytes: 0 }], [0.02, 0])).toBeCloseTo(0.06, 12);
    // 1e9 tokens / (8 x 2048) = 61035.15625: 61036 whole iterations.
    expect(iterationsForTokens(1e9, 8, 2048)).toBe(61036);
    expect(iterationsForTokens(8 * 2048 * 10, 8, 2048)).toBe(10);
    expect(usdPerIteration(28, 3.6, 0.06)).toBeCloseTo(0.088, 12);
    const cost = trainingCost({ usdPerHour: 28, iterationTimeS: 3.6, egressUsdPerIteration: 0.06, egressBytesPerIteration: 3e9, gpusPaid: 12, iterations: 1000 });
    expect(cost.usdPerIteration).toBeCloseTo(0.088, 12);
    expect(cost.trainingDays).toBeCloseTo(3600 / 86400, 12);
    expect(cost.trainingUsd).toBeCloseTo(88, 9);
    expect(cost.egressUsd).toBeCloseTo(60, 9);
    expect(cost.egressGBPerIteration).toBe(3);
    const noTokens = trainingCost({ usdPerHour: 28, iterationTimeS: 3.6, egressUsdPerIteration: 0, egressBytesPerIteration: 0, gpusPaid: 12 });
    expect([noTokens.iterations, noTokens.trainingDays, noTokens.trainingUsd, noTokens.egressUsd]).toEqual([null, null, null, null]);
  });

  it('takes the cheapest sites first for the least price of g GPUs', () => {
    const sites = [{ gpus: 8, gpuHourUsd: 3 }, { gpus: 4, gpuHourUsd: 2 }];
    expect(cheapestGpusUsdPerHour(sites, 3)).toBe(6);
    expect(cheapestGpusUsdPerHour(sites, 6)).toBe(4 * 2 + 2 * 3);
    expect(cheapestGpusUsdPerHour(sites, 12)).toBe(32);
    expect(cheapestGpusUsdPerHour(sites, 13)).toBe(Infinity);
  });
});

describe('the price of a plan', () => {
  it('charges the pipeline activations and gradients each way at the egress price', () => {
    const scenario = pricedTwoSites();
    const layout = layOutPlan(scenario, splitPlan);
    const evaluation = evaluateLayout(scenario, layout);
    expect(evaluation.fits).toBe(true);
    // 4 replicas x 2 microbatches x (1 x 2048 tokens x 2048 hidden x 2 bytes) each way; one site per stage, no gradient crosses.
    const eachWay = 4 * 2 * 2048 * 2048 * 2;
    expect(linkBytesPerIteration(scenario, layout)).toEqual([{ aToBBytes: eachWay, bToABytes: eachWay }]);
    const cost = planCost(scenario, layout, evaluation)!;
    const t = evaluation.predicted.iterationTimeS;
    // 4 GPUs at a ($2) and 4 at b ($3).
    expect(cost.usdPerHour).toBe(20);
    expect(cost.egressUsdPerIteration).toBeCloseTo((2 * eachWay / 1e9) * 0.05, 12);
    expect(cost.usdPerIteration).toBeCloseTo(20 * t / 3600 + (2 * eachWay / 1e9) * 0.05, 12);
    expect(cost.iterations).toBe(61036);
    expect(cost.trainingDays).toBeCloseTo(61036 * t / 86400, 9);
    expect(cost.trainingUsd).toBeCloseTo(61036 * cost.usdPerIteration, 6);
    expect(cost.egressUsd).toBeCloseTo(61036 * cost.egressUsdPerIteration, 6);
  });

  it('counts the gradient ring across the link as the cost model loads it, per direction', () => {
    const scenario = pricedTwoSites();
    const layout = layOutPlan(scenario, spreadPlan);
    const evaluation = evaluateLayout(scenario, layout);
    const [link] = linkBytesPerIteration(scenario, layout);
    // The evaluation's busier-direction bytes and gradient-sync bytes are the same traffic.
    expect(link!.aToBBytes).toBeGreaterThan(0);
    expect(Math.max(link!.aToBBytes, link!.bToABytes)).toBeCloseTo(evaluation.predicted.links[0]!.bytesPerIteration, 0);
    expect(link!.aToBBytes).toBeCloseTo(evaluation.predicted.links[0]!.gradientSyncBytes, 0);
    const cost = planCost(scenario, layout, evaluation)!;
    expect(cost.egressUsdPerIteration).toBeCloseTo(((link!.aToBBytes + link!.bToABytes) / 1e9) * 0.05, 12);
    expect(cost.usdPerHour).toBe(4 * 2 + 4 * 3);
  });

  it('releases idle GPUs unless search.allowIdleGpus is false, then pays for every GPU', () => {
    const released = pricedTwoSites();
    const held = pricedTwoSites((spec) => { spec.search = { ...spec.search, allowIdleGpus: false }; });
    for (const [scenario, usdPerHour, gpusPaid] of [[released, 20, 8], [held, 8 * 2 + 8 * 3, 16]] as const) {
      const layout = layOutPlan(scenario, splitPlan);
      const cost = planCost(scenario, layout, evaluateLayout(scenario, layout))!;
      expect([cost.usdPerHour, cost.gpusPaid]).toEqual([usdPerHour, gpusPaid]);
    }
  });

  it('has no price without site prices, and rejects prices given for only some sites', () => {
    const plain = parseScenario(readFixture('small/two-sites'));
    expect(pricesOf(plain)).toBeUndefined();
    const partial = clone(readFixture('small/two-sites')) as Spec;
    partial.cluster.sites[0]!.gpuHourUsd = 2;
    expect(() => parseScenario(partial)).toThrow(ScenarioValidationError);
    expect(() => parseScenario(partial)).toThrow('cluster.sites[1].gpuHourUsd: is required when another site has a price');
    const egressOnly = clone(readFixture('small/two-sites')) as Spec;
    egressOnly.cluster.links[0]!.egressUsdPerGB = 0.01;
    expect(() => parseScenario(egressOnly)).toThrow('cluster.sites[0].gpuHourUsd: is required when a link has an egress price');
    const negative = clone(readFixture('small/two-sites')) as Spec;
    negative.cluster.sites[0]!.gpuHourUsd = -1;
    negative.cluster.sites[1]!.gpuHourUsd = 1;
    expect(() => parseScenario(negative)).toThrow('cluster.sites[0].gpuHourUsd: must be a non-negative number');
  });
});
