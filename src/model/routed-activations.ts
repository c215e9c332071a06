/**
 * Activations a MoE layer keeps for each routed copy of a token beyond the experts' FFN internals
 * (docs/cost-model.md §6, "Routed copies").
 */
import { expertTpOf, type PlanSpec, type RecomputeModule } from './plan-schema';
import type { ModelSpec } from './scenario-schema';

/**
 * Bytes per token (before dividing by tp, like every activation term) one MoE layer keeps for its
 * routed experts' grouped-GEMM inputs: each of a token's `topK` dispatched copies is FC1's input,
 * which the grouped GEMM keeps for its weight gradient (Megatron-Core `TEGroupedMLP`, Transformer
 * Engine `GroupedLinear` saves its inputs). The dispatcher gathers the tokens over the expert
 * tensor-parallel ranks, each of which holds every copy whole (`h` wide, FC1's columns are what
 * they split), so over the tp ranks that share a microbatch's tokens the copies are held `t_e`
 * times: `topK x h x t_e` elements per token. bf16 (2 bytes), or in fp8 training the fp8 copy the
 * grouped GEMM quantised (1 byte, its column-wise copy for the weight gradient, as for every fp8
 * GEMM input; the routed experts run fp8 under MLA too). The routing probabilities are applied inside the activation function
 * (Megatron-Core's weighted SwiGLU), so the experts' outputs are not kept. Recomputing the MoE
 * layer (`moe`, or full recomputation's rebuilt layer aside) drops them.
 */
export function routedCopyInputBytesPerToken(
  model: ModelSpec, plan: Pick<PlanSpec, 'tp' | 'expertTp'>, modules: readonly RecomputeModule[], fp8: boolean,
): number {
  if (!model.moe || modules.includes('moe')) return 0;
  const inputBytes = fp8 ? 1 : 2;
  return model.moe.topK * model.hidden * inputBytes * expertTpOf(plan);
}
