/**
 * Adam's moments in bf16 (training.optimizerMomentsDtype, Megatron-LM's precision-aware optimizer;
 * docs/cost-model.md §5-6): the optimizer state drops from 12 to 8 bytes per parameter (fp32 master
 * weight 4, m and v 2 each), sharded from ZeRO 1, and the Adam step moves 8 bytes less per owned
 * parameter; with ZeRO 0 nothing changes (no distributed optimizer to hold them).
 */
import { evaluate } from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario } from '../src/model/scenario';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import { scenarioWith } from './helpers/scenario-with';
import { readFixture } from './helpers/fixtures';

type Json = any; // a scenario document being changed

const model = { layers: 4, hidden: 2048, ffnHidden: 8192, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' };
const base: PlanSpec = { tp: 1, cp: 1, ep: 1, pp: 1, dp: 1, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 };

describe('bf16 Adam moments', () => {
  it('take the optimizer state from 12 to 8 bytes per parameter, layers and embedding alike, and change nothing else in memory', () => {
    const fp32 = evaluate(scenarioWith(model, { optimizerMomentsDtype: 'fp32' }), base);
    const bf16 = evaluate(scenarioWith(model, { optimizerMomentsDtype: 'bf16' }), base);
    const [a, b] = [fp32.predicted.peakMemory, bf16.predicted.peakMemory];
    expect(b.optimizerGiB).toBeCloseTo((a.optimizerGiB * 8) / 12, 9);
    expect(b.weightsGiB).toBe(a.weightsGiB);
    expect(b.gradientsGiB).toBe(a.gradientsGiB);
    expect(b.activationsGiB).toBe(a.activationsGiB);
    // The embedding and output matrices (2 x 32,000 x 2,048 parameters, one GPU): 4 bytes each less.
    const vocabParams = 2 * 32000 * 2048;
    expect((a.embeddingOutputGiB - b.embeddingOutputGiB) * 2 ** 30).toBeCloseTo(4 * vocabParams, 0);
    // The layers' weight matrices by hand, 4 bytes each less: 4 x (attention 2 x 2048 x (2048 + 1024), 8 KV
    // heads of 128, + SwiGLU 3 x 2048 x 8192); the small vectors beside them (norms) within 1%.
    const layerMatrices = 4 * (2 * 2048 * (2048 + 1024) + 3 * 2048 * 8192);
    const saved = (a.optimizerGiB - b.optimizerGiB) * 2 ** 30;
    expect(saved).toBeGreaterThanOrEqual(4 * layerMatrices);
    expect(saved).toBeLessThan(4 * layerMatrices * 1.01);
  });

  it('shard like the rest of the optimizer state (ZeRO 1 over dp), and take the Adam step from 34 to 26 bytes per owned parameter', () => {
    const plan = { ...base, dp: 4 };
    const fp32 = evaluate(scenarioWith(model, { optimizerMomentsDtype: 'fp32' }), plan);
    const bf16 = evaluate(scenarioWith(model, { optimizerMomentsDtype: 'bf16' }), plan);
    // Four times less state per GPU than on one GPU: sharded over the four replicas.
    const oneGpu = evaluate(scenarioWith(model, { optimizerMomentsDtype: 'bf16' }), base);
    const layerShare = (e: typeof bf16) => e.predicted.peakMemory.optimizerGiB;
    expect(layerShare(bf16)).toBeCloseTo(layerShare(oneGpu) / 4, 9);
    expect(bf16.predicted.peakMemory.optimizerGiB).toBeCloseTo((fp32.predicted.peakMemory.optimizerGiB * 8) / 12, 9);
    const [ta, tb] = [fp32.predicted.breakdown, bf16.predicted.breakdown];
    expect(tb.optimizerS / ta.optimizerS).toBeCloseTo(26 / 34, 12);
    expect(tb.computeS).toBe(ta.computeS);
    expect(tb.dpExposedS).toBe(ta.dpExposedS);
  });

  it('change nothing with ZeRO 0 (Megatron-LM\'s precision-aware optimizer is the distributed optimizer\'s)', () => {
    const plan = { ...base, zero: 0 as const };
    const fp32 = evaluate(scenarioWith(model, { optimizerMomentsDtype: 'fp32' }), plan);
    const bf16 = evaluate(scenarioWith(model, { optimizerMomentsDtype: 'bf16' }), plan);
    expect(bf16.predicted.peakMemory).toEqual(fp32.predicted.peakMemory);
    expect(bf16.predicted.iterationTimeS).toBe(fp32.predicted.iterationTimeS);
  });

  it('are fp32 unless the scenario says bf16; export as Megatron-LM\'s precision-aware optimizer from ZeRO 1, a note at ZeRO 0, a torchtitan warning', () => {
    const spec = readFixture('small/one-site') as Json;
    expect(parseScenario(spec, 'x').training.optimizerMomentsDtype).toBe('fp32');
    const bf16 = parseScenario({ ...spec, training: { ...spec.training, optimizerMomentsDtype: 'bf16' } }, 'x');
    const plan = { ...base, dp: bf16.sites[0]!.gpus };
    const exported = exportMegatron(bf16, layOutPlan(bf16, plan));
    expect(exported.keys).toEqual(expect.arrayContaining(['--use-precision-aware-optimizer', '--exp-avg-dtype', '--exp-avg-sq-dtype']));
    expect(exported.text).toMatch(/--exp-avg-dtype bf16/);
    expect(exported.text).toMatch(/--exp-avg-sq-dtype bf16/);
    expect(exportTorchtitan(bf16, layOutPlan(bf16, plan)).messages.some((m) => m.severity === 'warning' && /AdamW's moments/.test(m.message))).toBe(true);
    const zero0 = exportMegatron(bf16, layOutPlan(bf16, { ...plan, zero: 0 }));
    expect(zero0.keys).not.toContain('--use-precision-aware-optimizer');
    expect(zero0.messages.some((m) => m.severity === 'note' && /optimizerMomentsDtype/.test(m.message))).toBe(true);
    const fp32 = parseScenario(spec, 'x');
    expect(exportMegatron(fp32, layOutPlan(fp32, plan)).keys).not.toContain('--use-precision-aware-optimizer');
  });

  it('rejects another data type naming its JSON path', () => {
    const spec = readFixture('small/one-site') as Json;
    expect(() => parseScenario({ ...spec, training: { ...spec.training, optimizerMomentsDtype: 'fp8' } }, 'x')).toThrow(/training\.optimizerMomentsDtype/);
  });
});
