// Frozen copy of src/model/memory.ts at commit da25fb5 (main before the enumeration perf work, after the pipeline-schedule
// change): the reference the equivalence test (test/candidates-equivalence.test.ts) and bench/enumeration-speed.ts compare against.
// The microbatches in flight are the cost model's current count, not a frozen one (see microbatchesInFlight), and
// stageMemory follows the memory physics of docs/cost-model.md §6 as it now stands (named terms), computed directly.
// training.fp8ParamGather is outside this copy (bf16 weights and sync bytes only): the equivalence test's
// scenarios do not set it, and test/fp8-param-gather.test.ts checks that path against exhaustive search instead.
/**
 * Memory per GPU of one pipeline stage: weights, gradients and optimizer state under ZeRO,
 * and activations by schedule and recomputation (docs/cost-model.md §5; Korthikanti et al. 2022).
 */
import { MEMORY_OVERHEAD, gradientBytesPerParam, optimizerStateBytesPerParam, microbatchesInFlight as currentMicrobatchesInFlight, ncclCommunicators, type StageMemory } from '../../src/model/memory';
import type { StageLayout } from './placement';
import type { PlanSpec } from '../../src/model/plan-schema';
import type { Scenario } from '../../src/model/scenario';
import { tokensPerGpu } from './stage-cost';
import {
  attentionParams, denseMlpParams, embeddingParams, fp8ActivationSavingBytesPerToken, fp8LinearParams, layerActivationBytesPerToken, moeMlpParams,
  recomputedActivationBytesPerToken, scoreBytesPerToken,
} from '../../src/model/transformer';
import { routedCopyInputBytesPerToken } from '../../src/model/routed-activations';
import { BF16_BYTES, BYTES_PER_GIB } from '../../src/model/units';

/** Parameters one GPU of a stage holds, split by how they are sharded. */
export interface StageParams {
  /** Parameters replicated over the full data-parallel group (dp x cp), per GPU (already / tp). */
  readonly dense: number;
  /** Routed-expert parameters per GPU (already / (tp x ep)); their data-parallel group is dp x cp / ep. */
  readonly expert: number;
}

export type { StageMemory } from '../../src/model/memory';

/** Parameters per GPU of a stage. */
export function stageParams(scenario: Scenario, plan: PlanSpec, stage: StageLayout): StageParams {
  const model = scenario.model;
  const denseLayers = stage.layers - stage.moeLayers;
  const norms = 4 * model.hidden;
  const moe = moeMlpParams(model);
  let dense = stage.layers * (attentionParams(model) + norms) + denseLayers * denseMlpParams(model) + stage.moeLayers * moe.replicated;
  if (stage.hasEmbedding) dense += embeddingParams(model);
  if (stage.hasOutputLayer && !(model.tiedEmbeddings && stage.hasEmbedding)) dense += embeddingParams(model);
  return { dense: dense / plan.tp, expert: (stage.moeLayers * moe.routed) / ((plan.expertTp ?? plan.tp) * plan.ep) };
}

/**
 * Microbatches whose activations a stage holds at its peak: not frozen, the cost model's own
 * count (src/model/memory.ts, from the schedules' op order), so that the equivalence test compares
 * the enumeration's tables against the same memory definition.
 */
export const microbatchesInFlight = (plan: PlanSpec, stageIndex: number, microbatches: number): number =>
  currentMicrobatchesInFlight(plan, stageIndex, microbatches);

/**
 * Memory per GPU of `stage` when each replica runs `microbatches` microbatches: every term
 * computed directly from the plan (no memory basis), in the cost model's order of operations.
 * The terms added since the freeze (the embedding and output layers' state as their own term, fp8
 * weight copies and activations, ZeRO-2's unsharded gradient, CUDA context, NCCL buffers,
 * fragmentation) follow docs/cost-model.md §6.
 */
