/**
 * Per-layer quantities of a decoder-only transformer: parameters, FLOPs per token and
 * activation bytes. Formulas: docs/cost-model.md §1 (Narayanan et al. SC'21, Korthikanti et al. 2022).
 */
import type { RecomputeModule } from './plan-schema';
import type { ModelSpec } from './scenario-schema';
import { BF16_BYTES } from './units';

type Model = ModelSpec & { readonly kvHeads: number };

/** Whether layer `layerIndex` (0-based) has an MoE MLP. */
export const isMoeLayer = (model: Model, layerIndex: number): boolean =>
  model.moe !== undefined && layerIndex >= model.moe.denseLayers;

/** MLP matrices per FFN: SwiGLU has gate, up and down; GELU and squared ReLU have up and down. */
const mlpMatrices = (model: Model): number => (model.mlp === 'swiglu' ? 3 : 2);

/** Per-token widths of one layer's attention tensors: queries, keys, values and the context fed to the output projection. */
export interface AttentionWidths {
  readonly q: number;
  readonly k: number;
  readonly v: number;
  readonly context: number;
}

/**
 * Attention tensor widths: `a*d` queries and context and `g*d` keys and values with head
 * dimension `d` (headDim, else h/a); with multi-head latent attention every head has its own
 * key (no-rope + rope dims) and value (DeepSeek-V2 §2.1, eq. 9-19).
 */
export function attentionWidths(model: Model): AttentionWidths {
  const mla = model.attention;
  if (mla) {
    const qk = model.heads * (mla.qkNopeHeadDim + mla.qkRopeHeadDim);
    const context = model.heads * mla.vHeadDim;
    return { q: qk, k: qk, v: context, context };
  }
  if (model.headDim === undefined) {
    const kvWidth = (model.hidden * model.kvHeads) / model.heads;
    return { q: model.hidden, k: kvWidth, v: kvWidth, context: model.hidden };
  }
  const kvWidth = model.kvHeads * model.headDim;
  return { q: model.heads * model.headDim, k: kvWidth, v: kvWidth, context: model.heads * model.headDim };
}

/**
 * Weight-matrix parameters of one layer's attention. MHA/GQA: Q `h x a*d`, K and V `h x g*d`,
 * output `a*d x h` (`2h^2 + 2h*(h*g/a)` when d = h/a). MLA (DeepSeek-V2 §2.1): queries `h x r_q`
 * then `r_q x a*(d_nope + d_rope)` (or `h x a*(d_nope + d_rope)` without a query latent), the
 * key/value latent and shared rotary key `h x (r_kv + d_rope)`, their up-projection
 * `r_kv x a*(d_nope + d_v)`, output `a*d_v x h`.
 */
function attentionMatrixParams(model: Model): number {
  const h = model.hidden;
  const widths = attentionWidths(model);
  const mla = model.attention;
  if (!mla) return h * widths.q + h * widths.k + h * widths.v + widths.context * h;
  const query = mla.qLoraRank === undefined ? h * widths.q : h * mla.qLoraRank + mla.qLoraRank * widths.q;
  const keyValue = h * (mla.kvLoraRank + mla.qkRopeHeadDim) + mla.kvLoraRank * model.heads * (mla.qkNopeHeadDim + mla.vHeadDim);
  return query + keyValue + widths.context * h;
}

/** Attention parameters of one layer: the weight matrices, plus MLA's norms of its two latents. */
export function attentionParams(model: Model): number {
  const mla = model.attention;
  const latentNorms = mla ? (mla.qLoraRank ?? 0) + mla.kvLoraRank : 0;
  return attentionMatrixParams(model) + latentNorms;
}

/** Dense MLP parameters of one layer. */
export const denseMlpParams = (model: Model): number => mlpMatrices(model) * model.hidden * model.ffnHidden;

/** Parameters of one routed expert. */
export const expertParams = (model: Model): number =>
  model.moe ? mlpMatrices(model) * model.hidden * model.moe.expertFfnHidden : 0;

/** MoE layer parameters split into the expert-parallel part (routed experts) and the replicated part. */
export function moeMlpParams(model: Model): { readonly routed: number; readonly replicated: number } {
  const moe = model.moe;
  if (!moe) return { routed: 0, replicated: 0 };
  return {
    routed: moe.experts * expertParams(model),
    replicated: moe.sharedExperts * expertParams(model) + model.hidden * moe.experts,
  };
}

/** Embedding (or output) matrix parameters. */
export const embeddingParams = (model: Model): number => model.vocab * model.hidden;

