/**
 * Maps a Hugging Face transformers `config.json` (already parsed) to the scenario's `model`
 * object. Each supported `model_type` lists the keys it reads and the keys that do not change
 * the cost model (token ids, RoPE, norm epsilons, router loss weights, inference quantisation);
 * any other key, or a value the spec cannot express, is a {@link ScenarioValidationError} naming
 * the key. Field meanings: the transformers configuration classes of each family
 * (`configuration_llama.py`, `configuration_qwen2_moe.py`, `configuration_deepseek_v3.py`,
 * `configuration_gpt_oss.py`, `configuration_nemotron.py`, ...); docs/cost-model.md §1.1.
 */
import { checkModelSpec } from './scenario';
import { modelSchema, type ModelSpec } from './scenario-schema';
import { ScenarioValidationError, issuesFromZod, type InputIssue } from './validation-error';

/** The scenario's `model` object as written in a spec (no defaults filled in). */
export type ImportedModel = { -readonly [K in keyof ModelSpec]?: ModelSpec[K] } & Pick<ModelSpec, 'name' | 'layers' | 'hidden' | 'ffnHidden' | 'heads' | 'vocab'>;

/** Keys no family's cost depends on: identity, tokens, numerics, positions, inference settings. */
const IGNORED_EVERYWHERE = [
  '_name_or_path', 'architectures', 'auto_map', 'bos_token_id', 'eos_token_id', 'pad_token_id', 'unk_token_id',
  'torch_dtype', 'dtype', 'transformers_version', 'use_cache', 'initializer_range', 'rms_norm_eps',
  'rope_theta', 'rope_scaling', 'rope_parameters', 'max_position_embeddings', 'pretraining_tp', 'quantization_config',
  'tie_word_embeddings', 'attention_bias', 'mlp_bias', 'attention_dropout', 'hidden_dropout',
  'model_type', 'hidden_act', 'vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads',
  'num_key_value_heads', 'intermediate_size', 'head_dim', 'layer_types',
];
const SLIDING = ['sliding_window', 'use_sliding_window', 'max_window_layers'];
const MOE_ROUTER = ['num_experts_per_tok', 'norm_topk_prob', 'output_router_logits', 'router_aux_loss_coef'];
const QWEN_MOE = [...SLIDING, ...MOE_ROUTER, 'num_experts', 'moe_intermediate_size', 'decoder_sparse_step', 'mlp_only_layers'];
const DEEPSEEK = [
  ...MOE_ROUTER, 'q_lora_rank', 'kv_lora_rank', 'qk_nope_head_dim', 'qk_rope_head_dim', 'qk_head_dim', 'v_head_dim',
  'n_routed_experts', 'n_shared_experts', 'moe_intermediate_size', 'first_k_dense_replace', 'moe_layer_freq',
  'num_nextn_predict_layers', 'n_group', 'topk_group', 'topk_method', 'scoring_func', 'routed_scaling_factor',
  'aux_loss_alpha', 'seq_aux', 'ep_size', 'rope_interleave',
];

/** The keys each supported model_type may carry besides {@link IGNORED_EVERYWHERE}. */
const FAMILY_KEYS: Readonly<Record<string, readonly string[]>> = {
  llama: [],
  mistral: ['sliding_window'],
  mixtral: ['sliding_window', ...MOE_ROUTER, 'num_local_experts', 'router_jitter_noise'],
  qwen2: SLIDING,
  qwen2_moe: [...QWEN_MOE, 'shared_expert_intermediate_size'],
  qwen3: SLIDING,
  qwen3_moe: QWEN_MOE,
  deepseek_v3: DEEPSEEK,
  kimi_k2: DEEPSEEK,
  gpt_oss: ['sliding_window', ...MOE_ROUTER, 'num_local_experts', 'experts_per_token', 'swiglu_limit', 'initial_context_length', 'router_jitter_noise'],
  // `rope_percent` is how some published Nemotron-4-340B conversions name partial_rotary_factor.
  nemotron: ['norm_eps', 'layer_norm_eps', 'partial_rotary_factor', 'rope_percent'],
};

