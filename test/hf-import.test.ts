/**
 * Importing models from Hugging Face config.json files (fixtures/hf-configs): each family maps
 * and validates inside a scenario, its parameter count matches the vendor's, and its FLOPs per
 * token match the vendor's count (DeepSeek-V3) or 6N plus the attention core (PaLM, App. B).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../src/cli/run';
import { stageMemoryBasis, stageParams } from '../src/model/memory';
import type { StageLayout } from '../src/model/placement';
import { modelFromHfConfig, type ImportedModel } from '../src/model/hf-config';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import {
  attentionCoreFlopsPerToken, attentionProjectionFlopsPerToken, expertParams, layerActivationBytesPerToken,
  logitFlopsPerToken, mlpFlopsPerToken, modelFlopsPerIteration, mtpParams, totalParams,
} from '../src/model/transformer';
import { clone, fixturePath, readFixture } from './helpers/fixtures';

type Model = Scenario['model'];
const configPath = (name: string): string => fixturePath(`hf-configs/${name}.json`);
const readConfig = (name: string): Record<string, unknown> => JSON.parse(fs.readFileSync(configPath(name), 'utf8')) as Record<string, unknown>;
const imported = (name: string): ImportedModel => modelFromHfConfig(readConfig(name), name);

/** The imported model inside a scenario that is otherwise the DeepSeek two-site fixture, validated. */
function scenarioWith(model: ImportedModel, seqLen = 4096): Scenario {
  const spec = clone(readFixture('deepseek-v3-moe-two-sites')) as Record<string, unknown> & { training: { seqLen: number } };
  spec['model'] = model;
  spec.training.seqLen = seqLen;
  return parseScenario(spec, 'test');
}

const modelOf = (name: string): Model => scenarioWith(imported(name)).model;
const moeLayers = (m: Model): number => (m.moe ? m.layers - m.moe.denseLayers : 0);

/** Training FLOPs per token (3 x forward, no recomputation), causal or full attention square. */
function trainingFlopsPerToken(m: Model, seqLen: number, causal: boolean): number {
  const forward = logitFlopsPerToken(m)
    + m.layers * (attentionProjectionFlopsPerToken(m) + attentionCoreFlopsPerToken(m, seqLen, causal))
    + (m.layers - moeLayers(m)) * mlpFlopsPerToken(m, false) + moeLayers(m) * mlpFlopsPerToken(m, true);
  return 3 * forward;
}

/**
 * Vendors' parameter counts, each with its source; `active` excludes the input embedding when
 * `activeWithoutEmbedding` (a lookup, no FLOPs) and includes it otherwise, as the source counts.
 */
const PUBLISHED: Record<string, { total: number; active: number; activeWithoutEmbedding: boolean; source: string; tolerance?: number }> = {
  'Meta-Llama-3-8B': { total: 8.03e9, active: 8.03e9, activeWithoutEmbedding: false, source: 'model card, 8.03B' },
  'Meta-Llama-3-70B': { total: 70.6e9, active: 70.6e9, activeWithoutEmbedding: false, source: 'model card, 70.6B' },
  'Mistral-7B-v0.1': { total: 7.24e9, active: 7.24e9, activeWithoutEmbedding: false, source: 'model card, 7.24B' },
  'Mixtral-8x7B-v0.1': { total: 46.7e9, active: 12.9e9, activeWithoutEmbedding: false, source: 'Mistral AI, "Mixtral of experts": 46.7B total, 12.9B per token' },
  'Qwen2-7B': { total: 7.6e9, active: 7.6e9, activeWithoutEmbedding: false, source: 'Qwen2 technical report, Table 1' },
  'Qwen2-57B-A14B': { total: 57e9, active: 14e9, activeWithoutEmbedding: false, source: 'Qwen2 technical report, Table 1: 57B, 14B activated', tolerance: 0.02 },
  'Qwen3-8B': { total: 8.2e9, active: 8.2e9, activeWithoutEmbedding: false, source: 'model card: 8.2B, 6.95B non-embedding' },
  'Qwen3-30B-A3B': { total: 30.5e9, active: 3.3e9, activeWithoutEmbedding: false, source: 'model card: 30.5B, 3.3B activated', tolerance: 0.02 },
  'DeepSeek-V3': { total: 671e9 + 11.5e9, active: 36.6e9, activeWithoutEmbedding: true, source: 'DeepSeek-V3 README_WEIGHTS: 671B main + 11.5B MTP; 36.6B activated including the 0.9B output head' },
  'Kimi-K2-Instruct': { total: 1.0e12, active: 32e9, activeWithoutEmbedding: false, source: 'model card: 1T total, 32B activated', tolerance: 0.03 },
  'gpt-oss-120b': { total: 116.83e9, active: 5.13e9, activeWithoutEmbedding: true, source: 'gpt-oss model card, Table 1: 116.83B total, 5.13B active' },
  'Nemotron-4-340B': { total: 9.4e9 + 331.6e9, active: 9.4e9 + 331.6e9, activeWithoutEmbedding: false, source: 'Nemotron-4 340B report, Table 1: 9.4B embedding + 331.6B non-embedding' },
};
const FAMILIES = Object.keys(PUBLISHED);

