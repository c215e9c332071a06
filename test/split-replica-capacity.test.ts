/**
 * GPUs a site has beyond its whole replicas can carry the stages of a replica split with another
 * site (docs/formulation.md §1, the data-parallel degree): 6 + 2 GPUs hold two replicas of four
 * one-GPU stages, one whole on the first site and one cut 2 + 2, where whole replicas alone hold
 * one. Checked against a plan written by hand and evaluated by the cost model alone; and with
 * Megatron-LM's tp-cp-ep-pp-dp rank order alone (whole replicas only), diagnose names the order.
 */
import { evaluate } from '../src/model/evaluate';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { diagnose } from '../src/diagnose/diagnose';
import { FULL_SPACE } from '../src/formulation/search-space';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { plan as planSearch } from '../src/solve/plan';

type Json = any; // scenario documents built below

const gpu = { name: 'V100-SXM2', peakBf16Tflops: 125, memoryGiB: 1000, hbmGBps: 900, scaleUpGBps: 150, scaleUpDomainGpus: 8, nicGbps: 3.125 };
const search = { tp: [1], pp: [4], microBatchSeqs: [1], schedules: ['1f1b'], recompute: ['none'], zero: [0] };

function sixPlusTwo(training: Json = {}, searchSpec: Json = search): Scenario {
  return parseScenario({
    version: 1, name: 'six-plus-two',
    model: { name: 'gpt-24L', layers: 24, hidden: 2048, ffnHidden: 8192, heads: 16, vocab: 50257, mlp: 'gelu', tiedEmbeddings: true, dropout: false },
    training: { seqLen: 2048, globalBatchSeqs: 64, precision: 'bf16', flashAttention: false, overlap: { tensorParallel: true, dataParallel: false, expertParallel: false }, ...training },
    cluster: {
      sites: [{ name: 'a', gpu, gpus: 6, gpusPerNode: 6 }, { name: 'b', gpu, gpus: 2, gpusPerNode: 2 }],
      links: [{ between: ['a', 'b'], bandwidthGbps: 400, rttMs: 1 }],
    },
    search: searchSpec,
  }, 'six-plus-two');
}

/** Two replicas: one whole on a, one with two stages on a and two on b. */
const handWritten: PlanSpec = {
  tp: 1, cp: 1, ep: 1, pp: 4, dp: 2, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 0,
  placement: { replicaGroups: [
    { replicas: 1, stageSites: [{ site: 'a', stages: 4 }] },
    { replicas: 1, stageSites: [{ site: 'a', stages: 2 }, { site: 'b', stages: 2 }] },
  ] },
};

describe('replicas split over the GPUs sites have beyond their whole replicas', () => {
  it('are searched: the plan is at least as fast as a two-replica plan written by hand, and the exhaustive reference agrees', async () => {
    const scenario = sixPlusTwo();
    const byHand = evaluate(scenario, handWritten);
    expect(byHand.fits).toBe(true);
    // One whole replica on a, the only plan of whole replicas, is about twice as slow.
    const whole = evaluate(scenario, { ...handWritten, dp: 1, placement: { replicaGroups: [{ replicas: 1, stageSites: [{ site: 'a', stages: 4 }] }] } });
    expect(whole.predicted.iterationTimeS).toBeGreaterThan(byHand.predicted.iterationTimeS * 1.5);
    const result = await planSearch(scenario, { timeLimitS: 20, baselines: false });
    expect(result.status).toBe('optimal');
    expect(result.plan!.dp).toBe(2);
    expect(result.evaluation!.predicted.iterationTimeS).toBeLessThanOrEqual(byHand.predicted.iterationTimeS * (1 + 1e-9));
    expect(result.bound.lowerBoundS).toBeLessThanOrEqual(byHand.predicted.iterationTimeS);
    // The exhaustive reference walks every placement of the same space: the planner is within its
    // proven gap of that optimum, and its bound below it.
    const exhaustive = exhaustiveSearch(scenario, FULL_SPACE, 60);
    const optimumS = exhaustive.evaluation!.predicted.iterationTimeS;
    expect(exhaustive.plan!.dp).toBe(2);
    expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimumS * (1 + 1e-9));
    expect(result.evaluation!.predicted.iterationTimeS).toBeGreaterThanOrEqual(optimumS * (1 - 1e-9));
    expect(result.evaluation!.predicted.iterationTimeS).toBeLessThanOrEqual(optimumS * (1 + result.bound.gap) * (1 + 1e-9));
  }, 120_000);

  it('leave the most whole replicas searched too, where no split can be placed (7 + 1 GPUs, whole replicas only)', async () => {
    // pp 2 of one GPU: the stages hold four replicas, whole replicas three; 8 microbatches of 8, so 3
    // divides nothing and is searched only as the most whole replicas. 60 GiB leaves dp 2 out of memory.
    const scenario = parseScenario({
      version: 1, name: 'seven-plus-one',
      model: { name: 'gpt-24L', layers: 24, hidden: 2048, ffnHidden: 8192, heads: 16, vocab: 50257, mlp: 'gelu', tiedEmbeddings: true, dropout: false },
      training: { seqLen: 2048, globalBatchSeqs: 64, precision: 'bf16', flashAttention: false, overlap: { tensorParallel: true, dataParallel: false, expertParallel: false } },
      cluster: {
        sites: [{ name: 'a', gpu: { ...gpu, memoryGiB: 60 }, gpus: 7, gpusPerNode: 7 }, { name: 'b', gpu: { ...gpu, memoryGiB: 60 }, gpus: 1, gpusPerNode: 1 }],
        links: [{ between: ['a', 'b'], bandwidthGbps: 100, rttMs: 5 }],
      },
      search: { tp: [1], pp: [2], microBatchSeqs: [8], schedules: ['1f1b'], recompute: ['none'], zero: [1], rankOrders: ['tp-cp-ep-pp-dp'] },
    }, 'seven-plus-one');
    const result = await planSearch(scenario, { timeLimitS: 20, baselines: false });
    expect(result.plan?.dp).toBe(3);
    expect(result.evaluation!.fits).toBe(true);
    expect(exhaustiveSearch(scenario, FULL_SPACE, 60).plan?.dp).toBe(3);
  }, 120_000);

  it('with rank order tp-cp-ep-pp-dp alone are not searched, and diagnose says the order keeps replicas whole', async () => {
    // A deadline only the split plan meets (5.0 s; whole replicas in that order take 6.2 s).
    const scenario = sixPlusTwo({ maxIterationTimeS: 5.5 }, { ...search, rankOrders: ['tp-cp-ep-pp-dp'] });
    const none = await planSearch(scenario, { timeLimitS: 20, baselines: false });
    expect(none.plan).toBeUndefined();
    const diagnosis = await diagnose(scenario, { reSolveTimeLimitS: 5 });
    expect(diagnosis.status).toBe('infeasible');
    const widenings = diagnosis.conflicts.flatMap((c) => c.relaxations).filter((r) => r.path === 'search.rankOrders');
    expect(widenings.map((r) => r.newValue)).toEqual([['tp-cp-ep-pp-dp', 'tp-cp-ep-dp-pp']]);
    expect(widenings[0]!.change).toMatch(/'tp-cp-ep-pp-dp' keeps every replica's pipeline whole on one site/);
    expect(widenings[0]!.verifiedIterationTimeS).toBeLessThanOrEqual(5.5);
  }, 120_000);
});