/**
 * Parameters of the multi-token prediction modules (DeepSeek-V3 §2.2): each has a `2h x h`
 * projection, three RMSNorms and one more layer (with the model's MoE when it has one); the
 * embedding and output head are shared with the main model. DeepSeek-V3: 11.6B here, 11.5B
 * "unique parameters" in its weight documentation.
 */
export function mtpParams(model: Model): { readonly routed: number; readonly replicated: number } {
  const modules = model.mtpLayers ?? 0;
  if (modules === 0) return { routed: 0, replicated: 0 };
  const moe = moeMlpParams(model);
  const mlp = model.moe ? moe.replicated : denseMlpParams(model);
  const perModule = 2 * model.hidden * model.hidden + 3 * model.hidden + attentionParams(model) + 4 * model.hidden + mlp;
  return { routed: modules * moe.routed, replicated: modules * perModule };
}

/** Total parameters (counting tied embeddings once), multi-token prediction modules included. */
export function totalParams(model: Model): number {
  let total = 0;
  for (let layer = 0; layer < model.layers; layer++) {
    total += attentionParams(model) + 4 * model.hidden;
    if (isMoeLayer(model, layer)) {
      const moe = moeMlpParams(model);
      total += moe.routed + moe.replicated;
    } else {
      total += denseMlpParams(model);
    }
  }
  const mtp = mtpParams(model);
  return total + mtp.routed + mtp.replicated + embeddingParams(model) * (model.tiedEmbeddings ? 1 : 2);
}

/** Forward FLOPs per token of one layer's attention projections (QKV and output). */
export const attentionProjectionFlopsPerToken = (model: Model): number => 2 * attentionMatrixParams(model);

/**
 * Forward FLOPs per token of the attention scores and context (QK^T and AV), averaged over the
 * layers: `2*(a*d_qk + a*d_v)` per key attended (`4h` with d = h/a), `s` keys for the full square;
 * `causalOnly` halves it (what a causal fused kernel executes). A sliding-window layer (window
 * `w < s`) covers the causal band `w - w^2/(2s)` keys per query (twice that for the full-square
 * convention), so its core no longer grows with `s`. The mean over the layers keeps the model's
 * total exact; a stage's share is off by at most one layer's difference when window and full
 * layers alternate (gpt-oss).
 */
export function attentionCoreFlopsPerToken(model: Model, seqLen: number, causalOnly: boolean): number {
  const widths = attentionWidths(model);
  const perKey = 2 * (widths.q + widths.context);
  const full = (perKey * seqLen) / (causalOnly ? 2 : 1);
  const window = model.slidingWindow;
  if (window === undefined || window.tokens >= seqLen) return full;
  const w = window.tokens;
  const windowed = (perKey * (2 * w - (w * w) / seqLen)) / (causalOnly ? 2 : 1);
  const windowLayers = Math.min(window.layers ?? model.layers, model.layers);
  return (full * (model.layers - windowLayers) + windowed * windowLayers) / model.layers;
}

/** Forward FLOPs per token of an MoE layer's router (h x E scores). */
export const routerFlopsPerToken = (model: Model): number => (model.moe ? 2 * model.hidden * model.moe.experts : 0);

/** Forward FLOPs per token of a layer's MLP (active experts only for MoE, plus the router). */
export function mlpFlopsPerToken(model: Model, moeLayer: boolean): number {
  if (!moeLayer || !model.moe) return 2 * denseMlpParams(model);
  const active = model.moe.topK + model.moe.sharedExperts;
  return 2 * active * expertParams(model) + routerFlopsPerToken(model);
}

/**
 * Elements a linear layer's GEMMs quantise to fp8 per token per layer, forward and backward
 * together (Transformer Engine casts every GEMM operand that is not a cached weight): forward,
 * the inputs of QKV, the output projection, FC1 and FC2; backward, the output gradients of the
 * same four GEMMs. Per active FFN for MoE.
 */
export function fp8CastElementsPerToken(model: Model, moeLayer: boolean): number {
  const h = model.hidden;
  const widths = attentionWidths(model);
  const ffnWidth = moeLayer && model.moe ? model.moe.expertFfnHidden : model.ffnHidden;
  const activeFfns = moeLayer && model.moe ? model.moe.topK + model.moe.sharedExperts : 1;
  const fc1Outputs = (model.mlp === 'swiglu' ? 2 : 1) * ffnWidth;
  // Forward inputs: QKV's (h), the output projection's (the context), FC1's, FC2's; backward the output gradients of the same.
  const forward = h + widths.context + activeFfns * (h + ffnWidth);
  const backward = (widths.q + widths.k + widths.v) + h + activeFfns * (fc1Outputs + h);
  return forward + backward;
}

