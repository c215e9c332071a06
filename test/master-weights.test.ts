/**
 * What the optimizer keeps of each weight beside the bf16 weight (training.masterWeights;
 * docs/cost-model.md §6): a full fp32 copy (4 bytes), the 16 low bits of the fp32 value as
 * Apex's DistributedFusedAdam stores them for NeMo (2) or nothing when the bf16 weight is the
 * master (0). Sharded with the rest of the optimizer state from ZeRO 1; fp32 at ZeRO 0.
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

describe('master weights', () => {
  it('take the optimizer state from 12 bytes per parameter to 10 as remainders and 8 with none; with bf16 moments and none, 4', () => {
    const state = (training: object, plan: PlanSpec = base) => evaluate(scenarioWith(model, training), plan).predicted.peakMemory;
    const fp32 = state({});
    expect(state({ masterWeights: 'fp32' })).toEqual(fp32);
    const remainders = state({ masterWeights: 'remainders' });
    const none = state({ masterWeights: 'none' });
    const noneBf16Moments = state({ masterWeights: 'none', optimizerMomentsDtype: 'bf16' });
    expect(remainders.optimizerGiB).toBeCloseTo((fp32.optimizerGiB * 10) / 12, 9);
    expect(none.optimizerGiB).toBeCloseTo((fp32.optimizerGiB * 8) / 12, 9);
    expect(noneBf16Moments.optimizerGiB).toBeCloseTo((fp32.optimizerGiB * 4) / 12, 9);
    // The embedding and output matrices (2 x 32,000 x 2,048 parameters, one GPU) save the same 2 and 4 bytes each.
    const vocabParams = 2 * 32000 * 2048;
    expect((fp32.embeddingOutputGiB - remainders.embeddingOutputGiB) * 2 ** 30).toBeCloseTo(2 * vocabParams, 0);
    expect((fp32.embeddingOutputGiB - none.embeddingOutputGiB) * 2 ** 30).toBeCloseTo(4 * vocabParams, 0);
    for (const other of [remainders, none]) {
      expect(other.weightsGiB).toBe(fp32.weightsGiB);
      expect(other.gradientsGiB).toBe(fp32.gradientsGiB);
      expect(other.activationsGiB).toBe(fp32.activationsGiB);
    }
  });

  it('shard over data parallelism from ZeRO 1, move twice the saved bytes less in the Adam step but read the bf16 weight, and change nothing at ZeRO 0', () => {
    const plan = { ...base, dp: 4 };
    const fp32 = evaluate(scenarioWith(model, {}), plan);
    const none = evaluate(scenarioWith(model, { masterWeights: 'none' }), plan);
    const oneGpu = evaluate(scenarioWith(model, { masterWeights: 'none' }), base);
    expect(none.predicted.peakMemory.optimizerGiB).toBeCloseTo(oneGpu.predicted.peakMemory.optimizerGiB / 4, 9);
    // The Adam step: 34 bytes per owned parameter with fp32 master weights (master, m, v read and
    // written 24, bf16 weight written 2, fp32 gradient read and zeroed 8); without a master 34 - 2 x 4
    // and the bf16 weight read, 28; with remainders 34 - 2 x 2 + 2 = 32.
    expect(none.predicted.breakdown.optimizerS / fp32.predicted.breakdown.optimizerS).toBeCloseTo(28 / 34, 12);
    const remainders = evaluate(scenarioWith(model, { masterWeights: 'remainders' }), plan);
    expect(remainders.predicted.breakdown.optimizerS / fp32.predicted.breakdown.optimizerS).toBeCloseTo(32 / 34, 12);
    expect(none.predicted.breakdown.computeS).toBe(fp32.predicted.breakdown.computeS);
    const zero0 = { ...base, zero: 0 as const };
    const a = evaluate(scenarioWith(model, {}), zero0);
    const b = evaluate(scenarioWith(model, { masterWeights: 'remainders' }), zero0);
    expect(b.predicted.peakMemory).toEqual(a.predicted.peakMemory);
    expect(b.predicted.iterationTimeS).toBe(a.predicted.iterationTimeS);
  });

  it('are fp32 unless the scenario says otherwise; Megatron-LM and torchtitan exports warn that they keep an fp32 copy', () => {
    const spec = readFixture('small/one-site') as Json;
    expect(parseScenario(spec, 'x').training.masterWeights).toBe('fp32');
    const none = parseScenario({ ...spec, training: { ...spec.training, masterWeights: 'none' } }, 'x');
    const plan = { ...base, dp: none.sites[0]!.gpus };
    const warned = (messages: readonly { severity: string; message: string }[]) =>
      messages.some((m) => m.severity === 'warning' && /training\.masterWeights none/.test(m.message) && /4 bytes per parameter more/.test(m.message));
    expect(warned(exportMegatron(none, layOutPlan(none, plan)).messages)).toBe(true);
    expect(warned(exportTorchtitan(none, layOutPlan(none, plan)).messages)).toBe(true);
    const fp32 = parseScenario(spec, 'x');
    expect(exportMegatron(fp32, layOutPlan(fp32, plan)).messages.some((m) => /masterWeights/.test(m.message))).toBe(false);
    // ZeRO 0 keeps the fp32 copy the plan was costed with: nothing to warn about.
    expect(exportMegatron(none, layOutPlan(none, { ...plan, zero: 0 })).messages.some((m) => /masterWeights/.test(m.message))).toBe(false);
  });

  it('rejects another value naming its JSON path', () => {
    const spec = readFixture('small/one-site') as Json;
    expect(() => parseScenario({ ...spec, training: { ...spec.training, masterWeights: 'bf16' } }, 'x')).toThrow(/training\.masterWeights/);
  });

  it('are refused without a full fp32 copy when fp8 parameter gather drops the bf16 weights, naming training.masterWeights', () => {
    const spec = readFixture('small/one-site') as Json;
    const fp8 = { ...spec.training, precision: 'fp8', fp8ParamGather: true };
    for (const masterWeights of ['none', 'remainders']) {
      expect(() => parseScenario({ ...spec, training: { ...fp8, masterWeights } }, 'x')).toThrow(/training\.masterWeights: .*fp8ParamGather/);
    }
    expect(parseScenario({ ...spec, training: { ...fp8, masterWeights: 'fp32' } }, 'x').training.fp8ParamGather).toBe(true);
  });
});