/** The model_types {@link modelFromHfConfig} maps. */
export const HF_MODEL_TYPES: readonly string[] = Object.keys(FAMILY_KEYS);

type Config = Readonly<Record<string, unknown>>;

/** Reads the config's keys, recording one issue per key it cannot use. */
class Reader {
  readonly issues: InputIssue[] = [];
  constructor(readonly config: Config, readonly modelType: string) {}

  has(key: string): boolean {
    return this.config[key] !== undefined && this.config[key] !== null;
  }

  /** A positive integer key; `fallback` when absent or null, an issue when required and absent. */
  int(key: string, fallback?: number): number {
    const value = this.config[key];
    if (value === undefined || value === null) {
      if (fallback === undefined) this.issues.push({ path: key, message: `is required for model_type '${this.modelType}'` });
      return fallback ?? 1;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      this.issues.push({ path: key, message: `must be a non-negative integer, got ${JSON.stringify(value)}` });
      return fallback ?? 1;
    }
    return value;
  }

  /** A boolean key; `fallback` when absent or null, an issue when it is anything else. */
  bool(key: string, fallback: boolean): boolean {
    const value = this.config[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'boolean') {
      this.issues.push({ path: key, message: `must be true or false, got ${JSON.stringify(value)}` });
      return fallback;
    }
    return value;
  }

  fail(key: string, message: string): void {
    this.issues.push({ path: key, message });
  }
}

/**
 * The scenario `model` object for a parsed config.json. Throws a {@link ScenarioValidationError}
 * whose issues name the config keys it does not understand or cannot express; never throws
 * anything else. `name` defaults to the model_type.
 */
export function modelFromHfConfig(config: unknown, name?: string, source?: string): ImportedModel {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new ScenarioValidationError([{ path: '', message: 'must be a JSON object (a Hugging Face config.json)' }], source);
  }
  const cfg = config as Config;
  const modelType = cfg['model_type'];
  if (typeof modelType !== 'string' || !(modelType in FAMILY_KEYS)) {
    const got = typeof modelType === 'string' ? `'${modelType}' is not supported` : 'is missing';
    throw new ScenarioValidationError([{ path: 'model_type', message: `${got}; supported: ${HF_MODEL_TYPES.join(', ')}` }], source);
  }
  const known = new Set([...IGNORED_EVERYWHERE, ...FAMILY_KEYS[modelType]!]);
  const unknown = Object.keys(cfg).filter((key) => !known.has(key));
  if (unknown.length > 0) {
    throw new ScenarioValidationError(unknown.map((key) => ({ path: key, message: `not understood for model_type '${modelType}'` })), source);
  }
  const read = new Reader(cfg, modelType);
  const model = mapModel(read, name ?? modelType);
  if (read.issues.length > 0) throw new ScenarioValidationError(read.issues, source);
  const parsed = modelSchema.safeParse(model);
  const issues = parsed.success ? [] : issuesFromZod(parsed.error, 'model');
  if (parsed.success) checkModelSpec(parsed.data, issues);
  if (issues.length > 0) throw new ScenarioValidationError(issues.map((issue) => inConfigTerms(issue, modelType)), source);
  return model;
}

/** The config.json key each field of the imported model is read from, by model_type (where it differs between families). */
function configKeyOf(field: string, modelType: string): string | undefined {
  const deepSeek = modelType === 'deepseek_v3' || modelType === 'kimi_k2';
  const common: Readonly<Record<string, string>> = {
    layers: 'num_hidden_layers', hidden: 'hidden_size', heads: 'num_attention_heads', kvHeads: 'num_key_value_heads',
    ffnHidden: 'intermediate_size', vocab: 'vocab_size', headDim: 'head_dim', mtpLayers: 'num_nextn_predict_layers',
    'slidingWindow.tokens': 'sliding_window', 'moe.topK': 'num_experts_per_tok',
    'attention.qLoraRank': 'q_lora_rank', 'attention.kvLoraRank': 'kv_lora_rank', 'attention.qkNopeHeadDim': 'qk_nope_head_dim',
    'attention.qkRopeHeadDim': 'qk_rope_head_dim', 'attention.vHeadDim': 'v_head_dim',
  };
  if (field === 'moe.experts') return deepSeek ? 'n_routed_experts' : modelType.startsWith('qwen') ? 'num_experts' : 'num_local_experts';
  if (field === 'moe.expertFfnHidden') return deepSeek || modelType.startsWith('qwen') ? 'moe_intermediate_size' : 'intermediate_size';
  if (field === 'moe.sharedExperts' && deepSeek) return 'n_shared_experts';
  if (field === 'moe.denseLayers' && deepSeek) return 'first_k_dense_replace';
  return common[field];
}

