/**
 * Selective recomputation by module (plan.recomputeModules, Megatron-LM --recompute-modules):
 * the activations each module set keeps against Korthikanti et al. 2022 written out by hand, the
 * time and hardware FLOPs a recomputed module adds, the plan checks, and the DeepSeek-V3 B200
 * recipe of the calibration (docs/cost-model.md §2, §6).
 */
import * as fs from 'fs';
import * as path from 'path';
import { evaluate } from '../src/model/evaluate';
import { stageMemoryBasis } from '../src/model/memory';
import { buildStages, layOutPlan } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { matmulEfficiency, stageFlops, stageTime } from '../src/model/stage-cost';
import { scenarioWith } from './helpers/scenario-with';
import { readFixture, ROOT } from './helpers/fixtures';

type Json = any; // a scenario document being changed

const base: PlanSpec = { tp: 1, cp: 1, ep: 1, pp: 1, dp: 1, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 };


/** Stored layer activation bytes per token of the whole (single) stage, before dividing by tp. */
function layerBytes(scenario: Scenario, plan: Partial<PlanSpec>): number {
  const full = { ...base, ...plan };
  const [stage] = buildStages(scenario, full, [scenario.model.layers]);
  return stageMemoryBasis(scenario, full, stage!).layerBytesPerToken;
}