/**
 * Forward FLOPs per token of the multi-token prediction modules (DeepSeek-V3 §2.2), which run
 * after the last layer on the last stage: per module the `2h x h` projection, one layer's
 * attention projections and MLP (active experts for MoE) and its own logits through the shared
 * output head. Its attention core (one layer's, `4*s*h`-like) is left out: it is 1/(L+1) of the
 * model's (DeepSeek-V3 at s = 4096: 0.17 of 3.4 GFLOP forward per token).
 */
export function mtpFlopsPerToken(model: Model): number {
  const modules = model.mtpLayers ?? 0;
  return mtpLinearFlopsPerToken(model) + modules * 2 * model.hidden * model.vocab;
}

/**
 * The part of {@link mtpFlopsPerToken} in linear layers that fp8 training runs in fp8: each
 * module's projection, attention projections and MLP (not its logits through the output head).
 */
export function mtpLinearFlopsPerToken(model: Model): number {
  const modules = model.mtpLayers ?? 0;
  if (modules === 0) return 0;
  return modules * (4 * model.hidden * model.hidden + attentionProjectionFlopsPerToken(model) + mlpFlopsPerToken(model, model.moe !== undefined));
}

/**
 * Forward FLOPs per token of the output head: the logits `2hV`, plus the multi-token
 * prediction modules that extend it when the model has them ({@link mtpFlopsPerToken}).
 */
export const logitFlopsPerToken = (model: Model): number => 2 * model.hidden * model.vocab + mtpFlopsPerToken(model);

/**
 * Model FLOPs of one training iteration (forward + backward = 3x forward, no recomputation).
 * The attention core counts the causal half of the score square (`'causal'`, the project's MFU
 * convention: what a causal decoder needs, and never more than the cost model's time executes);
 * `'full'` counts the whole square, the convention of Megatron-LM's 2021-2024 FLOP formula and
 * of PaLM, used only to express published figures in their own units (docs/cost-model.md §1).
 */
export function modelFlopsPerIteration(model: Model, seqLen: number, globalBatchSeqs: number, attentionSquare: 'causal' | 'full' = 'causal'): number {
  let perToken = logitFlopsPerToken(model);
  for (let layer = 0; layer < model.layers; layer++) {
    perToken += attentionProjectionFlopsPerToken(model) + attentionCoreFlopsPerToken(model, seqLen, attentionSquare === 'causal')
      + mlpFlopsPerToken(model, isMoeLayer(model, layer));
  }
  return 3 * perToken * seqLen * globalBatchSeqs;
}

/**
 * Activation bytes one layer stores per token for backward, before dividing by tp (sequence
 * parallelism shards all of it), without recomputation: Korthikanti et al. eq. (2) generalised
 * to GQA, SwiGLU/MoE and optional dropout. The s^2 score term is separate: {@link scoreBytesPerToken}.
 */
export function layerActivationBytesPerToken(model: Model, moeLayer: boolean): number {
  const h = model.hidden;
  const widths = attentionWidths(model);
  const dropoutMaskBytes = model.dropout ? 1 : 0;
  // LayerNorm inputs (2 x 2 bytes), QKV input (2), Q (2 x a*d/h), K and V (2 x (g*d + g*d)/h, 4g/a when d = h/a),
  // attention output (2 x a*d/h), masks; MLA also keeps its two latents, the inputs of the up-projections.
  const mla = model.attention;
  const latents = mla ? (2 * ((mla.qLoraRank ?? 0) + mla.kvLoraRank)) / h : 0;
  const attention = 2 + 2 * (widths.q / h) + 2 * ((widths.k + widths.v) / h) + 2 * (widths.context / h) + dropoutMaskBytes + latents;
  const norms = 4;
  const mlpWidth = moeLayer && model.moe ? model.moe.expertFfnHidden : model.ffnHidden;
  // MLP input (2) and mask, plus for each active FFN: matrices' outputs (2 bytes each) and the activation output.
  const perFfn = ((model.mlp === 'swiglu' ? 6 : 4) * mlpWidth) / h;
  const activeFfns = moeLayer && model.moe ? model.moe.topK + model.moe.sharedExperts : 1;
  const mlp = 2 + dropoutMaskBytes + activeFfns * perFfn;
  return h * (attention + norms + mlp);
}