/** An issue of the imported model named by the config.json key it came from (the model field beside it), where one key gives the field. */
function inConfigTerms(issue: InputIssue, modelType: string): InputIssue {
  const field = issue.path.startsWith('model.') ? issue.path.slice('model.'.length) : undefined;
  const key = field === undefined ? undefined : configKeyOf(field, modelType);
  return key === undefined ? issue : { path: key, message: `${issue.message} (model.${field} of the imported model)` };
}

function mapModel(read: Reader, name: string): ImportedModel {
  const layers = read.int('num_hidden_layers');
  const hidden = read.int('hidden_size');
  const heads = read.int('num_attention_heads');
  const model: ImportedModel = {
    name,
    layers,
    hidden,
    ffnHidden: read.int('intermediate_size'),
    heads,
    kvHeads: read.int('num_key_value_heads', heads),
    vocab: read.int('vocab_size'),
    mlp: mlpKind(read),
    // Absent: false, the default of every family's config class in transformers (LlamaConfig,
    // MistralConfig, MixtralConfig, Qwen2/Qwen2Moe/Qwen3/Qwen3MoeConfig, DeepseekV3Config,
    // GptOssConfig, NemotronConfig pass tie_word_embeddings=False to PretrainedConfig, whose own
    // default of true they override).
    tiedEmbeddings: read.bool('tie_word_embeddings', false),
  };
  const dropout = ['attention_dropout', 'hidden_dropout'].some((key) => typeof read.config[key] === 'number' && (read.config[key] as number) > 0);
  if (dropout) model.dropout = true;
  if (read.modelType === 'deepseek_v3' || read.modelType === 'kimi_k2') {
    mapDeepSeek(read, model);
    return model;
  }
  const headDim = read.int('head_dim', 0);
  if (headDim > 0 && headDim * heads !== hidden) model.headDim = headDim;
  const window = slidingWindow(read, layers);
  if (window) model.slidingWindow = window;
  const moe = mapMoe(read, layers);
  if (moe) model.moe = moe;
  return model;
}

/** Gated MLPs (SwiGLU and its variants) have three matrices whatever the activation; Nemotron's squared ReLU two. */
function mlpKind(read: Reader): ModelSpec['mlp'] {
  if (read.modelType !== 'nemotron') return 'swiglu';
  const act = read.config['hidden_act'] ?? 'relu2';
  if (act === 'relu2') return 'squared-relu';
  if (typeof act === 'string' && act.startsWith('gelu')) return 'gelu';
  read.fail('hidden_act', `${JSON.stringify(act)} is not an activation the cost model knows for nemotron (relu2, gelu)`);
  return 'gelu';
}

/**
 * Sliding-window layers: `layer_types` (gpt-oss, recent transformers) counts them; Mistral's
 * `sliding_window` applies to every layer; Qwen2/3 use it only with `use_sliding_window`, from
 * layer `max_window_layers` on (modeling_qwen2.py).
 */
function slidingWindow(read: Reader, layers: number): ModelSpec['slidingWindow'] {
  const types = read.config['layer_types'];
  let windowLayers: number | undefined;
  if (types !== undefined && types !== null) {
    if (!Array.isArray(types) || types.length !== layers || types.some((t) => t !== 'sliding_attention' && t !== 'full_attention')) {
      read.fail('layer_types', `must list ${layers} entries, each 'sliding_attention' or 'full_attention'`);
      return undefined;
    }
    windowLayers = types.filter((t) => t === 'sliding_attention').length;
  } else if (read.modelType.startsWith('qwen')) {
    windowLayers = read.config['use_sliding_window'] === true ? Math.max(0, layers - read.int('max_window_layers', 0)) : 0;
  }
  if (windowLayers === 0 || !read.has('sliding_window')) return undefined;
  const tokens = read.int('sliding_window');
  return windowLayers === undefined || windowLayers === layers ? { tokens } : { tokens, layers: windowLayers };
}