/** Parameters one token uses: all but the routed experts it is not sent to (the main model's, with MTP's DeepSeek doc counts apart). */
function activeParams(m: Model): number {
  const idleExperts = m.moe ? (moeLayers(m) + (m.mtpLayers ?? 0)) * (m.moe.experts - m.moe.topK) * expertParams(m) : 0;
  return totalParams(m) - idleExperts;
}

describe('import-model: every fixture family', () => {
  it('has a fixture per supported family, each mapping to a valid scenario model', () => {
    const types = new Set(FAMILIES.map((name) => readConfig(name)['model_type']));
    expect([...types].sort()).toEqual(['deepseek_v3', 'gpt_oss', 'kimi_k2', 'llama', 'mistral', 'mixtral', 'nemotron', 'qwen2', 'qwen2_moe', 'qwen3', 'qwen3_moe']);
    for (const name of FAMILIES) expect(() => scenarioWith(imported(name))).not.toThrow();
  });

  it.each(FAMILIES)('%s: total and active parameters match the published counts', (name) => {
    const m = modelOf(name);
    const published = PUBLISHED[name]!;
    const tolerance = published.tolerance ?? 0.01;
    expect(Math.abs(totalParams(m) / published.total - 1)).toBeLessThan(tolerance);
    const mtpActive = name === 'DeepSeek-V3' ? activeParams(m) - activeParams({ ...m, mtpLayers: 0 }) : 0;
    const active = activeParams(m) - mtpActive - (published.activeWithoutEmbedding ? m.vocab * m.hidden : 0);
    expect(Math.abs(active / published.active - 1)).toBeLessThan(tolerance);
  });

  it.each(FAMILIES)('%s: full-square training FLOPs per token are 6N + the attention core (PaLM, App. B)', (name) => {
    const m = modelOf(name);
    const s = 4096;
    // N: the vendor's active parameters without the input embedding (a lookup, no FLOPs).
    const published = PUBLISHED[name]!;
    const mtpActive = name === 'DeepSeek-V3' ? activeParams(m) - activeParams({ ...m, mtpLayers: 0 }) : 0;
    // An MTP module also runs the shared output head once more.
    const n = published.active + mtpActive + (m.mtpLayers ?? 0) * m.vocab * m.hidden - (published.activeWithoutEmbedding ? 0 : m.vocab * m.hidden);
    // Attention core, written out apart from the cost model: 2 FLOPs x (QK + AV widths) per key per layer, forward and backward.
    const qkWidth = m.attention ? m.heads * (m.attention.qkNopeHeadDim + m.attention.qkRopeHeadDim) : m.heads * (m.headDim ?? m.hidden / m.heads);
    const vWidth = m.attention ? m.heads * m.attention.vHeadDim : qkWidth;
    const w = m.slidingWindow ? Math.min(m.slidingWindow.tokens, s) : s;
    const windowLayers = m.slidingWindow ? m.slidingWindow.layers ?? m.layers : 0;
    const keys = (m.layers - windowLayers) * s + windowLayers * (2 * w - (w * w) / s);
    const attention = 3 * 2 * (qkWidth + vWidth) * keys;
    const expected = 6 * n + attention;
    const ours = modelFlopsPerIteration(m, s, 1, 'full') / s;
    expect(Math.abs(ours / expected - 1)).toBeLessThan(published.tolerance ?? 0.01);
  });

  it('DeepSeek-V3: about 250 GFLOP per training token at sequence 4096, causal (DeepSeek, ISCA 2025, Table 2)', () => {
    const m = modelOf('DeepSeek-V3');
    const main = trainingFlopsPerToken({ ...m, mtpLayers: 0 }, 4096, true);
    expect(main / 1e9).toBeGreaterThan(245);
    expect(main / 1e9).toBeLessThan(255);
    // The one MTP module adds its projection, one MoE layer and a second pass through the output head.
    const withMtp = trainingFlopsPerToken(m, 4096, true);
    expect((withMtp - main) / 1e9).toBeGreaterThan(9);
    expect((withMtp - main) / 1e9).toBeLessThan(11);
  });
});

