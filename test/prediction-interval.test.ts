/** Prediction intervals from calibration residuals (src/model/prediction-interval.ts). */
import * as fc from 'fast-check';
import * as path from 'path';
import { calibrate, type CalibrationRow } from '../src/calibration/calibration-table';
import { readJsonArrays } from '../src/io/files';
import { BUILT_IN_RESIDUALS } from '../src/model/calibration-residuals';
import {
  ATTENTION_HEAVY_SHARE, builtInIntervalModel, fixedAllowance, intervalJobOf, intervalModel, intervalRatios, MEMORY_FIXED_RELATIVE_ALLOWANCE,
  orderStatisticMinimum, studentTQuantile, timeErrorOf, timeInterval,
} from '../src/model/prediction-interval';
import { parseScenario } from '../src/model/scenario';
import { modelFromHfConfig } from '../src/model/hf-config';
import { attentionCoreShare, modelFlopsPerIteration } from '../src/model/transformer-flops';
import { readJsonFile } from '../src/io/files';
import { ROOT } from './helpers/fixtures';

/** Residuals as relative errors, from log residuals in (-0.7, 0.7). */
const logResiduals = (minLength: number, maxLength: number) =>
  fc.array(fc.double({ min: -0.7, max: 0.7, noNaN: true }), { minLength, maxLength });
const toErrors = (logs: readonly number[]): number[] => logs.map((r) => Math.expm1(r));
const levels = fc.constantFrom(0.5, 0.8, 0.9, 0.95);

describe('intervalRatios', () => {
  it('contains the point estimate for any residuals, level and prediction', () => {
    fc.assert(fc.property(logResiduals(2, 80), levels, fc.double({ min: 1e-3, max: 1e4, noNaN: true }), (logs, level, predictedS) => {
      const ratios = intervalRatios(toErrors(logs), level)!;
      const interval = timeInterval(predictedS, { attentionCoreShare: 0 }, { basis: 'test', time: ratios, memory: fixedAllowance(0.05) });
      expect(interval.lowS).toBeLessThanOrEqual(predictedS);
      expect(interval.highS).toBeGreaterThanOrEqual(predictedS);
      expect(interval.level).toBe(level);
    }));
  });

  it('widens weakly when the residuals widen (each moved away from zero), strictly when scaled and the interval is not degenerate', () => {
    fc.assert(fc.property(
      logResiduals(2, 80), levels, fc.double({ min: 1.01, max: 3, noNaN: true }), fc.array(fc.double({ min: 1, max: 3, noNaN: true }), { minLength: 80, maxLength: 80 }),
      (logs, level, scale, factors) => {
        const base = intervalRatios(toErrors(logs), level)!;
        // Each residual moved away from zero by its own factor: weakly wider.
        const spread = intervalRatios(toErrors(logs.map((r, i) => r * factors[i]!)), level)!;
        expect(spread.method).toBe(base.method);
        expect(spread.lowRatio).toBeLessThanOrEqual(base.lowRatio);
        expect(spread.highRatio).toBeGreaterThanOrEqual(base.highRatio);
        // All scaled by the same factor > 1: each side that is not at the point estimate moves out strictly.
        const scaled = intervalRatios(toErrors(logs.map((r) => r * scale)), level)!;
        if (base.lowRatio < 1 - 1e-12) expect(scaled.lowRatio).toBeLessThan(base.lowRatio);
        else expect(scaled.lowRatio).toBeLessThanOrEqual(base.lowRatio);
        if (base.highRatio > 1 + 1e-12) expect(scaled.highRatio).toBeGreaterThan(base.highRatio);
        else expect(scaled.highRatio).toBeGreaterThanOrEqual(base.highRatio);
      },
    ));
  });

  it('uses order statistics from 2 / (1 - level) - 1 residuals and the Student t rule below', () => {
    expect(orderStatisticMinimum(0.9)).toBe(19);
    expect(orderStatisticMinimum(0.8)).toBe(9);
    const logs = Array.from({ length: 19 }, (_, i) => (i - 9) / 100);
    expect(intervalRatios(toErrors(logs), 0.9)!.method).toBe('order-statistics');
    expect(intervalRatios(toErrors(logs.slice(1)), 0.9)!.method).toBe('student-t');
    // 19 residuals at 90%: the smallest and the largest (coverage 18/20).
    const r = intervalRatios(toErrors(logs), 0.9)!;
    expect(r.highRatio).toBeCloseTo(Math.exp(0.09), 12);
    expect(r.lowRatio).toBeCloseTo(Math.exp(-0.09), 12);
    expect(intervalRatios([0.1], 0.9)).toBeUndefined();
  });

  it('widens with fewer residuals of the same spread (the small-sample inflation)', () => {
    const at = (n: number) => intervalRatios(toErrors(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 0.05 : -0.05))), 0.9)!;
    for (let n = 3; n < 18; n++) expect(at(n).highRatio).toBeGreaterThan(at(n + 1).highRatio);
  });

  it('applies the spread floor only below it', () => {
    const tiny = toErrors([0.001, -0.001, 0.002]);
    const floored = intervalRatios(tiny, 0.9, 0.02)!;
    const half = studentTQuantile(0.95, 2) * Math.sqrt(1 + 1 / 3) * 0.02;
    expect(floored.highRatio).toBeCloseTo(Math.exp(half), 12);
    const wide = toErrors([0.1, -0.1, 0.05]);
    expect(intervalRatios(wide, 0.9, 0.02)).toEqual(intervalRatios(wide, 0.9, 0));
  });

  it('covers about the level of new draws from the residuals\' distribution', () => {
    // Deterministic normal draws (Box-Muller on a linear congruential generator).
    let seed = 12345;
    const uniform = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed + 0.5) / 2147483648; };
    const normal = () => 0.08 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    for (const n of [5, 60]) {
      let inside = 0;
      const trials = 3000;
      for (let t = 0; t < trials; t++) {
        const ratios = intervalRatios(toErrors(Array.from({ length: n }, normal)), 0.9)!;
        const measuredRatio = Math.exp(-normal());
        if (measuredRatio >= ratios.lowRatio && measuredRatio <= ratios.highRatio) inside++;
      }
      expect(inside / trials).toBeGreaterThan(0.87);
      expect(inside / trials).toBeLessThan(0.96);
    }
  });
});