/**
 * Activation bytes per token (before dividing by tp) fp8 training stores less than
 * {@link layerActivationBytesPerToken}: Transformer Engine keeps the input of each fp8 GEMM for its
 * weight-gradient GEMM as the fp8 tensor it quantised (1 byte, column-wise copy only; NVIDIA
 * TransformerEngine transformer_engine/pytorch/module/linear.py, `saved_inputmat = inputmat`
 * after `update_usage(rowwise_usage=False, columnwise_usage=True)`), not bf16 (2 bytes). The QKV
 * and FC1 inputs save `h` each and every active FFN's FC2 input its width; the output projection's
 * input is the attention output, which the fused attention keeps in bf16 for its own backward,
 * so its fp8 copy adds `h`. Net `h + k*f` (`k` active FFNs); 0 for MLA, whose latent GEMMs are
 * left at bf16 here (an upper bound on its activations).
 */
export function fp8ActivationSavingBytesPerToken(model: Model, moeLayer: boolean): number {
  if (model.attention) return 0;
  const ffnWidth = moeLayer && model.moe ? model.moe.expertFfnHidden : model.ffnHidden;
  const activeFfns = moeLayer && model.moe ? model.moe.topK + model.moe.sharedExperts : 1;
  return model.hidden + activeFfns * ffnWidth;
}

/**
 * Linear-layer weights of one layer that fp8 training also holds as fp8 copies: every weight
 * matrix of the attention and MLP (active or not; MoE: all routed and shared experts), not the
 * norms, the router or the embedding and output layers, which stay bf16.
 */
export function fp8LinearParams(model: Model, moeLayer: boolean): { readonly routed: number; readonly replicated: number } {
  const attention = attentionMatrixParams(model);
  if (!moeLayer || !model.moe) return { routed: 0, replicated: attention + denseMlpParams(model) };
  return { routed: model.moe.experts * expertParams(model), replicated: attention + model.moe.sharedExperts * expertParams(model) };
}

/**
 * Activation bytes per token (before dividing by tp) one layer no longer keeps when selective
 * recomputation recomputes `modules` (Megatron-LM --recompute-modules), out of what
 * {@link layerActivationBytesPerToken} less {@link fp8ActivationSavingBytesPerToken} stores
 * (docs/cost-model.md §6; Korthikanti et al. 2022 §4.2 for the terms). By module:
 * - `core_attn`: 0 here; it drops the score matrices ({@link scoreBytesPerToken}), which the caller leaves out.
 * - `mla_up_proj` (output discarded): MLA's expanded queries, keys and values `2(w_q + w_k + w_v)`; the latents, their inputs, stay.
 * - `layernorm` (output discarded): the outputs of the norms Megatron runs as modules of their own, the
 *   MLA input norm (inputs of the two down-projections, `2h`) and a MoE layer's pre-MLP norm (the
 *   router's and the dispatcher's input, `2h`, `h` where fp8 stores it); the other norms are fused
 *   into the next linear layer (Transformer Engine's LayerNormLinear) and are not recomputed.
 * - `mlp` (dense layers) and `moe` (MoE layers, every active FFN): the FFN internals, FC1 outputs and the
 *   activation output (`6f` SwiGLU, `4f` otherwise, per FFN; FC2's input at 1 byte in fp8); their input is
 *   the checkpoint and is kept in bf16, `h` more than fp8 stores it (unless layernorm discards it).
 * - `shared_experts` (MoE layers): the shared experts' internals, as `moe` for those FFNs.
 * - `moe_act` (output discarded): each routed expert's activation output, FC2's input (`2f`, `f` in fp8).
 */
export function recomputedActivationBytesPerToken(model: Model, moeLayer: boolean, modules: readonly RecomputeModule[], fp8: boolean): number {
  const h = model.hidden;
  const mla = model.attention;
  // fp8 stores the GEMM inputs at 1 byte except under MLA (fp8ActivationSavingBytesPerToken).
  const inputBytes = fp8 && !mla ? 1 : 2;
  const moe = moeLayer ? model.moe : undefined;
  const ffnWidth = moe ? moe.expertFfnHidden : model.ffnHidden;
  // One FFN's stored internals: FC1 outputs and the activation output, which is FC2's input.
  const ffnBytes = (model.mlp === 'swiglu' ? 4 : 2) * ffnWidth + inputBytes * ffnWidth;
  const layernorm = modules.includes('layernorm');
  let dropped = 0;
  if (mla && modules.includes('mla_up_proj')) {
    const widths = attentionWidths(model);
    dropped += 2 * (widths.q + widths.k + widths.v);
  }
  if (layernorm) dropped += (mla ? 2 * h : 0) + (moe ? inputBytes * h : 0);
  if (!moe) {
    if (modules.includes('mlp')) dropped += ffnBytes - (2 - inputBytes) * h;
  } else if (modules.includes('moe')) {
    dropped += (moe.topK + moe.sharedExperts) * ffnBytes - (layernorm ? 0 : (2 - inputBytes) * h);
  } else {
    if (modules.includes('shared_experts')) dropped += moe.sharedExperts * ffnBytes;
    if (modules.includes('moe_act')) dropped += moe.topK * inputBytes * ffnWidth;
  }
  return dropped;
}

