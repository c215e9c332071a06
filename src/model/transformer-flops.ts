/**
 * FLOPs per token of a decoder-only transformer's layers, and per training iteration
 * (docs/cost-model.md §1; Narayanan et al. SC'21), with the GEMMs selective recomputation runs
 * again (§6).
 */
import type { RecomputeModule } from './plan-schema';
import { attentionMatrixParams, attentionWidths, denseMlpParams, expertParams, isMoeLayer, type TransformerModel as Model } from './transformer-params';

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
 * Share of a job's model FLOPs (causal) in the attention core, the score and context products:
 * the part of the time the fused attention kernel's efficiency sets. What the built-in
 * prediction interval classes jobs by (prediction-interval.ts, docs/cost-model.md §7).
 */
export function attentionCoreShare(model: Model, seqLen: number): number {
  const coreFlops = 3 * model.layers * attentionCoreFlopsPerToken(model, seqLen, true) * seqLen;
  return coreFlops / modelFlopsPerIteration(model, seqLen, 1, 'causal');
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