function mapMoe(read: Reader, layers: number): ModelSpec['moe'] {
  const type = read.modelType;
  if (type === 'mixtral' || type === 'gpt_oss') {
    return { experts: read.int('num_local_experts'), topK: read.int('num_experts_per_tok'), expertFfnHidden: read.int('intermediate_size'), sharedExperts: 0, denseLayers: 0 };
  }
  if (type !== 'qwen2_moe' && type !== 'qwen3_moe') return undefined;
  const step = read.int('decoder_sparse_step', 1);
  if (step !== 1) read.fail('decoder_sparse_step', `${step}: MoE every ${step} layers cannot be expressed (model.moe.denseLayers counts leading dense layers only)`);
  const denseLayers = leadingDenseLayers(read, layers);
  const expertFfnHidden = read.int('moe_intermediate_size');
  let sharedExperts = 0;
  if (type === 'qwen2_moe') {
    // One shared expert of width w equals w / f_e experts of width f_e in parameters, FLOPs and activations.
    const shared = read.int('shared_expert_intermediate_size', 0);
    sharedExperts = shared / expertFfnHidden;
    if (!Number.isInteger(sharedExperts)) {
      read.fail('shared_expert_intermediate_size', `${shared} is not a multiple of moe_intermediate_size ${expertFfnHidden}`);
      sharedExperts = 0;
    }
  }
  return { experts: read.int('num_experts'), topK: read.int('num_experts_per_tok'), expertFfnHidden, sharedExperts, denseLayers };
}

/** Qwen-MoE's `mlp_only_layers` must be a leading block 0..k-1 to be expressed as denseLayers k. */
function leadingDenseLayers(read: Reader, layers: number): number {
  const list = read.config['mlp_only_layers'];
  if (list === undefined || list === null) return 0;
  const leading = Array.isArray(list) && list.every((layer, i) => layer === i) && list.length < layers;
  if (!leading) read.fail('mlp_only_layers', 'only a leading block [0, 1, ..., k-1] of dense layers can be expressed');
  return leading ? (list as unknown[]).length : 0;
}

/** DeepSeek-V3 and Kimi-K2 (same modeling code): MLA, shared + routed experts after dense layers, MTP. */
function mapDeepSeek(read: Reader, model: ImportedModel): void {
  const qLoraRank = read.int('q_lora_rank', 0);
  model.attention = {
    kind: 'mla',
    ...(qLoraRank > 0 ? { qLoraRank } : {}),
    kvLoraRank: read.int('kv_lora_rank'),
    qkNopeHeadDim: read.int('qk_nope_head_dim'),
    qkRopeHeadDim: read.int('qk_rope_head_dim'),
    vHeadDim: read.int('v_head_dim'),
  };
  const freq = read.int('moe_layer_freq', 1);
  if (freq !== 1) read.fail('moe_layer_freq', `${freq}: MoE every ${freq} layers cannot be expressed (model.moe.denseLayers counts leading dense layers only)`);
  if (read.has('n_routed_experts')) {
    model.moe = {
      experts: read.int('n_routed_experts'),
      topK: read.int('num_experts_per_tok'),
      expertFfnHidden: read.int('moe_intermediate_size'),
      sharedExperts: read.int('n_shared_experts', 0),
      denseLayers: read.int('first_k_dense_replace', 0),
    };
    // Group-limited routing (topk_method noaux_tc / group_limited_greedy): only when it limits anything.
    const groups = read.int('n_group', 1);
    const perToken = read.int('topk_group', groups);
    if (groups > 1 && perToken < groups) model.moe.routingGroups = { count: groups, perToken };
  }
  const mtpLayers = read.int('num_nextn_predict_layers', 0);
  if (mtpLayers > 0) model.mtpLayers = mtpLayers;
}
