/**
 * Parameters of a decoder-only transformer, per layer and in total, and the linear weights fp8
 * training holds twice (docs/cost-model.md §1, §6; Narayanan et al. SC'21).
 */
import type { ModelSpec } from './scenario-schema';

/** The model as the formulas read it: its spec with the key/value head count resolved. */
export type TransformerModel = ModelSpec & { readonly kvHeads: number };
type Model = TransformerModel;

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
export function attentionMatrixParams(model: Model): number {
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