describe('multi-token prediction on the last stage', () => {
  it("puts the MTP module's parameters and activations on the stage with the output head only", () => {
    const withMtp = scenarioWith(imported('DeepSeek-V3'));
    const without = { ...withMtp, model: { ...withMtp.model, mtpLayers: 0 } };
    const plan = { tp: 2, cp: 1, ep: 8, microBatchSeqs: 1, recompute: 'none', zero: 1 } as const;
    const stage = (hasOutputLayer: boolean): StageLayout => ({ index: 0, layers: 8, moeLayers: 8, chunkLayers: [8], hasEmbedding: false, hasOutputLayer });
    const mtp = mtpParams(withMtp.model);
    expect(mtp.routed).toBeGreaterThan(11e9);
    expect(stageParams(withMtp, plan, stage(true)).expert - stageParams(without, plan, stage(true)).expert).toBeCloseTo(mtp.routed / (2 * 8), 0);
    expect(stageParams(withMtp, plan, stage(true)).dense - stageParams(without, plan, stage(true)).dense).toBeCloseTo(mtp.replicated / 2, 0);
    expect(stageParams(withMtp, plan, stage(false))).toEqual(stageParams(without, plan, stage(false)));
    expect(stageMemoryBasis(withMtp, plan, stage(true)).outputBytes).toBeGreaterThan(2 * stageMemoryBasis(without, plan, stage(true)).outputBytes * 0.99);
    expect(stageMemoryBasis(withMtp, plan, stage(false)).outputBytes).toBe(0);
  });
});

describe('import-model: what each family maps to', () => {
  it('reads explicit head dimensions, GQA and MoE widths', () => {
    // Qwen3-8B's head_dim 128 is hidden/heads, so the spec needs no headDim; Qwen3-30B-A3B's is twice that.
    expect(imported('Qwen3-8B')).toMatchObject({ heads: 32, kvHeads: 8, hidden: 4096, tiedEmbeddings: false });
    expect(imported('Qwen3-8B')).not.toHaveProperty('headDim');
    expect(imported('Qwen3-30B-A3B')).toMatchObject({ headDim: 128, moe: { experts: 128, topK: 8, expertFfnHidden: 768, sharedExperts: 0, denseLayers: 0 } });
    expect(imported('Mixtral-8x7B-v0.1').moe).toEqual({ experts: 8, topK: 2, expertFfnHidden: 14336, sharedExperts: 0, denseLayers: 0 });
    // One shared expert of 20480 = 8 experts of 2560 in parameters, FLOPs and activations.
    expect(imported('Qwen2-57B-A14B').moe).toEqual({ experts: 64, topK: 8, expertFfnHidden: 2560, sharedExperts: 8, denseLayers: 0 });
  });

  it('reads multi-head latent attention, first dense layers and MTP (DeepSeek-V3, Kimi-K2)', () => {
    expect(imported('DeepSeek-V3')).toMatchObject({
      attention: { kind: 'mla', qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 },
      moe: { experts: 256, topK: 8, expertFfnHidden: 2048, sharedExperts: 1, denseLayers: 3, routingGroups: { count: 8, perToken: 4 } },
      mtpLayers: 1,
    });
    const kimi = imported('Kimi-K2-Instruct');
    expect(kimi).toMatchObject({ heads: 64, moe: { experts: 384, denseLayers: 1 } });
    expect(kimi.moe).not.toHaveProperty('routingGroups'); // n_group 1: routing is not group-limited
    expect(kimi).not.toHaveProperty('mtpLayers');
  });

  it('reads sliding windows: all layers (Mistral-7B-v0.1), alternate layers (gpt-oss), unused (Qwen2)', () => {
    expect(imported('Mistral-7B-v0.1').slidingWindow).toEqual({ tokens: 4096 });
    expect(imported('gpt-oss-120b')).toMatchObject({ headDim: 64, slidingWindow: { tokens: 128, layers: 18 }, moe: { experts: 128, topK: 4 } });
    expect(imported('Qwen2-7B')).not.toHaveProperty('slidingWindow');
    const qwenWindow = { ...readConfig('Qwen2-7B'), use_sliding_window: true, sliding_window: 4096, max_window_layers: 20 };
    expect(modelFromHfConfig(qwenWindow).slidingWindow).toEqual({ tokens: 4096, layers: 8 });
  });

  it('reads squared-ReLU MLPs with two matrices (Nemotron-4)', () => {
    const m = imported('Nemotron-4-340B');
    expect(m.mlp).toBe('squared-relu');
    const swiglu = { ...modelOf('Nemotron-4-340B'), mlp: 'swiglu' as const };
    expect(mlpFlopsPerToken(modelOf('Nemotron-4-340B'), false) / mlpFlopsPerToken(swiglu, false)).toBeCloseTo(2 / 3, 12);
  });

  it('names the model after --name, else the model_type', () => {
    expect(modelFromHfConfig(readConfig('Qwen3-8B')).name).toBe('qwen3');
    expect(modelFromHfConfig(readConfig('Qwen3-8B'), 'mine').name).toBe('mine');
  });
});

