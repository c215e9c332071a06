/**
 * MoE Parallel Folding (plan.expertTp, docs/cost-model.md §3 and §6): EP x expertTp x expert-DP
 * = TP x CP x DP. TP 2 with EP 32 and DP 16 is a valid plan; whole experts (expertTp 1) hold
 * twice the expert weights per GPU of experts split over tp 2, and keep the expert group inside
 * fewer GPUs; the exports carry the degree; the planner considers it.
 */
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import { enumerateConfigs, FULL_SPACE } from '../src/formulation/search-space';
import { stageMemory, stageParams } from '../src/model/memory';
import { layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { plan } from '../src/solve/plan';
import { stageTime } from '../src/model/stage-cost';

const scenario = parseScenario({
  version: 1,
  name: 'folding',
  model: {
    name: 'moe', layers: 8, hidden: 4096, ffnHidden: 12288, heads: 32, kvHeads: 8, vocab: 32000,
    moe: { experts: 64, topK: 8, expertFfnHidden: 1536 },
  },
  training: { seqLen: 4096, globalBatchSeqs: 256 },
  cluster: { sites: [{ name: 's', gpuType: 'H100-SXM', gpus: 32 }], links: [] },
});

const base = { tp: 2, cp: 1, ep: 32, pp: 1, dp: 16, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 };

describe('MoE Parallel Folding (expertTp)', () => {
  it('accepts TP 2, EP 32, DP 16 with whole experts and says why it does not without folding', () => {
    expect(layOutPlan(scenario, { ...base, expertTp: 1 }).plan.expertTp).toBe(1);
    expect(() => layOutPlan(scenario, base)).toThrow(/plan\.ep: 32 does not divide dp x cp = 16 .*expertTp can fold/);
    expect(() => layOutPlan(scenario, { ...base, expertTp: 2 })).toThrow(/plan\.expertTp: ep x expertTp = 64 does not divide tp x cp x dp = 32/);
  });

  it('keeps expert weights per GPU at routed / (ep x expertTp) and shards their state over the expert data-parallel ranks', () => {
    const folded = layOutPlan(scenario, { ...base, ep: 16, expertTp: 1 });
    const split = layOutPlan(scenario, { ...base, ep: 16 });
    const stage = folded.stages[0]!;
    expect(stageParams(scenario, folded.plan, stage).expert).toBeCloseTo(2 * stageParams(scenario, split.plan, stage).expert, 6);
    expect(stageParams(scenario, folded.plan, stage).dense).toBe(stageParams(scenario, split.plan, stage).dense);
    // ZeRO-1: the optimizer's expert shard = expert params / (tp x dp / (ep x expertTp)); twice the
    // params over twice the ranks with expertTp 1: the same optimizer bytes per GPU.
    const foldedMemory = stageMemory(scenario, folded.plan, stage, 1);
    const splitMemory = stageMemory(scenario, split.plan, stage, 1);
    expect(foldedMemory.optimizerGiB).toBeCloseTo(splitMemory.optimizerGiB, 9);
    expect(foldedMemory.weightsGiB).toBeGreaterThan(splitMemory.weightsGiB);
  });

  it('an expert group of ep whole experts stays inside one NVLink domain where ep x tp would not', () => {
    const folded = layOutPlan(scenario, { ...base, ep: 8, expertTp: 1 });
    const split = layOutPlan(scenario, { ...base, ep: 8 });
    const site = scenario.sites[0]!;
    const foldedTime = stageTime(scenario, folded.plan, folded.stages[0]!, site, 32);
    const splitTime = stageTime(scenario, split.plan, split.stages[0]!, site, 32);
    expect(foldedTime.epExposedS).toBeLessThan(splitTime.epExposedS);
    // Same expert FLOPs per GPU either way; the MoE layers' MLP collectives leave the tp group.
    expect(foldedTime.tpExposedS).toBeLessThan(splitTime.tpExposedS);
  });

  it('exports the degree to Megatron-LM; torchtitan, which has none of its own, refuses folded experts', () => {
    const folded = layOutPlan(scenario, { ...base, expertTp: 1 });
    expect(exportMegatron(scenario, folded).text).toContain('--expert-tensor-parallel-size 1');
    expect(exportMegatron(scenario, layOutPlan(scenario, { ...base, ep: 16 })).text).toContain('--expert-tensor-parallel-size 2');
    expect(exportTorchtitan(scenario, folded).messages.some((m) => m.severity === 'error' && /no expert tensor-parallel degree/.test(m.message))).toBe(true);
    expect(exportTorchtitan(scenario, layOutPlan(scenario, { ...base, ep: 16 })).messages.filter((m) => /expert tensor/.test(m.message))).toEqual([]);
  });

  it('the planner tries whole experts beside split ones for tp > 1 and ep > 1 only', () => {
    const configs = enumerateConfigs(scenario, FULL_SPACE);
    expect(configs.some((c) => c.tp === 2 && c.ep === 8 && c.expertTp === 1)).toBe(true);
    expect(configs.some((c) => c.tp === 2 && c.ep === 8 && c.expertTp === 2)).toBe(true);
    expect(configs.every((c) => c.expertTp === c.tp || (c.expertTp === 1 && c.ep > 1))).toBe(true);
  });

  it('search.expertFolding false keeps the experts split like the attention, EP within the data-parallel ranks', async () => {
    const unfolded = parseScenario({ ...scenario.spec, search: { expertFolding: false } });
    const configs = enumerateConfigs(unfolded, FULL_SPACE);
    expect(configs.some((c) => c.tp === 2 && c.ep === 8)).toBe(true);
    expect(configs.every((c) => c.expertTp === c.tp)).toBe(true);
    const result = await plan(unfolded, { timeLimitS: 5, baselines: false });
    expect(result.plan).toBeDefined();
    expect(result.plan!.expertTp).toBeUndefined();
    expect((result.plan!.dp * result.plan!.cp) % result.plan!.ep).toBe(0);
    // The unfolded space is a subset of the folded one: its optimum is never faster.
    const folded = await plan(scenario, { timeLimitS: 5, baselines: false });
    expect(folded.bound.lowerBoundS).toBeLessThanOrEqual(result.evaluation!.predicted.iterationTimeS * (1 + 1e-9));
  });
});
