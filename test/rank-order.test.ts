/**
 * The rank order inside a site (plan.rankOrder; docs/cost-model.md §3): Megatron-LM's default
 * tp-cp-ep-dp-pp sends pipeline activations over the NICs and rings a stage's gradients inside a
 * node, tp-cp-ep-pp-dp (--use-tp-pp-dp-mapping) keeps a pipeline that fits a scale-up domain on it
 * and rings each stage's gradients over one rank per pipeline. Checked against the network tiers
 * by hand, in the exports and rank tables, in the planner's space, and (test/bounds-per-candidate)
 * against exhaustive search.
 */
import { evaluate } from '../src/model/evaluate';
import { CALIBRATION } from '../src/model/calibration-constants';
import { layOutPlan } from '../src/model/placement';
import { allReduceS, dataParallelTier, scaleOutTier, tierForGroup } from '../src/model/network';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import { rankTable } from '../src/export/ranks-csv';
import { plan as planSearch } from '../src/solve/plan';

type Json = any; // scenario documents built below

/** A V100-class GPU behind 25 Gb/s per 8-GPU server (DT-FM's one-site case, calibration.md §I). */
const slowNicGpu = { name: 'V100-SXM2', peakBf16Tflops: 125, memoryGiB: 1000, hbmGBps: 900, scaleUpGBps: 150, scaleUpDomainGpus: 8, nicGbps: 3.125 };

function slowNicScenario(sites: Json[] = [{ name: 'dc', gpu: slowNicGpu, gpus: 64, gpusPerNode: 8 }], links: Json[] = [], search?: Json): Scenario {
  return parseScenario({
    version: 1, name: 'rank-order',
    model: { name: 'gpt-24L', layers: 24, hidden: 2048, ffnHidden: 8192, heads: 16, vocab: 50257, mlp: 'gelu', tiedEmbeddings: true, dropout: false },
    training: { seqLen: 2048, globalBatchSeqs: 1024, precision: 'bf16', flashAttention: false, overlap: { tensorParallel: true, dataParallel: false, expertParallel: false } },
    cluster: { sites, links },
    ...(search ? { search } : {}),
  }, 'rank-order');
}

const pipelinePlan: PlanSpec = { tp: 1, cp: 1, ep: 1, pp: 8, dp: 8, microBatchSeqs: 1, schedule: 'gpipe', virtualStages: 1, recompute: 'none', zero: 0 };