describe('activations kept by module: Korthikanti et al. 2022 on a dense GPT layer', () => {
  // GPT-style: GELU FFN 4h, multi-head attention, dropout, no fused attention kernel.
  const h = 1024;
  const a = 16;
  const s = 2048;
  const layers = 4;
  const scenario = scenarioWith({ layers, hidden: h, ffnHidden: 4 * h, heads: a, kvHeads: a, vocab: 32000, mlp: 'gelu', dropout: true }, { seqLen: s, flashAttention: false });

  it('no recomputation: 34sbh + 5as^2b per layer (eq. 2); selective with the default list (core_attn): 34sbh (§4.2)', () => {
    expect(layerBytes(scenario, {})).toBe(layers * (34 * h + 5 * a * s));
    expect(layerBytes(scenario, { recompute: 'selective' })).toBe(layers * 34 * h);
    expect(layerBytes(scenario, { recompute: 'selective', recomputeModules: ['core_attn'] })).toBe(layers * 34 * h);
  });

  it('mlp keeps its input (2sbh) and the dropout mask (sbh), and drops the GeLU input and output (8sbh each): 18sbh; the scores stay unless core_attn is listed', () => {
    expect(layerBytes(scenario, { recompute: 'selective', recomputeModules: ['mlp'] })).toBe(layers * (18 * h + 5 * a * s));
    expect(layerBytes(scenario, { recompute: 'selective', recomputeModules: ['core_attn', 'mlp'] })).toBe(layers * 18 * h);
  });

  it('layernorm drops nothing on a dense GPT layer: both of its norms are fused into the next linear layer (Transformer Engine LayerNormLinear)', () => {
    expect(layerBytes(scenario, { recompute: 'selective', recomputeModules: ['layernorm'] })).toBe(layers * (34 * h + 5 * a * s));
  });

  it('with the MLP recomputed, fp8 keeps what bf16 keeps: the MLP input is the checkpoint, in bf16', () => {
    // SwiGLU with GQA and a fused kernel: fp8 stores the QKV and FC1 inputs at 1 byte and adds an fp8 copy of the output projection's input.
    const model = { layers: 2, hidden: 2048, ffnHidden: 8192, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' };
    const bf16 = scenarioWith(model, { precision: 'bf16', flashAttention: true });
    const fp8 = scenarioWith(model, { precision: 'fp8', flashAttention: true });
    const mlp: Partial<PlanSpec> = { recompute: 'selective', recomputeModules: ['mlp'] };
    expect(layerBytes(fp8, mlp)).toBe(layerBytes(bf16, mlp));
    // bf16: the SwiGLU internals 6f per token per layer; fp8: 5f (FC2's input at 1 byte) less the h its bf16 checkpoint input adds.
    expect(layerBytes(bf16, {}) - layerBytes(bf16, mlp)).toBe(2 * 6 * 8192);
    expect(layerBytes(fp8, {}) - layerBytes(fp8, mlp)).toBe(2 * (5 * 8192 - 2048));
  });
});

describe('activations kept by module: multi-latent attention and MoE', () => {
  // 3 layers (1 dense, 2 MoE), SwiGLU, MLA with a query latent, one shared expert, fused attention, bf16.
  const h = 1024;
  const scenario = scenarioWith({
    layers: 3, hidden: h, ffnHidden: 2048, heads: 8, kvHeads: 8, vocab: 32000, mlp: 'swiglu',
    attention: { kind: 'mla', qLoraRank: 256, kvLoraRank: 128, qkNopeHeadDim: 64, qkRopeHeadDim: 32, vHeadDim: 64 },
    moe: { experts: 8, topK: 2, expertFfnHidden: 512, sharedExperts: 1, denseLayers: 1 },
  }, { flashAttention: true });
  const none = layerBytes(scenario, {});
  const dropped = (modules: PlanSpec['recomputeModules']) => none - layerBytes(scenario, { recompute: 'selective', recomputeModules: modules });
  // Per token and layer: expanded Q, K, V 2 x (8 x 96 + 8 x 96 + 8 x 64); a norm's output 2h; a SwiGLU FFN's internals 6f.
  const upProj = 2 * (768 + 768 + 512);
  const norm = 2 * h;

  it('mla_up_proj drops the expanded queries, keys and values on every layer; mlp the dense layer\'s SwiGLU internals (the recipe\'s pair)', () => {
    expect(dropped(['mla_up_proj'])).toBe(3 * upProj);
    expect(dropped(['mla_up_proj', 'mlp'])).toBe(3 * upProj + 6 * 2048);
    expect(dropped(['core_attn'])).toBe(0);
  });

  it('layernorm drops the MLA input norm\'s output on every layer and the pre-MLP norm\'s on MoE layers; moe_act the routed experts\' activation outputs; shared_experts the shared expert\'s internals', () => {
    expect(dropped(['layernorm'])).toBe(3 * norm + 2 * norm);
    expect(dropped(['moe_act'])).toBe(2 * (2 * 2 * 512));
    expect(dropped(['shared_experts'])).toBe(2 * 6 * 512);
    expect(dropped(['layernorm', 'moe_act', 'shared_experts'])).toBe(5 * norm + 2 * (2 * 2 * 512 + 6 * 512));
  });

  it('moe drops every active FFN\'s internals (top-2 and the shared expert) and the routed copies\' grouped-GEMM inputs, and subsumes moe_act and shared_experts', () => {
    // Per MoE layer: 3 active FFNs x 6f, and the 2 routed copies' inputs 2 x 2h (bf16, expert tp 1).
    expect(dropped(['moe'])).toBe(2 * (3 * 6 * 512 + 2 * 2 * h));
    expect(dropped(['moe', 'moe_act', 'shared_experts'])).toBe(dropped(['moe']));
  });
});

describe('recompute time: each recomputed module reruns its forward in the backward', () => {
  const model = { layers: 4, hidden: 2048, ffnHidden: 8192, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' };
  const scenario = scenarioWith(model, { flashAttention: true, seqLen: 2048 });
  const site = scenario.sites[0]!;
  const [stage] = buildStages(scenario, base, [4]);

  it('mlp adds the MLP GEMMs at the GEMM efficiency and the SwiGLU kernel at HBM speed; hardware FLOPs add the GEMMs, model FLOPs do not change', () => {
    const attentionOnly = { ...base, recompute: 'selective' as const };
    const mlp = { ...attentionOnly, recomputeModules: ['mlp' as const] };
    const tokens = 2048;
    const gemmFlops = 2 * 3 * 2048 * 8192 * tokens * 4;
    const expectedS = gemmFlops / (site.gpu.peakBf16Tflops * 1e12 * matmulEfficiency(tokens, 2048))
      + (3 * 2 * 8192) * tokens * 4 / (site.gpu.hbmGBps * 1e9);
    // With a fused attention kernel the attention core alone recomputes nothing (docs/cost-model.md §2).
    expect(stageTime(scenario, attentionOnly, stage!, site, 0).recomputeS).toBe(0);
    expect(stageTime(scenario, mlp, stage!, site, 0).recomputeS).toBeCloseTo(expectedS, 12);
    expect(stageFlops(scenario, mlp, stage!).hardwareFlops - stageFlops(scenario, attentionOnly, stage!).hardwareFlops).toBeCloseTo(gemmFlops, -3);
    expect(stageFlops(scenario, mlp, stage!).gemmFlops).toBe(stageFlops(scenario, attentionOnly, stage!).gemmFlops);
  });

  it('a module list is never slower than full recomputation and never faster than the attention core alone', () => {
    const times = (['core_attn', 'mlp', 'layernorm'] as const).map((m) => stageTime(scenario, { ...base, recompute: 'selective', recomputeModules: [m] }, stage!, site, 0).totalS);
    const full = stageTime(scenario, { ...base, recompute: 'full' }, stage!, site, 0).totalS;
    for (const t of times) expect(t).toBeLessThanOrEqual(full);
    expect(times[1]).toBeGreaterThan(times[0]!);
  });
});

describe('recompute time: a recomputed MoE layer', () => {
  it('reruns its dispatch and combine: 6 all-to-alls per MoE layer instead of 4 (not overlapped), as under full recomputation', () => {
    const scenario = parseScenario(readFixture('deepseek-v3-moe-two-sites'), 'moe');
    const plan: PlanSpec = { ...base, ep: 8, dp: 8, pp: 16, recompute: 'selective' };
    const stage = buildStages(scenario, plan, [3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2])[5]!;
    const site = scenario.sites[0]!;
    const attentionOnly = stageTime(scenario, plan, stage, site, 0);
    const moe = stageTime(scenario, { ...plan, recomputeModules: ['moe'] }, stage, site, 0);
    expect(attentionOnly.epExposedS).toBeGreaterThan(0);
    expect(moe.epExposedS / attentionOnly.epExposedS).toBeCloseTo(6 / 4, 12);
    expect(moe.epExposedS).toBeCloseTo(stageTime(scenario, { ...plan, recompute: 'full' }, stage, site, 0).epExposedS, 12);
    expect(moe.recomputeS).toBeGreaterThan(0);
  });
});

describe('plan checks', () => {
  const dense = scenarioWith({ layers: 4, hidden: 2048, ffnHidden: 8192, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' }, {});
  const fails = (plan: Json) => () => layOutPlan(dense, { ...base, ...plan });

  it('recomputeModules only with selective recomputation, each module once, at least one', () => {
    expect(fails({ recompute: 'full', recomputeModules: ['mlp'] })).toThrow(/^plan\.recomputeModules: applies only with recompute 'selective' \(Megatron-LM --recompute-granularity selective\), not 'full'$/m);
    expect(fails({ recompute: 'selective', recomputeModules: ['mlp', 'mlp'] })).toThrow(/^plan\.recomputeModules\[1\]: 'mlp' is listed twice$/m);
    expect(fails({ recompute: 'selective', recomputeModules: [] })).toThrow(/^plan\.recomputeModules: .*recompute 'none'/m);
    expect(fails({ recompute: 'selective', recomputeModules: ['attention'] })).toThrow(/^plan\.recomputeModules\[0\]: /m);
  });

  it('a module the model does not have is an error naming its JSON path', () => {
    expect(fails({ recompute: 'selective', recomputeModules: ['core_attn', 'mla_up_proj'] })).toThrow(/^plan\.recomputeModules\[1\]: 'mla_up_proj' needs multi-latent attention \(model\.attention\), which the model does not have$/m);
    expect(fails({ recompute: 'selective', recomputeModules: ['moe_act'] })).toThrow(/^plan\.recomputeModules\[0\]: 'moe_act' needs MoE layers/m);
    expect(fails({ recompute: 'selective', recomputeModules: ['shared_experts'] })).toThrow(/'shared_experts' needs shared experts/);
    expect(layOutPlan(dense, { ...base, recompute: 'selective', recomputeModules: ['core_attn', 'mlp', 'layernorm'] }).plan.recomputeModules).toEqual(['core_attn', 'mlp', 'layernorm']);
  });
});

describe('the DeepSeek-V3 B200 Megatron-Bridge recipe (calibration.md section E)', () => {
  const rows = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures', 'calibration', 'megatron-bridge-moe.json'), 'utf8')) as Json[];
  const row = rows.find((r) => r.id === 'fp8-bridge-26.04.01-deepseek-v3-b200');
  const scenario = parseScenario(row.scenario, row.id);

  it('fits with its selective recomputation of mla_up_proj and mlp (149.5 GiB per GPU of 179, its gradients in bf16), not without (193.6)', () => {
    expect(row.plan.recomputeModules).toEqual(['mla_up_proj', 'mlp']);
    const recipe = evaluate(scenario, row.plan);
    expect(recipe.fits).toBe(true);
    expect(recipe.predicted.memoryGiBPerGpu).toBeCloseTo(149.5, 1);
    const without = evaluate(scenario, { ...row.plan, recompute: 'none', recomputeModules: undefined });
    expect(without.fits).toBe(false);
    expect(without.predicted.memoryGiBPerGpu).toBeCloseTo(193.6, 1);
    // The recomputation costs the up-projections' and the three dense MLPs' forward once more: under 1% of the iteration.
    expect(recipe.predicted.iterationTimeS / without.predicted.iterationTimeS).toBeGreaterThan(1);
    expect(recipe.predicted.iterationTimeS / without.predicted.iterationTimeS).toBeLessThan(1.01);
  });
});