describe('import-model: the new model fields leave other models unchanged and behave physically', () => {
  const base = modelOf('Meta-Llama-3-8B');

  it('an explicit headDim equal to hidden/heads and a window no shorter than the sequence change no number', () => {
    const same: Model = { ...base, headDim: 128, slidingWindow: { tokens: 8192 } };
    for (const seq of [2048, 8192]) {
      expect(modelFlopsPerIteration(same, seq, 3)).toBe(modelFlopsPerIteration(base, seq, 3));
      expect(attentionCoreFlopsPerToken(same, seq, true)).toBe(attentionCoreFlopsPerToken(base, seq, true));
    }
    expect(totalParams(same)).toBe(totalParams(base));
    expect(layerActivationBytesPerToken(same, false)).toBe(layerActivationBytesPerToken(base, false));
  });

  it("a sliding-window layer's attention core stops growing with the sequence", () => {
    const windowed: Model = { ...base, slidingWindow: { tokens: 1024 } };
    const core = (seq: number) => attentionCoreFlopsPerToken(windowed, seq, true);
    expect(core(1024)).toBe(attentionCoreFlopsPerToken(base, 1024, true));
    expect(core(65536)).toBeLessThan(2 * core(1024));
    expect(core(65536)).toBeGreaterThan(core(8192));
    const half: Model = { ...base, slidingWindow: { tokens: 1024, layers: base.layers / 2 } };
    expect(attentionCoreFlopsPerToken(half, 65536, true)).toBeCloseTo((core(65536) + attentionCoreFlopsPerToken(base, 65536, true)) / 2, 6);
  });

  it('a head dimension wider than hidden/heads costs more projection FLOPs and activation bytes', () => {
    const wide: Model = { ...base, headDim: 256 };
    expect(attentionProjectionFlopsPerToken(wide)).toBeGreaterThan(attentionProjectionFlopsPerToken(base));
    expect(layerActivationBytesPerToken(wide, false)).toBeGreaterThan(layerActivationBytesPerToken(base, false));
  });
});

