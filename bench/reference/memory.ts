// Frozen copy of src/model/memory.ts at commit da25fb5 (main before the enumeration perf work, after the pipeline-schedule
// change): the reference the equivalence test (test/candidates-equivalence.test.ts) and bench/enumeration-speed.ts compare against.
// The microbatches in flight are the cost model's current count, not a frozen one (see microbatchesInFlight).
/**
 * Memory per GPU of one pipeline stage: weights, gradients and optimizer state under ZeRO,
 * and activations by schedule and recomputation (docs/cost-model.md §5; Korthikanti et al. 2022).
 */
import { CALIBRATION } from '../../src/model/calibration-constants';
import { microbatchesInFlight as currentMicrobatchesInFlight } from '../../src/model/memory';
import type { StageLayout } from './placement';
import type { PlanSpec } from '../../src/model/plan-schema';
import type { Scenario } from '../../src/model/scenario';
import { tokensPerGpu } from './stage-cost';
import {
  attentionParams, denseMlpParams, embeddingParams, layerActivationBytesPerToken, moeMlpParams, scoreBytesPerToken,
} from '../../src/model/transformer';
import { BF16_BYTES, BYTES_PER_GIB } from '../../src/model/units';

/** Parameters one GPU of a stage holds, split by how they are sharded. */
export interface StageParams {
  /** Parameters replicated over the full data-parallel group (dp x cp), per GPU (already / tp). */
  readonly dense: number;
  /** Routed-expert parameters per GPU (already / (tp x ep)); their data-parallel group is dp x cp / ep. */
  readonly expert: number;
}

export interface StageMemory {
  readonly weightsGiB: number;
  readonly gradientsGiB: number;
  readonly optimizerGiB: number;
  readonly activationsGiB: number;
  readonly reservedGiB: number;
  readonly totalGiB: number;
}

/** Parameters per GPU of a stage. */
export function stageParams(scenario: Scenario, plan: PlanSpec, stage: StageLayout): StageParams {
  const model = scenario.model;
  const denseLayers = stage.layers - stage.moeLayers;
  const norms = 4 * model.hidden;
  const moe = moeMlpParams(model);
  let dense = stage.layers * (attentionParams(model) + norms) + denseLayers * denseMlpParams(model) + stage.moeLayers * moe.replicated;
  if (stage.hasEmbedding) dense += embeddingParams(model);
  if (stage.hasOutputLayer && !(model.tiedEmbeddings && stage.hasEmbedding)) dense += embeddingParams(model);
  return { dense: dense / plan.tp, expert: (stage.moeLayers * moe.routed) / (plan.tp * plan.ep) };
}

/**
 * Microbatches whose activations a stage holds at its peak: not frozen, the cost model's own
 * count (src/model/memory.ts, from the schedules' op order), so that the equivalence test compares
 * the enumeration's tables against the same memory definition.
 */
export const microbatchesInFlight = (plan: PlanSpec, stageIndex: number, microbatches: number): number =>
  currentMicrobatchesInFlight(plan, stageIndex, microbatches);

/** Memory per GPU of `stage` when each replica runs `microbatches` microbatches. */
export function stageMemory(scenario: Scenario, plan: PlanSpec, stage: StageLayout, microbatches: number): StageMemory {
  const { model, training } = scenario;
  const params = stageParams(scenario, plan, stage);
  const denseShards = plan.dp * plan.cp;
  const expertShards = Math.max(1, denseShards / plan.ep);
  const sharded = (bytesPerParam: number, enabled: boolean) =>
    bytesPerParam * (params.dense / (enabled ? denseShards : 1) + params.expert / (enabled ? expertShards : 1));
  const weights = sharded(BF16_BYTES, plan.zero >= 3);
  const gradients = sharded(4, plan.zero >= 2);
  const optimizer = sharded(12, plan.zero >= 1);

  const tokens = tokensPerGpu(scenario, plan);
  const tp = plan.tp;
  const denseLayers = stage.layers - stage.moeLayers;
  const perMicrobatchLayers = denseLayers * layerActivationBytesPerToken(model, false) + stage.moeLayers * layerActivationBytesPerToken(model, true);
  const scoreBytes = training.flashAttention || plan.recompute !== 'none' ? 0 : scoreBytesPerToken(model, training.seqLen / plan.cp) * stage.layers;
  const inFlight = microbatchesInFlight(plan, stage.index, microbatches);
  let activations: number;
  if (plan.recompute === 'full') {
    // Only each layer's input is kept; one layer's full activations are rebuilt at a time.
    const oneLayer = Math.max(layerActivationBytesPerToken(model, false), layerActivationBytesPerToken(model, stage.moeLayers > 0));
    activations = (tokens / tp) * (inFlight * stage.layers * model.hidden * BF16_BYTES + oneLayer);
  } else {
    activations = (tokens / tp) * inFlight * (perMicrobatchLayers + scoreBytes);
  }
  if (stage.hasOutputLayer) activations += (tokens / tp) * model.vocab * (4 + BF16_BYTES);
  if (stage.hasEmbedding) activations += (tokens / tp) * model.hidden * BF16_BYTES;
  if (plan.zero >= 3) {
    // Gathered working copy of the largest layer's weights, forward and backward prefetch.
    activations += 2 * BF16_BYTES * (params.dense + params.expert) / Math.max(1, stage.layers);
  }

  const toGiB = (bytes: number) => bytes / BYTES_PER_GIB;
  const parts = {
    weightsGiB: toGiB(weights),
    gradientsGiB: toGiB(gradients),
    optimizerGiB: toGiB(optimizer),
    activationsGiB: toGiB(activations),
    reservedGiB: CALIBRATION.reservedMemoryGiB,
  };
  return { ...parts, totalGiB: parts.weightsGiB + parts.gradientsGiB + parts.optimizerGiB + parts.activationsGiB + parts.reservedGiB };
}
