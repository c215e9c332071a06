/**
 * Memory per GPU of one pipeline stage: weights, gradients and optimizer state under ZeRO,
 * and activations by schedule and recomputation (docs/cost-model.md §6; Korthikanti et al. 2022).
 */
import { CALIBRATION } from './calibration-constants';
import type { StageLayout } from './placement';
import type { PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import { microbatchesHeld } from './schedule-order';
import { tokensPerGpu } from './stage-cost';
import {
  attentionParams, denseMlpParams, embeddingParams, layerActivationBytesPerToken, moeMlpParams, mtpActivationBytesPerToken, mtpParams,
  scoreBytesPerToken,
} from './transformer';
import { BF16_BYTES, BYTES_PER_GIB } from './units';

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

/** Parameters per GPU of a stage (tp and ep are the only plan fields they depend on). */
export function stageParams(scenario: Scenario, plan: Pick<PlanSpec, 'tp' | 'ep'>, stage: StageLayout): StageParams {
  const model = scenario.model;
  const denseLayers = stage.layers - stage.moeLayers;
  const norms = 4 * model.hidden;
  const moe = moeMlpParams(model);
  let dense = stage.layers * (attentionParams(model) + norms) + denseLayers * denseMlpParams(model) + stage.moeLayers * moe.replicated;
  if (stage.hasEmbedding) dense += embeddingParams(model);
  if (stage.hasOutputLayer && !(model.tiedEmbeddings && stage.hasEmbedding)) dense += embeddingParams(model);
  // Multi-token prediction modules sit with the output head they share (DeepSeek-V3 §3.2.1).
  const mtp = stage.hasOutputLayer ? mtpParams(model) : { routed: 0, replicated: 0 };
  return { dense: (dense + mtp.replicated) / plan.tp, expert: (stage.moeLayers * moe.routed + mtp.routed) / (plan.tp * plan.ep) };
}

/**
 * Microbatches whose activations stage `stageIndex` holds at its peak, from the op order the
 * timeline simulates (schedule-order.ts): GPipe all m, 1F1B p - j, ZB-H1 p on every stage (its
 * deferred weight-gradient passes keep j microbatches' inputs past their backward), the
 * interleaved schedule (2(p-j-1) + (v-1)N + 1) / v (Megatron's warm-up plus one, N its
 * microbatch group size); at most m, at least one.
 */
export function microbatchesInFlight(plan: Pick<PlanSpec, 'pp' | 'virtualStages' | 'schedule'>, stageIndex: number, microbatches: number): number {
  const held = microbatchesHeld(plan.schedule, stageIndex, plan.pp, plan.virtualStages, Math.ceil(microbatches));
  return Math.max(1, held);
}

/** The plan fields a stage's memory basis depends on (not dp, the schedule or the microbatch count). */
export type MemoryBasisPlan = Pick<PlanSpec, 'tp' | 'cp' | 'ep' | 'microBatchSeqs' | 'recompute' | 'zero'>;

/** The plan fields that shard a stage's weights, gradients and optimizer state. */
export type ShardingPlan = Pick<PlanSpec, 'dp' | 'cp' | 'ep' | 'zero'>;

/**
 * What a stage's memory per GPU is made of apart from the data-parallel degree and the
 * microbatches in flight: its parameters, and its activation bytes per microbatch held. The
 * planner computes it once per (configuration, stage) and then prices every dp and
 * microbatch count with {@link activationsGiB} and {@link stageMemoryTotalGiB}.
 */
export interface StageMemoryBasis {
  readonly params: StageParams;
  readonly zero: PlanSpec['zero'];
  readonly fullRecompute: boolean;
  /** Tokens per GPU per microbatch over tp: every activation term is per tensor-parallel rank. */
  readonly tokensPerTpRank: number;
  readonly layers: number;
  readonly hidden: number;
  /** Bytes per token of one microbatch's stored layer activations (no full recomputation). */
  readonly layerBytesPerToken: number;
  /** Bytes per token of the one layer rebuilt at a time under full recomputation. */
  readonly rebuiltLayerBytesPerToken: number;
  /** Logits and their gradient (last stage), bytes; 0 elsewhere. */
  readonly outputBytes: number;
  /** Embedding output (first stage), bytes; 0 elsewhere. */
  readonly embeddingBytes: number;
  /** ZeRO-3's gathered working copy of the largest layer, forward and backward prefetch, bytes; 0 below ZeRO-3. */
  readonly gatheredWeightsBytes: number;
}

export function stageMemoryBasis(scenario: Scenario, plan: MemoryBasisPlan, stage: StageLayout): StageMemoryBasis {
  const { model, training } = scenario;
  const params = stageParams(scenario, plan, stage);
  const tokensPerTpRank = tokensPerGpu(scenario, plan) / plan.tp;
  const denseLayers = stage.layers - stage.moeLayers;
  const perMicrobatchLayers = denseLayers * layerActivationBytesPerToken(model, false) + stage.moeLayers * layerActivationBytesPerToken(model, true);
  const scoreBytes = training.flashAttention || plan.recompute !== 'none' ? 0 : scoreBytesPerToken(model, training.seqLen / plan.cp) * stage.layers;
  return {
    params,
    zero: plan.zero,
    fullRecompute: plan.recompute === 'full',
    tokensPerTpRank,
    layers: stage.layers,
    hidden: model.hidden,
    layerBytesPerToken: perMicrobatchLayers + scoreBytes,
    rebuiltLayerBytesPerToken: Math.max(layerActivationBytesPerToken(model, false), layerActivationBytesPerToken(model, stage.moeLayers > 0)),
    outputBytes: stage.hasOutputLayer ? tokensPerTpRank * model.vocab * (4 + BF16_BYTES) + tokensPerTpRank * mtpActivationBytesPerToken(model) : 0,
    embeddingBytes: stage.hasEmbedding ? tokensPerTpRank * model.hidden * BF16_BYTES : 0,
    // Gathered working copy of the largest layer's weights, forward and backward prefetch.
    gatheredWeightsBytes: plan.zero >= 3 ? 2 * BF16_BYTES * (params.dense + params.expert) / Math.max(1, stage.layers) : 0,
  };
}

const toGiB = (bytes: number) => bytes / BYTES_PER_GIB;

/** Activation memory per GPU, GiB, with `inFlight` microbatches held (see {@link microbatchesInFlight}). */
export function activationsGiB(basis: StageMemoryBasis, inFlight: number): number {
  let activations: number;
  if (basis.fullRecompute) {
    // Only each layer's input is kept; one layer's full activations are rebuilt at a time.
    activations = basis.tokensPerTpRank * (inFlight * basis.layers * basis.hidden * BF16_BYTES + basis.rebuiltLayerBytesPerToken);
  } else {
    activations = basis.tokensPerTpRank * inFlight * basis.layerBytesPerToken;
  }
  if (basis.outputBytes > 0) activations += basis.outputBytes;
  if (basis.embeddingBytes > 0) activations += basis.embeddingBytes;
  if (basis.gatheredWeightsBytes > 0) activations += basis.gatheredWeightsBytes;
  return toGiB(activations);
}

/** Bytes per GPU of one kind of per-parameter state, sharded over the data-parallel ranks when `sharded`. */
function stateBytes(params: StageParams, plan: ShardingPlan, bytesPerParam: number, sharded: boolean): number {
  const denseShards = plan.dp * plan.cp;
  const expertShards = Math.max(1, denseShards / plan.ep);
  return bytesPerParam * (params.dense / (sharded ? denseShards : 1) + params.expert / (sharded ? expertShards : 1));
}

const weightsGiB = (basis: StageMemoryBasis, plan: ShardingPlan) => toGiB(stateBytes(basis.params, plan, BF16_BYTES, basis.zero >= 3));
const gradientsGiB = (basis: StageMemoryBasis, plan: ShardingPlan) => toGiB(stateBytes(basis.params, plan, 4, basis.zero >= 2));
const optimizerGiB = (basis: StageMemoryBasis, plan: ShardingPlan) => toGiB(stateBytes(basis.params, plan, 12, basis.zero >= 1));

/** The total of a memory breakdown, GiB (one sum, in one order, for both functions below). */
const totalGiB = (weights: number, gradients: number, optimizer: number, activations: number): number =>
  weights + gradients + optimizer + activations + CALIBRATION.reservedMemoryGiB;

/** Total memory per GPU, GiB: {@link stageMemory}'s `totalGiB` without building the breakdown. */
export function stageMemoryTotalGiB(basis: StageMemoryBasis, plan: ShardingPlan, activations: number): number {
  return totalGiB(weightsGiB(basis, plan), gradientsGiB(basis, plan), optimizerGiB(basis, plan), activations);
}

/** Memory per GPU of `stage` when each replica runs `microbatches` microbatches. */
export function stageMemory(scenario: Scenario, plan: PlanSpec, stage: StageLayout, microbatches: number): StageMemory {
  const basis = stageMemoryBasis(scenario, plan, stage);
  const parts = {
    weightsGiB: weightsGiB(basis, plan),
    gradientsGiB: gradientsGiB(basis, plan),
    optimizerGiB: optimizerGiB(basis, plan),
    activationsGiB: activationsGiB(basis, microbatchesInFlight(plan, stage.index, microbatches)),
    reservedGiB: CALIBRATION.reservedMemoryGiB,
  };
  return { ...parts, totalGiB: totalGiB(parts.weightsGiB, parts.gradientsGiB, parts.optimizerGiB, parts.activationsGiB) };
}