export function stageMemory(scenario: Scenario, plan: PlanSpec, stage: StageLayout, microbatches: number): StageMemory {
  const { model, training } = scenario;
  const params = stageParams(scenario, plan, stage);
  let vocabParams = 0;
  if (stage.hasEmbedding) vocabParams += embeddingParams(model);
  if (stage.hasOutputLayer && !(model.tiedEmbeddings && stage.hasEmbedding)) vocabParams += embeddingParams(model);
  const vocab = vocabParams / plan.tp;
  const layerDense = params.dense - vocab;
  const denseShards = plan.dp * plan.cp;
  const expertShards = Math.max(1, (plan.tp * plan.cp * plan.dp) / (plan.ep * (plan.expertTp ?? plan.tp)));
  const sharded = (dense: number, expert: number, bytesPerParam: number, enabled: boolean) =>
    bytesPerParam * (dense / (enabled ? denseShards : 1) + expert / (enabled ? expertShards : 1));
  const layerParams = params.dense - vocab + params.expert;
  const gathered = plan.zero >= 3 ? 2 * BF16_BYTES * layerParams / Math.max(1, stage.layers) : 0;
  const gradientBytes = gradientBytesPerParam(scenario);
  const optimizerStateBytes = optimizerStateBytesPerParam(scenario, plan.zero);
  const unshardedGradient = plan.zero >= 2
    ? gradientBytes * Math.max(layerParams / Math.max(1, stage.layers), stage.hasEmbedding || stage.hasOutputLayer ? embeddingParams(model) / plan.tp : 0) : 0;
  const fp8 = training.precision === 'fp8';
  const denseLayers = stage.layers - stage.moeLayers;
  const fp8Dense = fp8 ? (denseLayers * fp8LinearParams(model, false).replicated + stage.moeLayers * fp8LinearParams(model, true).replicated) / plan.tp : 0;
  const fp8Expert = fp8 ? (stage.moeLayers * fp8LinearParams(model, true).routed) / ((plan.expertTp ?? plan.tp) * plan.ep) : 0;

  const tokens = tokensPerGpu(scenario, plan);
  const tp = plan.tp;
  const layerBytes = (moe: boolean) => layerActivationBytesPerToken(model, moe) - (fp8 ? fp8ActivationSavingBytesPerToken(model, moe) : 0);
  // Selective recomputation by module (docs/cost-model.md §6, added after the freeze); the default list is the attention core alone.
  const modules = plan.recompute === 'selective' ? plan.recomputeModules ?? ['core_attn'] : [];
  // Routed copies' grouped-GEMM inputs (docs/cost-model.md §6, added after the freeze).
  const keptBytes = (moe: boolean) => layerBytes(moe) - recomputedActivationBytesPerToken(model, moe, modules, fp8)
    + (moe ? routedCopyInputBytesPerToken(model, plan, modules, fp8) : 0);
  const perMicrobatchLayers = denseLayers * keptBytes(false) + stage.moeLayers * keptBytes(true);
  const scoresRecomputed = plan.recompute === 'full' || modules.includes('core_attn');
  const scoreBytes = training.flashAttention || scoresRecomputed ? 0 : scoreBytesPerToken(model, training.seqLen / plan.cp) * stage.layers;
  const inFlight = microbatchesInFlight(plan, stage.index, microbatches);
  let activations: number;
  if (plan.recompute === 'full') {
    // Only each layer's input is kept; one layer's full activations are rebuilt at a time.
    const oneLayer = Math.max(layerBytes(false), stage.moeLayers > 0 ? layerBytes(true) + routedCopyInputBytesPerToken(model, plan, [], fp8) : layerBytes(false));
    activations = (tokens / tp) * (inFlight * stage.layers * model.hidden * BF16_BYTES + oneLayer);
  } else {
    activations = (tokens / tp) * inFlight * (perMicrobatchLayers + scoreBytes);
  }
  const output = stage.hasOutputLayer ? (tokens / tp) * model.vocab * (4 + BF16_BYTES) : 0;
  const embedding = stage.hasEmbedding ? (tokens / tp) * model.hidden * BF16_BYTES : 0;
  if (output > 0) activations += output;
  if (embedding > 0) activations += embedding;

  const toGiB = (bytes: number) => bytes / BYTES_PER_GIB;
  const weightsGiB = toGiB(sharded(layerDense, params.expert, BF16_BYTES, plan.zero >= 3) + gathered);
  const gradientsGiB = toGiB(sharded(layerDense, params.expert, gradientBytes, plan.zero >= 2) + unshardedGradient);
  const optimizerGiB = toGiB(sharded(layerDense, params.expert, optimizerStateBytes, plan.zero >= 1));
  const fp8WeightCopiesGiB = toGiB(sharded(fp8Dense, fp8Expert, 2, false));
  const vocabStateGiB = toGiB(sharded(vocab, 0, BF16_BYTES, plan.zero >= 3) + sharded(vocab, 0, gradientBytes, plan.zero >= 2) + sharded(vocab, 0, optimizerStateBytes, plan.zero >= 1));
  const dynamicGiB = toGiB(activations);
  const ncclBuffersGiB = ncclCommunicators(scenario, plan, stage) * MEMORY_OVERHEAD.ncclBuffersGiBPerCommunicator;
  const vocabActivations = toGiB(output + embedding);
  return {
    weightsGiB,
    gradientsGiB,
    optimizerGiB,
    fp8WeightCopiesGiB,
    activationsGiB: dynamicGiB - vocabActivations,
    embeddingOutputGiB: vocabStateGiB + vocabActivations,
    cudaContextGiB: MEMORY_OVERHEAD.cudaContextGiB,
    ncclBuffersGiB,
    fragmentationGiB: dynamicGiB * MEMORY_OVERHEAD.fragmentationFraction,
    totalGiB: weightsGiB + gradientsGiB + optimizerGiB + fp8WeightCopiesGiB + vocabStateGiB
      + dynamicGiB * (1 + MEMORY_OVERHEAD.fragmentationFraction) + MEMORY_OVERHEAD.cudaContextGiB + ncclBuffersGiB,
  };
}
