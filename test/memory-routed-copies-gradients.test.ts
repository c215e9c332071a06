/**
 * Two memory terms written out by hand (docs/cost-model.md §6): the grouped-GEMM inputs a MoE
 * layer keeps for each routed copy of a token (scaled by the expert tensor-parallel degree, 1 byte
 * in fp8, dropped by recomputing `moe`), and the gradient buffer's data type
 * (training.gradientDtype: fp32 main gradients or bf16), with the optimizer step's traffic that follows it.
 */
import { evaluate } from '../src/model/evaluate';
import { stageMemoryBasis } from '../src/model/memory';
import { buildStages, layOutPlan } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import { scenarioWith } from './helpers/scenario-with';
import { readFixture } from './helpers/fixtures';

type Json = any; // a scenario document being changed

const base: PlanSpec = { tp: 1, cp: 1, ep: 1, pp: 1, dp: 1, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 };


const layerBytes = (scenario: Scenario, plan: Partial<PlanSpec>): number => {
  const full = { ...base, ...plan };
  const [stage] = buildStages(scenario, full, [scenario.model.layers]);
  return stageMemoryBasis(scenario, full, stage!).layerBytesPerToken;
};

describe('routed copies: each of a token\'s topK dispatched copies is the grouped GEMM\'s kept input', () => {
  const h = 1024;
  // Two MoE layers of 8 experts, top-4, no shared expert; the same model without the experts' inputs is the dense-FFN comparison below.
  const moe = { layers: 2, hidden: h, ffnHidden: 2048, heads: 8, kvHeads: 8, vocab: 32000, mlp: 'swiglu', moe: { experts: 8, topK: 4, expertFfnHidden: 512, sharedExperts: 0, denseLayers: 0 } };

  it('adds topK x 2h bytes per token and MoE layer in bf16, topK x h in fp8', () => {
    const bf16 = scenarioWith(moe, { precision: 'bf16' });
    const fp8 = scenarioWith(moe, { precision: 'fp8' });
    // Dropping the whole MoE layer removes the 4 FFNs' internals (6f each) and the 4 copies' inputs.
    const moeDropped = (s: Scenario) => layerBytes(s, {}) - layerBytes(s, { recompute: 'selective', recomputeModules: ['moe'] });
    expect(moeDropped(bf16)).toBe(2 * (4 * 6 * 512 + 4 * 2 * h));
    // fp8: the FC2 inputs at 1 byte (5f per FFN) and the copies at 1 byte, less the bf16 checkpoint input's extra h.
    expect(moeDropped(fp8)).toBe(2 * (4 * 5 * 512 + 4 * h - h));
  });

  it('is held once per expert tensor-parallel rank: expert tp 2 doubles it against expert tp 1 at tp 2 (MoE Parallel Folding)', () => {
    const scenario = scenarioWith(moe, { precision: 'bf16' });
    const folded = layerBytes(scenario, { tp: 2, expertTp: 1 });
    const unfolded = layerBytes(scenario, { tp: 2, expertTp: 2 });
    expect(unfolded - folded).toBe(2 * 4 * 2 * h);
  });

  it('a dense model keeps no routed copies', () => {
    const dense = scenarioWith({ ...moe, moe: undefined }, { precision: 'bf16' });
    expect(layerBytes(dense, { recompute: 'selective', recomputeModules: ['mlp'] })).toBe(layerBytes(dense, {}) - 2 * 6 * 2048);
  });
});

describe('the gradient buffer: fp32 main gradients (4 bytes per parameter) or bf16 (2)', () => {
  const model = { layers: 4, hidden: 2048, ffnHidden: 8192, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' };

  it('halves the gradients, layers and embedding alike, and changes nothing else', () => {
    const fp32 = evaluate(scenarioWith(model, { gradientDtype: 'fp32' }), base);
    const bf16 = evaluate(scenarioWith(model, { gradientDtype: 'bf16' }), base);
    const [a, b] = [fp32.predicted.peakMemory, bf16.predicted.peakMemory];
    expect(b.gradientsGiB).toBeCloseTo(a.gradientsGiB / 2, 9);
    expect(b.weightsGiB).toBe(a.weightsGiB);
    expect(b.optimizerGiB).toBe(a.optimizerGiB);
    expect(b.activationsGiB).toBe(a.activationsGiB);
    // The embedding and output matrices' state: bf16 weights 2 + gradients 4 -> 2 + optimizer 12 bytes per parameter.
    const vocabParams = 2 * 32000 * 2048;
    expect((a.embeddingOutputGiB - b.embeddingOutputGiB) * 2 ** 30).toBeCloseTo(2 * vocabParams, 0);
    // Time: only the optimizer step moves, 30 bytes per owned parameter against 34 (the gradient read and its buffer zeroed at 2 bytes, not 4).
    const [ta, tb] = [fp32.predicted.breakdown, bf16.predicted.breakdown];
    expect(tb.optimizerS / ta.optimizerS).toBeCloseTo(30 / 34, 12);
    expect(tb.computeS).toBe(ta.computeS);
    expect(tb.dpExposedS).toBe(ta.dpExposedS);
    expect(bf16.predicted.iterationTimeS - fp32.predicted.iterationTimeS).toBeCloseTo(tb.optimizerS - ta.optimizerS, 12);
  });

  it('is fp32 unless the scenario says bf16, and exports as --grad-reduce-in-bf16 (torchtitan: a warning, it reduces in float32 only)', () => {
    const spec = readFixture('small/one-site') as Json;
    expect(parseScenario(spec, 'x').training.gradientDtype).toBe('fp32');
    const bf16 = parseScenario({ ...spec, training: { ...spec.training, gradientDtype: 'bf16' } }, 'x');
    const plan = { ...base, dp: bf16.sites[0]!.gpus };
    const layout = layOutPlan(bf16, plan);
    expect(exportMegatron(bf16, layout).keys).toContain('--grad-reduce-in-bf16');
    expect(exportTorchtitan(bf16, layout).messages.some((m) => m.severity === 'warning' && /mixed_precision_reduce/.test(m.message))).toBe(true);
    const fp32 = parseScenario(spec, 'x');
    expect(exportMegatron(fp32, layOutPlan(fp32, plan)).keys).not.toContain('--grad-reduce-in-bf16');
  });

  it('rejects another data type naming its JSON path', () => {
    const spec = readFixture('small/one-site') as Json;
    expect(() => parseScenario({ ...spec, training: { ...spec.training, gradientDtype: 'fp16' } }, 'x')).toThrow(/training\.gradientDtype/);
  });
});
