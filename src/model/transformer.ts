/**
 * Per-layer quantities of a decoder-only transformer: parameters, FLOPs per token and
 * activation bytes. Formulas: docs/cost-model.md §1 (Narayanan et al. SC'21, Korthikanti et al. 2022).
 */
import type { ModelSpec } from './scenario-schema';

type Model = ModelSpec & { readonly kvHeads: number };

/** Whether layer `layerIndex` (0-based) has an MoE MLP. */
export const isMoeLayer = (model: Model, layerIndex: number): boolean =>
  model.moe !== undefined && layerIndex >= model.moe.denseLayers;

/** MLP matrices per FFN: SwiGLU has gate, up and down; GELU has up and down. */
const mlpMatrices = (model: Model): number => (model.mlp === 'swiglu' ? 3 : 2);

/** Attention parameters of one layer: Q and output h x h, K and V h x (h*g/a). */
export function attentionParams(model: Model): number {
  const kvWidth = (model.hidden * model.kvHeads) / model.heads;
  return 2 * model.hidden * model.hidden + 2 * model.hidden * kvWidth;
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

/** Total parameters (counting tied embeddings once). */
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
  return total + embeddingParams(model) * (model.tiedEmbeddings ? 1 : 2);
}

/** Forward FLOPs per token of one layer's attention projections (QKV and output). */
export const attentionProjectionFlopsPerToken = (model: Model): number => 2 * attentionParams(model);

/**
 * Forward FLOPs per token of the attention scores and context (QK^T and AV): 4*s*h for the
 * full square; `causalOnly` halves it (what a causal fused kernel executes).
 */
export const attentionCoreFlopsPerToken = (model: Model, seqLen: number, causalOnly: boolean): number =>
  (4 * seqLen * model.hidden) / (causalOnly ? 2 : 1);

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
  const kvWidth = (h * model.kvHeads) / model.heads;
  const ffnWidth = moeLayer && model.moe ? model.moe.expertFfnHidden : model.ffnHidden;
  const activeFfns = moeLayer && model.moe ? model.moe.topK + model.moe.sharedExperts : 1;
  const fc1Outputs = (model.mlp === 'swiglu' ? 2 : 1) * ffnWidth;
  const forward = h + h + activeFfns * (h + ffnWidth);
  const backward = (h + 2 * kvWidth) + h + activeFfns * (fc1Outputs + h);
  return forward + backward;
}

/** Forward FLOPs per token of the output (logits) layer. */
export const logitFlopsPerToken = (model: Model): number => 2 * model.hidden * model.vocab;

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
  const kvFraction = model.kvHeads / model.heads;
  const dropoutMaskBytes = model.dropout ? 1 : 0;
  // LayerNorm inputs (2 x 2 bytes), QKV input (2), Q (2), K and V (4 x g/a), attention output (2), masks.
  const attention = 2 + 2 + 4 * kvFraction + 2 + dropoutMaskBytes;
  const norms = 4;
  const mlpWidth = moeLayer && model.moe ? model.moe.expertFfnHidden : model.ffnHidden;
  // MLP input (2) and mask, plus for each active FFN: matrices' outputs (2 bytes each) and the activation output.
  const perFfn = ((model.mlp === 'swiglu' ? 6 : 4) * mlpWidth) / h;
  const activeFfns = moeLayer && model.moe ? model.moe.topK + model.moe.sharedExperts : 1;
  const mlp = 2 + dropoutMaskBytes + activeFfns * perFfn;
  return h * (attention + norms + mlp);
}

/** Bytes per token of the stored attention score matrices (softmax, dropout): 5*a*s/h * h, or 3*a*s without dropout. */
export const scoreBytesPerToken = (model: Model, seqLen: number): number =>
  (model.dropout ? 5 : 2) * model.heads * seqLen;
