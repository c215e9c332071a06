/**
 * Activation bytes per token a decoder-only transformer's layers store for backward, what fp8
 * and selective recomputation change in them, and the kernels recomputation runs again
 * (docs/cost-model.md §1, §6; Korthikanti et al. 2022).
 */
import type { RecomputeModule } from './plan-schema';
import { attentionWidths, type TransformerModel as Model } from './transformer-params';
import { BF16_BYTES } from './units';

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