describe('rank order inside a site', () => {
  const scenario = slowNicScenario();
  const site = scenario.sites[0]!;
  const sendBytes = 2048 * 2048 * 2; // one sequence's activations in bf16, tp 1
  const m = 1024 / 8;

  it('sends pipeline activations over the NICs in the default order and over NVLink when a replica\'s 8 stages fill one server', () => {
    const byDefault = evaluate(scenario, pipelinePlan).predicted.breakdown;
    const sideBySide = evaluate(scenario, { ...pipelinePlan, rankOrder: 'tp-cp-ep-pp-dp' }).predicted.breakdown;
    const nic = scaleOutTier(site, false);
    const nvlink = tierForGroup(site, 8, false);
    expect(nvlink.bytesPerS).toBeGreaterThan(nic.bytesPerS * 100);
    // Per microbatch the bottleneck stage sends forward and backward once each (GPipe, one chunk).
    expect(byDefault.ppExposedS).toBeCloseTo(m * 2 * (sendBytes / nic.bytesPerS + nic.stepLatencyS), 9);
    expect(sideBySide.ppExposedS).toBeCloseTo(m * 2 * (sendBytes / nvlink.bytesPerS + nvlink.stepLatencyS), 9);
    expect(sideBySide.computeS).toBe(byDefault.computeS);
  });

  it('rings each stage\'s gradients over one rank per server instead of inside a server', () => {
    const byDefault = evaluate(scenario, pipelinePlan);
    const sideBySide = evaluate(scenario, { ...pipelinePlan, rankOrder: 'tp-cp-ep-pp-dp' });
    // Without overlap the exposed sync is the slowest stage's all-reduce (ZeRO 0) of the same bytes:
    // 8 ranks inside a server (NVLink) against 8 ranks on 8 servers, one NIC each.
    const inServer = dataParallelTier(site, 8, 1, false);
    const acrossServers = dataParallelTier(site, 8, 8, false);
    expect(acrossServers.bytesPerS).toBe(scaleOutTier(site, false).bytesPerS);
    const bytesOf = (syncS: number, tier: typeof inServer) => ((syncS - 14 * tier.stepLatencyS) * tier.bytesPerS * 8) / 14;
    const bytes = bytesOf(byDefault.predicted.breakdown.dpExposedS, inServer);
    expect(bytes).toBeGreaterThan(0);
    expect(sideBySide.predicted.breakdown.dpExposedS).toBeCloseTo(allReduceS(bytes, 8, acrossServers), 6);
    // At 128 microbatches per replica the sends over 3.1 Gb/s per GPU (6.5 s) cost more than the
    // rings over them (2.7 s, once per iteration): the side-by-side order wins.
    expect(sideBySide.predicted.iterationTimeS).toBeLessThan(byDefault.predicted.iterationTimeS * 0.75);
  });

  it('keeps the NICs for pipeline sends when a pipeline does not fit one scale-up domain', () => {
    const longPipeline = { ...pipelinePlan, pp: 16, dp: 4 };
    const byDefault = evaluate(scenario, longPipeline).predicted.breakdown;
    const sideBySide = evaluate(scenario, { ...longPipeline, rankOrder: 'tp-cp-ep-pp-dp' }).predicted.breakdown;
    expect(sideBySide.ppExposedS).toBe(byDefault.ppExposedS);
  });

  it('exports as Megatron-LM --use-tp-pp-dp-mapping with its rank table, and is an error for torchtitan', () => {
    const layout = layOutPlan(scenario, { ...pipelinePlan, rankOrder: 'tp-cp-ep-pp-dp' });
    const megatron = exportMegatron(scenario, layout);
    expect(megatron.keys).toContain('--use-tp-pp-dp-mapping');
    expect(megatron.rankMap.order).toMatch(/tp-cp-ep-pp-dp/);
    expect(exportMegatron(scenario, layOutPlan(scenario, pipelinePlan)).keys).not.toContain('--use-tp-pp-dp-mapping');
    // Ranks 0-7 are replica 0's stages 0-7 (one server), where the default order puts stage 0 of replicas 0-7 there.
    const table = rankTable(scenario, layout);
    expect(table.rows.slice(0, 8).map((r) => [r.stage, r.replica])).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((s) => [s, 0]));
    expect(table.rows.slice(0, 8).every((r) => r.node === 0)).toBe(true);
    const byDefault = rankTable(scenario, layOutPlan(scenario, pipelinePlan));
    expect(byDefault.rows.slice(0, 8).map((r) => [r.stage, r.replica])).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((r) => [0, r]));
    const titan = exportTorchtitan(scenario, layout);
    expect(titan.messages.some((msg) => msg.severity === 'error' && /tp-cp-ep-pp-dp/.test(msg.message))).toBe(true);
  });

  it('numbers each replica\'s ranks side by side on its site, and refuses a replica split across sites', () => {
    const two = slowNicScenario(
      [{ name: 'a', gpu: slowNicGpu, gpus: 32, gpusPerNode: 8 }, { name: 'b', gpu: slowNicGpu, gpus: 32, gpusPerNode: 8 }],
      [{ between: ['a', 'b'], bandwidthGbps: 100, distanceKm: 100 }]);
    const whole: PlanSpec = {
      ...pipelinePlan, rankOrder: 'tp-cp-ep-pp-dp',
      placement: { replicaGroups: [{ replicas: 4, stageSites: [{ site: 'a', stages: 8 }] }, { replicas: 4, stageSites: [{ site: 'b', stages: 8 }] }] },
    };
    const table = rankTable(two, layOutPlan(two, whole));
    // Replica r holds ranks 8r..8r+7, one server: replicas 0-3 on a, 4-7 on b.
    expect(table.rows.filter((r) => r.replica === 5).map((r) => [r.rank, r.stage, two.sites[r.site]!.name, r.node])).toEqual(
      [40, 41, 42, 43, 44, 45, 46, 47].map((rank, stage) => [rank, stage, 'b', 1]));
    expect(table.problems).toEqual([]);
    // Its send and ring tiers take the whole pipeline at one site: a split replica is an input error.
    const split: PlanSpec = { ...whole, placement: { replicaGroups: [{ replicas: 8, stageSites: [{ site: 'a', stages: 4 }, { site: 'b', stages: 4 }] }] } };
    expect(() => layOutPlan(two, split)).toThrow(/plan\.placement\.replicaGroups\[0\]\.stageSites: spans sites, and rank order 'tp-cp-ep-pp-dp' is modelled for replicas whole on one site/);
  });

  it('is refused with expert or context parallelism, naming plan.rankOrder', () => {
    const moe = parseScenario({
      version: 1, name: 'moe',
      model: { name: 'moe', layers: 4, hidden: 1024, ffnHidden: 4096, heads: 8, vocab: 32000, moe: { experts: 8, topK: 2, expertFfnHidden: 1024 } },
      training: { seqLen: 1024, globalBatchSeqs: 16 },
      cluster: { sites: [{ name: 'dc', gpuType: 'H100-SXM', gpus: 16 }] },
    }, 'moe');
    expect(() => evaluate(moe, { tp: 1, ep: 2, pp: 2, dp: 8, microBatchSeqs: 1, rankOrder: 'tp-cp-ep-pp-dp' })).toThrow(/plan\.rankOrder.*not ep 2/);
    // Nor with context parallelism: Megatron-Core asks that neither be used with --use-tp-pp-dp-mapping.
    expect(() => evaluate(scenario, { ...pipelinePlan, cp: 2, dp: 4, rankOrder: 'tp-cp-ep-pp-dp' })).toThrow(/plan\.rankOrder.*not cp 2/);
    // Nor with experts folded over tp at ep 1 (Megatron-Core's expert data-parallel groups would not match the dense ones).
    expect(() => evaluate(moe, { tp: 2, ep: 1, expertTp: 1, pp: 2, dp: 4, microBatchSeqs: 1, rankOrder: 'tp-cp-ep-pp-dp' })).toThrow(/plan\.rankOrder.*not expertTp 1 with tp 2/);
  });

  it('is a Megatron-LM error with ZeRO 2-3, whose export runs Megatron FSDP', () => {
    const zero2 = exportMegatron(scenario, layOutPlan(scenario, { ...pipelinePlan, zero: 2, rankOrder: 'tp-cp-ep-pp-dp' }));
    expect(zero2.messages.some((msg) => msg.severity === 'error' && /--use-tp-pp-dp-mapping does not run with Megatron FSDP/.test(msg.message))).toBe(true);
    const zero1 = exportMegatron(scenario, layOutPlan(scenario, { ...pipelinePlan, zero: 1, rankOrder: 'tp-cp-ep-pp-dp' }));
    expect(zero1.messages.some((msg) => msg.severity === 'error')).toBe(false);
  });

  it('is searched when the scenario asks for it, and the plan found is the cost model\'s', async () => {
    const search = { tp: [1], pp: [8], microBatchSeqs: [1], schedules: ['gpipe'], recompute: ['none'], zero: [0] };
    const defaultOnly = await planSearch(slowNicScenario(undefined, undefined, search), { timeLimitS: 20, baselines: false });
    expect(defaultOnly.plan?.rankOrder).toBeUndefined();
    const scenarioBoth = slowNicScenario(undefined, undefined, { ...search, rankOrders: ['tp-cp-ep-dp-pp', 'tp-cp-ep-pp-dp'] });
    const both = await planSearch(scenarioBoth, { timeLimitS: 20, baselines: false });
    expect(both.plan?.rankOrder).toBe('tp-cp-ep-pp-dp');
    expect(both.status).toBe('optimal');
    expect(both.evaluation!.predicted.iterationTimeS).toBeCloseTo(evaluate(scenarioBoth, both.plan!).predicted.iterationTimeS, 12);
    expect(both.evaluation!.predicted.iterationTimeS).toBeLessThan(defaultOnly.evaluation!.predicted.iterationTimeS * 0.75);
    // The bound holds for the default order's plan too: it is in the searched space.
    expect(both.bound.proven).toBe(true);
    expect(both.bound.lowerBoundS).toBeLessThanOrEqual(evaluate(scenarioBoth, { ...pipelinePlan, dp: 8 }).predicted.iterationTimeS);
  }, 60_000);

  it('bus efficiency of the NIC tier is the calibrated one (the figures above rest on it)', () => {
    expect(scaleOutTier(site, false).bytesPerS).toBeCloseTo((3.125e9 / 8) * CALIBRATION.scaleOutBusEfficiency, 3);
  });
});