/**
 * Forward FLOPs per token of one layer's GEMMs that selective recomputation of `modules` runs
 * again, split by the rate they run at: `linear` (the linear layers, fp8 in fp8 training),
 * `routed` (the routed experts' grouped GEMMs) and `router` (bf16). mla_up_proj: the query and
 * key/value up-projections (the query projection itself without a query latent); mlp (dense
 * layers): the MLP; moe: the active experts and the router; shared_experts: the shared experts.
 */
export function recomputedGemmFlopsPerToken(model: Model, moeLayer: boolean, modules: readonly RecomputeModule[]): { readonly linear: number; readonly routed: number; readonly router: number } {
  let linear = 0;
  let routed = 0;
  let router = 0;
  const mla = model.attention;
  if (mla && modules.includes('mla_up_proj')) {
    const widths = attentionWidths(model);
    linear += 2 * ((mla.qLoraRank ?? model.hidden) * widths.q + mla.kvLoraRank * model.heads * (mla.qkNopeHeadDim + mla.vHeadDim));
  }
  const moe = moeLayer ? model.moe : undefined;
  if (!moe) {
    if (modules.includes('mlp')) linear += mlpFlopsPerToken(model, false);
  } else if (modules.includes('moe')) {
    linear += 2 * moe.sharedExperts * expertParams(model);
    routed += 2 * moe.topK * expertParams(model);
    router += routerFlopsPerToken(model);
  } else if (modules.includes('shared_experts')) {
    linear += 2 * moe.sharedExperts * expertParams(model);
  }
  return { linear, routed, router };
}

/**
 * HBM bytes per token of one layer's memory-bound kernels that selective recomputation of
 * `modules` runs again: a recomputed norm reads and writes `h` bf16 elements (`4h`); an
 * activation function reads its FC1 outputs and writes its output (SwiGLU `2f` in and `f` out,
 * `6f` bytes; otherwise `4f`), per recomputed FFN (mlp, moe, shared_experts, moe_act's routed experts).
 */
export function recomputedKernelBytesPerToken(model: Model, moeLayer: boolean, modules: readonly RecomputeModule[]): number {
  const moe = moeLayer ? model.moe : undefined;
  const ffnWidth = moe ? moe.expertFfnHidden : model.ffnHidden;
  const activationBytes = (model.mlp === 'swiglu' ? 3 : 2) * BF16_BYTES * ffnWidth;
  let bytes = 0;
  if (modules.includes('layernorm')) bytes += 2 * BF16_BYTES * model.hidden * ((model.attention ? 1 : 0) + (moe ? 1 : 0));
  if (!moe) {
    if (modules.includes('mlp')) bytes += activationBytes;
  } else if (modules.includes('moe')) {
    bytes += (moe.topK + moe.sharedExperts) * activationBytes;
  } else {
    if (modules.includes('shared_experts')) bytes += moe.sharedExperts * activationBytes;
    if (modules.includes('moe_act')) bytes += moe.topK * activationBytes;
  }
  return bytes;
}

/** Bytes per token of the stored attention score matrices (softmax, dropout): 5*a*s/h * h, or 3*a*s without dropout. */
export const scoreBytesPerToken = (model: Model, seqLen: number): number =>
  (model.dropout ? 5 : 2) * model.heads * seqLen;

/**
 * Activation bytes per token the multi-token prediction modules keep on the last stage, before
 * dividing by tp: per module the projection's input (the two normalised `h` vectors, bf16), one
 * layer ({@link layerActivationBytesPerToken}) and its own fp32 and bf16 logits (`6V`, as the
 * main head's).
 */
export function mtpActivationBytesPerToken(model: Model): number {
  const modules = model.mtpLayers ?? 0;
  if (modules === 0) return 0;
  return modules * (4 * model.hidden + layerActivationBytesPerToken(model, model.moe !== undefined) + 6 * model.vocab);
}