describe('studentTQuantile', () => {
  it('matches tabulated values', () => {
    expect(studentTQuantile(0.95, 1)).toBeCloseTo(6.313752, 5);
    expect(studentTQuantile(0.95, 2)).toBeCloseTo(2.919986, 5);
    expect(studentTQuantile(0.95, 4)).toBeCloseTo(2.131847, 5);
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.228139, 5);
    expect(studentTQuantile(0.95, 1000)).toBeCloseTo(1.646379, 4);
    expect(studentTQuantile(0.05, 4)).toBeCloseTo(-2.131847, 5);
  });
});

describe('built-in residuals', () => {
  const rows = readJsonArrays(path.join(ROOT, 'fixtures', 'calibration')) as CalibrationRow[];

  it('are the calibration rows\' in-sample errors under the committed constants (regenerate with npm run calibration when they move)', () => {
    expect(BUILT_IN_RESIDUALS.rows.map((r) => r.id).sort()).toEqual(rows.map((r) => r.id).sort());
    for (const row of rows) {
      const stored = BUILT_IN_RESIDUALS.rows.find((r) => r.id === row.id)!;
      const result = calibrate(row);
      expect(stored.inSampleTimeError).toBeCloseTo(timeErrorOf(row.metric === 'iterationTimeS', result.relativeError), 5);
    }
  });

  it('carry each row\'s attention-core share, as attentionCoreShare computes it from the row\'s job', () => {
    for (const row of rows) {
      const scenario = parseScenario(row.scenario);
      const stored = BUILT_IN_RESIDUALS.rows.find((r) => r.id === row.id)!;
      expect(stored.attentionCoreShare).toBeCloseTo(attentionCoreShare(scenario.model, scenario.training.seqLen), 5);
    }
  });

  it('give jobs under the attention-heavy share the 90% interval by the order statistics of the other rows\' leave-one-source-out errors', () => {
    const light = BUILT_IN_RESIDUALS.rows.filter((r) => r.attentionCoreShare < ATTENTION_HEAVY_SHARE);
    // The long-context table's rows of 16K and more and the Qwen3-30B-A3B pair are the heavy ones.
    expect(light.length).toBe(51);
    const logs = light.map((r) => Math.log1p(r.losoTimeError)).sort((a, b) => a - b);
    const n = logs.length;
    const j = Math.floor((n + 1) * 0.05 + 1e-9);
    expect(j).toBe(2);
    expect((n + 1 - 2 * j) / (n + 1)).toBeGreaterThanOrEqual(0.9);
    const model = builtInIntervalModel();
    expect(model.time.method).toBe('order-statistics');
    expect(model.time.lowRatio).toBeCloseTo(Math.exp(-Math.max(0, logs[n - j]!)), 12);
    expect(model.time.highRatio).toBeCloseTo(Math.exp(-Math.min(0, logs[j - 1]!)), 12);
    expect(model.memory).toEqual(fixedAllowance(MEMORY_FIXED_RELATIVE_ALLOWANCE));
    const interval = timeInterval(10, { attentionCoreShare: ATTENTION_HEAVY_SHARE - 1e-9 });
    expect(interval.lowS).toBeCloseTo(10 * model.time.lowRatio, 12);
    expect(interval.highS).toBeCloseTo(10 * model.time.highRatio, 12);
    expect(interval.basis).toContain('51 published rows whose attention core is under 15%');
  });

  it('give attention-heavy jobs the Student-t interval of the heavy rows alone (fewer than 19)', () => {
    const heavy = BUILT_IN_RESIDUALS.rows.filter((r) => r.attentionCoreShare >= ATTENTION_HEAVY_SHARE);
    expect(heavy.length).toBe(9);
    const logs = heavy.map((r) => Math.log1p(r.losoTimeError));
    const n = logs.length;
    const s = Math.sqrt(logs.reduce((sum, r) => sum + r * r, 0) / (n - 1));
    const half = studentTQuantile(0.95, n - 1) * Math.sqrt(1 + 1 / n) * s;
    const interval = timeInterval(10, { attentionCoreShare: ATTENTION_HEAVY_SHARE });
    expect(interval.lowS).toBeCloseTo(10 * Math.exp(-half), 10);
    expect(interval.highS).toBeCloseTo(10 * Math.exp(half), 10);
    expect(interval.basis).toContain('9 published rows whose attention core is at least 15%');
    // Wider than the light class's on both sides: those rows are where the held-out fits miss most.
    const model = builtInIntervalModel();
    expect(interval.lowS).toBeLessThan(10 * model.time.lowRatio);
    expect(interval.highS).toBeGreaterThan(10 * model.time.highRatio);
  });

  it('class a job by its model and sequence: Llama 3 8B at 8K light, at 32K heavy', () => {
    const scenario = (seqLen: number) => parseScenario({
      version: 1, name: 'job',
      model: { name: 'llama3-8b', layers: 32, hidden: 4096, ffnHidden: 14336, heads: 32, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
      training: { seqLen, globalBatchSeqs: 64 },
      cluster: { sites: [{ name: 'a', gpuType: 'H100-SXM', gpus: 8, gpusPerNode: 8 }], links: [] },
    });
    // By hand: the causal core is 2 x 2 x s/2 x h FLOPs per token and layer forward (scores and context, 32 heads x 128).
    const share8k = attentionCoreShare(scenario(8192).model, 8192);
    const layerCore = 2 * 4096 * 8192;
    const layerGemms = 2 * (4096 * 4096 * 2 + 4096 * 1024 * 2) + 2 * 3 * 4096 * 14336;
    const logits = 2 * 4096 * 128256;
    expect(share8k).toBeCloseTo((32 * layerCore) / (32 * (layerCore + layerGemms) + logits), 9);
    expect(intervalJobOf(scenario(8192)).attentionCoreShare).toBeLessThan(ATTENTION_HEAVY_SHARE);
    expect(intervalJobOf(scenario(32768)).attentionCoreShare).toBeGreaterThanOrEqual(ATTENTION_HEAVY_SHARE);
  });

  it('class by a share that follows each family\'s attention: MLA widths, sliding windows, few active parameters', () => {
    const modelOf = (file: string, overrides: Record<string, unknown> = {}) => parseScenario({
      version: 1, name: 'job', model: { ...modelFromHfConfig(readJsonFile(path.join(ROOT, 'fixtures', 'hf-configs', file))), ...overrides },
      training: { seqLen: 4096, globalBatchSeqs: 64 },
      cluster: { sites: [{ name: 'a', gpuType: 'H100-SXM', gpus: 8, gpusPerNode: 8 }], links: [] },
    }).model;
    // DeepSeek-V3 (MLA): the causal core per token and layer is 2 x 128 heads x (192 query-key + 128 value) x s/2,
    // from the published head dimensions, not the model's width helper.
    const deepseek = modelOf('DeepSeek-V3.json');
    for (const seqLen of [4096, 8192]) {
      const core = 61 * 2 * 128 * (128 + 64 + 128) * (seqLen / 2);
      const total = modelFlopsPerIteration(deepseek, seqLen, 1, 'causal') / (3 * seqLen);
      expect(attentionCoreShare(deepseek, seqLen)).toBeCloseTo(core / total, 9);
    }
    // MLA at 8K is heavy with few active parameters per token; at 4K (the B200 calibration row) not.
    expect(attentionCoreShare(deepseek, 4096)).toBeLessThan(ATTENTION_HEAVY_SHARE);
    expect(attentionCoreShare(deepseek, 8192)).toBeGreaterThan(ATTENTION_HEAVY_SHARE);
    // Mistral-7B's 4,096-token window on every layer: the core stops growing past the window, so the
    // share levels off (w - w^2/2s keys per query: 1.6% more at 128K than at 64K), where the same model
    // without it keeps rising.
    const mistral = modelOf('Mistral-7B-v0.1.json');
    expect(mistral.slidingWindow?.tokens).toBe(4096);
    const { slidingWindow: _window, ...fullAttention } = mistral;
    const windowedRise = attentionCoreShare(mistral, 131072) / attentionCoreShare(mistral, 65536);
    expect(windowedRise).toBeGreaterThan(1);
    expect(windowedRise).toBeLessThan(1.02);
    expect(attentionCoreShare(fullAttention, 131072)).toBeGreaterThan(1.2 * attentionCoreShare(fullAttention, 65536));
    expect(attentionCoreShare(mistral, 131072)).toBeLessThan(ATTENTION_HEAVY_SHARE);
    expect(attentionCoreShare(fullAttention, 131072)).toBeGreaterThan(ATTENTION_HEAVY_SHARE);
    // Qwen3-30B-A3B: 3 billion active parameters make its attention a fifth of the FLOPs at 4K.
    const qwen3 = modelOf('Qwen3-30B-A3B.json');
    expect(attentionCoreShare(qwen3, 4096)).toBeGreaterThan(ATTENTION_HEAVY_SHARE);
  });

  it('fall back to the fixed memory allowance with fewer than 2 memory residuals, and use them from 2', () => {
    expect(intervalModel({ basis: 't', timeErrors: [0.1, -0.1], memoryErrors: [0.02] })!.memory.method).toBe('fixed-allowance');
    expect(intervalModel({ basis: 't', timeErrors: [0.1, -0.1], memoryErrors: [0.02, -0.03] })!.memory.method).toBe('student-t');
  });
});