describe('import-model: configs it cannot map', () => {
  const issuesOf = (config: unknown): string[] => {
    try {
      modelFromHfConfig(config);
    } catch (error) {
      expect(error).toBeInstanceOf(ScenarioValidationError);
      return (error as ScenarioValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`);
    }
    throw new Error('expected a validation error');
  };

  it('names an unknown model_type, unknown keys and values the spec cannot express', () => {
    expect(issuesOf({ ...readConfig('Meta-Llama-3-8B'), model_type: 'mamba' })[0]).toMatch(/^model_type: 'mamba' is not supported; supported: llama, /);
    expect(issuesOf({ ...readConfig('Meta-Llama-3-8B'), n_routed_experts: 8, foo: 1 }))
      .toEqual(["n_routed_experts: not understood for model_type 'llama'", "foo: not understood for model_type 'llama'"]);
    expect(issuesOf({ ...readConfig('Qwen3-30B-A3B'), decoder_sparse_step: 2 })[0]).toMatch(/^decoder_sparse_step: 2: MoE every 2 layers/);
    expect(issuesOf({ ...readConfig('Qwen3-30B-A3B'), mlp_only_layers: [3] })[0]).toMatch(/^mlp_only_layers: /);
    const noLayers = readConfig('Qwen3-8B');
    delete noLayers['num_hidden_layers'];
    expect(issuesOf(noLayers)).toEqual(["num_hidden_layers: is required for model_type 'qwen3'"]);
    expect(issuesOf([1, 2])).toEqual([': must be a JSON object (a Hugging Face config.json)']);
  });

  it('names the config.json key of a value the model spec refuses, with the model field beside it', () => {
    expect(issuesOf({ ...readConfig('Meta-Llama-3-8B'), num_attention_heads: 0 })).toEqual(['num_attention_heads: must be a positive integer (model.heads of the imported model)']);
    expect(issuesOf({ ...readConfig('Meta-Llama-3-8B'), num_key_value_heads: 5 })[0]).toMatch(/^num_key_value_heads: 32 heads are not divisible by 5 kv heads \(model\.kvHeads/);
    expect(issuesOf({ ...readConfig('Qwen3-30B-A3B'), num_experts_per_tok: 200 })[0]).toMatch(/^num_experts_per_tok: .*\(model\.moe\.topK/);
  });

  it('tie_word_embeddings: false when absent (every family\'s transformers default), true or false only', () => {
    const absent = readConfig('Meta-Llama-3-8B');
    delete absent['tie_word_embeddings'];
    expect(modelFromHfConfig(absent).tiedEmbeddings).toBe(false);
    expect(modelFromHfConfig({ ...readConfig('Meta-Llama-3-8B'), tie_word_embeddings: true }).tiedEmbeddings).toBe(true);
    expect(issuesOf({ ...readConfig('Meta-Llama-3-8B'), tie_word_embeddings: 'false' })).toEqual(['tie_word_embeddings: must be true or false, got "false"']);
  });
});

describe('scaleacross import-model', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-import-'));
  async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
    return { code, out, err };
  }

  it('prints the model object, named after the file or --name', async () => {
    const result = await run('import-model', configPath('DeepSeek-V3'));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out)).toEqual(modelFromHfConfig(readConfig('DeepSeek-V3'), 'DeepSeek-V3'));
    const folder = path.join(tmp, 'Qwen3-8B');
    fs.mkdirSync(folder);
    fs.copyFileSync(configPath('Qwen3-8B'), path.join(folder, 'config.json'));
    expect(JSON.parse((await run('import-model', path.join(folder, 'config.json'))).out).name).toBe('Qwen3-8B');
    expect(JSON.parse((await run('import-model', path.join(folder, 'config.json'), '--name', 'q')).out).name).toBe('q');
  });

  it('exits 2 with one line per key it does not understand, naming the file', async () => {
    const file = path.join(tmp, 'odd.json');
    fs.writeFileSync(file, JSON.stringify({ ...readConfig('Mixtral-8x7B-v0.1'), q_lora_rank: 1536 }));
    const result = await run('import-model', file);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err.trim()).toBe(`${file}: q_lora_rank: not understood for model_type 'mixtral'`);
    const unknownType = path.join(tmp, 'type.json');
    fs.writeFileSync(unknownType, JSON.stringify({ model_type: 'gemma3', hidden_size: 8 }));
    const typed = await run('import-model', unknownType);
    expect(typed.code).toBe(2);
    expect(typed.err).toMatch(/model_type: 'gemma3' is not supported/);
    expect(typed.err.trim().split('\n')).toHaveLength(1);
    expect(typed.err).not.toMatch(/undefined|at .*\.ts/);
  });
});
