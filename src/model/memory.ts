/**
 * Memory per GPU of one pipeline stage, by named term: weights, fp32 main gradients and optimizer
 * state under ZeRO, fp8 weight copies, activations by schedule and recomputation, the embedding
 * and output layers, CUDA context, NCCL buffers and a fragmentation allowance
 * (docs/cost-model.md §6; Korthikanti et al. 2022).
 */
import type { StageLayout } from './placement';
import { expertDataParallel, expertTpOf, recomputeModulesOf, type PlanSpec, type RecomputeModule } from './plan-schema';
import type { Scenario } from './scenario';
import { routedCopyInputBytesPerToken } from './routed-activations';
import { microbatchesHeld } from './schedule-order';
import { tokensPerGpu } from './stage-cost';
import { fp8ActivationSavingBytesPerToken, layerActivationBytesPerToken, mtpActivationBytesPerToken, recomputedActivationBytesPerToken, scoreBytesPerToken } from './transformer-activations';
import { attentionParams, denseMlpParams, embeddingParams, fp8LinearParams, moeMlpParams, mtpParams } from './transformer-params';
import { BF16_BYTES, BYTES_PER_GIB, FP8_BYTES } from './units';

/** Parameters one GPU of a stage holds, split by how they are sharded. */
export interface StageParams {
  /** Parameters replicated over the full data-parallel group (dp x cp), per GPU (already / tp). */
  readonly dense: number;
  /** Routed-expert parameters per GPU (already / (tp x ep)); their data-parallel group is dp x cp / ep. */
  readonly expert: number;
  /** The part of `dense` that is the embedding and output matrices (vocab x hidden / tp each). */
  readonly vocab: number;
}

/**
 * Memory per GPU of one stage, by term (docs/cost-model.md §6). The model state of the
 * transformer layers (weights, gradients, optimizer) and of the embedding and output layers are
 * separate terms; the parts add up to `totalGiB` (up to rounding).
 */
export interface StageMemory {
  /** bf16 weights of the stage's transformer layers (and multi-token prediction modules), without the linear layers' under fp8 parameter gather; ZeRO-3: sharded, plus the gathered layer in use. */
  readonly weightsGiB: number;
  /** Gradients of those weights: fp32 main gradients (4 bytes per parameter) or a bf16 buffer (2, training.gradientDtype); ZeRO-2 and 3: sharded, plus one layer's unsharded gradient before its reduce-scatter. */
  readonly gradientsGiB: number;
  /** Master weights and Adam moments (12 bytes per parameter, 8 with bf16 moments: training.optimizerMomentsDtype, less without an fp32 master copy: training.masterWeights), sharded over data parallelism from ZeRO-1 (Megatron's distributed optimizer). */
  readonly optimizerGiB: number;
  /** fp8 training: the fp8 weight and its transpose that Transformer Engine keeps for every linear layer (2 bytes per parameter); under fp8 parameter gather the only copy of those weights. */
  readonly fp8WeightCopiesGiB: number;
  /** Activations the transformer layers keep for backward, by schedule (microbatches in flight) and recomputation. */
  readonly activationsGiB: number;
  /** The embedding and output layers on the stages that hold them: their weights, gradients and optimizer state, the embedding output and the logits. */
  readonly embeddingOutputGiB: number;
  /** CUDA context, loaded kernels and library workspaces of the process. */
  readonly cudaContextGiB: number;
  /** NCCL's buffers, per communicator the stage's ranks use. */
  readonly ncclBuffersGiB: number;
  /** Allowance for the caching allocator's fragmentation of the memory allocated and freed during the iteration. */
  readonly fragmentationGiB: number;
  readonly totalGiB: number;
}

/**
 * What a GPU holds besides the model and its activations (docs/cost-model.md §6), set by hand
 * from the sources given there, not fitted.
 */
export const MEMORY_OVERHEAD = {
  /** CUDA context with the framework's kernels loaded, cuBLAS and Transformer Engine workspaces, per process, GiB. */
  cudaContextGiB: 1,
  /** NCCL buffers of one communicator (ring and tree connections, Simple + LL128 + LL buffers per channel per peer), GiB. */
  ncclBuffersGiBPerCommunicator: 0.5,
  /** Fragmentation allowance: fraction of the memory allocated and freed within the iteration (activations, embedding output, logits). */
  fragmentationFraction: 0.05,
} as const;

/** Parameters per GPU of a stage (tp and ep are the only plan fields they depend on). */
export function stageParams(scenario: Scenario, plan: Pick<PlanSpec, 'tp' | 'ep' | 'expertTp'>, stage: StageLayout): StageParams {
  const model = scenario.model;
  const denseLayers = stage.layers - stage.moeLayers;
  const norms = 4 * model.hidden;
  const moe = moeMlpParams(model);
  let dense = stage.layers * (attentionParams(model) + norms) + denseLayers * denseMlpParams(model) + stage.moeLayers * moe.replicated;
  let vocab = 0;
  if (stage.hasEmbedding) vocab += embeddingParams(model);
  if (stage.hasOutputLayer && !(model.tiedEmbeddings && stage.hasEmbedding)) vocab += embeddingParams(model);
  dense += vocab;
  // Multi-token prediction modules sit with the output head they share (DeepSeek-V3 §3.2.1).
  const mtp = stage.hasOutputLayer ? mtpParams(model) : { routed: 0, replicated: 0 };
  return { dense: (dense + mtp.replicated) / plan.tp, expert: (stage.moeLayers * moe.routed + mtp.routed) / (expertTpOf(plan) * plan.ep), vocab: vocab / plan.tp };
}

/** Linear-layer parameters per GPU with fp8 copies, split like {@link StageParams}. */
export interface Fp8Params { readonly dense: number; readonly expert: number }
const NO_FP8_PARAMS: Fp8Params = { dense: 0, expert: 0 };

/**
 * Linear-layer parameters per GPU of a stage that fp8 training also keeps as fp8 copies (weight
 * and transpose), split like {@link StageParams}: 0 unless training.precision is fp8.
 */
export function fp8CopiedParams(scenario: Scenario, plan: Pick<PlanSpec, 'tp' | 'ep' | 'expertTp'>, stage: StageLayout): Fp8Params {
  if (scenario.training.precision !== 'fp8') return NO_FP8_PARAMS;
  const model = scenario.model;
  const dense = fp8LinearParams(model, false);
  const moe = fp8LinearParams(model, true);
  const denseLayers = stage.layers - stage.moeLayers;
  return {
    dense: (denseLayers * dense.replicated + stage.moeLayers * moe.replicated) / plan.tp,
    expert: (stage.moeLayers * moe.routed) / (expertTpOf(plan) * plan.ep),
  };
}

/**
 * Bytes per GPU of each half of a stage's data-parallel sync as the cost model times it (a
 * reduce-scatter and an all-gather of this many bytes each, docs/cost-model.md §3): gradients
 * reduced in bf16, parameters gathered in bf16, or at 1 byte for the linear layers' fp8 weights
 * under fp8 parameter gather (`gatheredInFp8`: those weights, absent without it), the two halves
 * then timed at their mean size. The evaluator (data-parallel-sync.ts) and the planner's
 * coefficients (coefficients.ts) both take it from here.
 */
export function syncBytesPerGpu(params: StageParams, gatheredInFp8?: Fp8Params): number {
  const fp8Count = gatheredInFp8 ? gatheredInFp8.dense + gatheredInFp8.expert : 0;
  return BF16_BYTES * (params.dense + params.expert) - ((BF16_BYTES - FP8_BYTES) * fp8Count) / 2;
}

/**
 * Whether the linear layers' weights live only in fp8 and are gathered in fp8 (training.fp8ParamGather,
 * Megatron-LM --fp8-param-gather): fp8 training with ZeRO >= 1 (the distributed optimizer or
 * FSDP holds the fp32 master weights it needs; with ZeRO 0 Megatron-LM refuses it).
 */
export const gathersParamsInFp8 = (scenario: Scenario, plan: Pick<PlanSpec, 'zero'>): boolean =>
  scenario.training.precision === 'fp8' && scenario.training.fp8ParamGather === true && plan.zero >= 1;

/**
 * NCCL communicators a stage's GPUs use: tensor, context and expert parallelism when their
 * degree exceeds 1, the pipeline's point-to-point when there is more than one stage, the
 * data-parallel group always (counted at dp = 1 too, so that memory never grows with dp), and
 * Transformer Engine's amax reduction in fp8.
 */
export function ncclCommunicators(scenario: Scenario, plan: Pick<PlanSpec, 'tp' | 'cp' | 'ep'>, stage: StageLayout): number {
  const pipeline = (stage.pipelinePeers ?? !(stage.hasEmbedding && stage.hasOutputLayer)) ? 1 : 0;
  return (plan.tp > 1 ? 1 : 0) + (plan.cp > 1 ? 1 : 0) + (plan.ep > 1 ? 1 : 0) + pipeline + 1 + (scenario.training.precision === 'fp8' ? 1 : 0);
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
export type MemoryBasisPlan = Pick<PlanSpec, 'tp' | 'cp' | 'ep' | 'expertTp' | 'microBatchSeqs' | 'recompute' | 'recomputeModules' | 'zero'>;

/** The plan fields that shard a stage's weights, gradients and optimizer state. */
export type ShardingPlan = Pick<PlanSpec, 'tp' | 'dp' | 'cp' | 'ep' | 'expertTp' | 'zero'>;

/**
 * What a stage's memory per GPU is made of apart from the data-parallel degree and the
 * microbatches in flight: its parameters, and its activation bytes per microbatch held. The
 * planner computes it once per (configuration, stage) and then prices every dp and
 * microbatch count with {@link activationsGiB} and {@link stageMemoryTotalGiB}.
 */
export interface StageMemoryBasis {
  readonly params: StageParams;
  /** Linear-layer parameters with fp8 copies (0 without fp8). */
  readonly fp8Params: Fp8Params;
  /** Those parameters keep no bf16 copy (fp8 parameter gather, {@link gathersParamsInFp8}). */
  readonly fp8OnlyWeights: boolean;
  /** ZeRO-2 and 3: bytes of the largest tensor group reduced at once (one layer's, or the embedding/output matrix's, fp32 gradient), held unsharded until its reduce-scatter; 0 below ZeRO-2. */
  /** Bytes per parameter of the gradient buffer (training.gradientDtype). */
  readonly gradientBytesPerParam: number;
  /** Bytes per parameter of the optimizer state: the master weight (training.masterWeights) and Adam's two moments (training.optimizerMomentsDtype). */
  readonly optimizerStateBytesPerParam: number;
  readonly unshardedGradientBytes: number;
  /** NCCL communicators the stage's GPUs use ({@link ncclCommunicators}). */
  readonly communicators: number;
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

/** Bytes per parameter of the gradient buffer: fp32 main gradients (4) or bf16 (2), training.gradientDtype. */
export const gradientBytesPerParam = (scenario: Scenario): number => (scenario.training.gradientDtype === 'bf16' ? BF16_BYTES : 4);

const MASTER_WEIGHT_BYTES: Readonly<Record<Scenario['training']['masterWeights'], number>> = { fp32: 4, remainders: 2, none: 0 };
/** An fp32 master copy: what Megatron-LM and torchtitan keep of every weight, and every optimizer at ZeRO 0. */
export const FP32_MASTER_BYTES = MASTER_WEIGHT_BYTES.fp32;

/** Bytes per parameter the optimizer keeps of the master weight (training.masterWeights), from ZeRO 1: fp32 4, remainders 2, none 0; fp32 at ZeRO 0. */
export const masterWeightBytesPerParam = (scenario: Scenario, zero: PlanSpec['zero']): number =>
  (zero >= 1 ? MASTER_WEIGHT_BYTES[scenario.training.masterWeights] : FP32_MASTER_BYTES);

/**
 * Bytes per parameter of the optimizer state: the master weight (4 in fp32, 2 as remainders
 * beside the bf16 weight, 0 when the bf16 weight is the master: training.masterWeights) and
 * Adam's `m` and `v`, 4 bytes each in fp32 or 2 in bf16 (training.optimizerMomentsDtype): 12 by
 * default, 8 with bf16 moments, 4 with bf16 moments and no master. Both need ZeRO >= 1 (Megatron-LM's
 * precision-aware optimizer and Apex's DistributedFusedAdam are distributed optimizers); with
 * ZeRO 0 the state stays fp32, as fp8 parameter gather changes nothing there.
 */
export const optimizerStateBytesPerParam = (scenario: Scenario, zero: PlanSpec['zero']): number =>
  masterWeightBytesPerParam(scenario, zero)
  + 2 * (scenario.training.optimizerMomentsDtype === 'bf16' && zero >= 1 ? BF16_BYTES : 4);

/**
 * HBM bytes the Adam step moves per parameter a GPU owns: it reads and writes the optimizer
 * state (the master weight, `m` and `v`: 24, or 16 with bf16 moments, less by twice the master
 * bytes training.masterWeights saves, which then also reads the bf16 weight, 2), reads the gradient
 * and writes the bf16 weight (2), and the gradient buffer is zeroed for the next iteration: 34
 * with fp32 main gradients and moments, 30 with a bf16 gradient buffer (training.gradientDtype),
 * 8 less with bf16 moments. Weights kept in fp8 (training.fp8ParamGather) write 1 byte instead of
 * 2 for the linear layers; not counted (at most 1 byte in 30 of this step, which is 0.07-0.10% of
 * the iteration on the three calibration rows that set the flag).
 */
export const optimizerBytesPerParam = (scenario: Scenario, zero: PlanSpec['zero']): number =>
  2 * optimizerStateBytesPerParam(scenario, zero) + BF16_BYTES
  // Without a full fp32 master the bf16 weight holds the weight's value (its high bits with remainders, all of it with none): read too.
  + (masterWeightBytesPerParam(scenario, zero) < FP32_MASTER_BYTES ? BF16_BYTES : 0) + 2 * gradientBytesPerParam(scenario);

export function stageMemoryBasis(scenario: Scenario, plan: MemoryBasisPlan, stage: StageLayout): StageMemoryBasis {
  const { model, training } = scenario;
  const params = stageParams(scenario, plan, stage);
  const tokensPerTpRank = tokensPerGpu(scenario, plan) / plan.tp;
  const denseLayers = stage.layers - stage.moeLayers;
  // fp8 keeps the GEMM inputs it quantised instead of their bf16 copies (transformer.ts).
  const fp8 = training.precision === 'fp8';
  const layerBytes = (moe: boolean) => layerActivationBytesPerToken(model, moe) - (fp8 ? fp8ActivationSavingBytesPerToken(model, moe) : 0);
  // Selective recomputation drops each recomputed module's activations (transformer.ts; 0 for the attention core alone).
  const modules = recomputeModulesOf(plan);
  // A MoE layer also keeps its routed copies' grouped-GEMM inputs (routed-activations.ts).
  const routedInputs = (kept: readonly RecomputeModule[]) => routedCopyInputBytesPerToken(model, plan, kept, fp8);
  const keptBytes = (moe: boolean) => layerBytes(moe) - recomputedActivationBytesPerToken(model, moe, modules, fp8) + (moe ? routedInputs(modules) : 0);
  const perMicrobatchLayers = denseLayers * keptBytes(false) + stage.moeLayers * keptBytes(true);
  const layerParams = params.dense - params.vocab + params.expert;
  const scoresRecomputed = plan.recompute === 'full' || modules.includes('core_attn');
  const scoreBytes = training.flashAttention || scoresRecomputed ? 0 : scoreBytesPerToken(model, training.seqLen / plan.cp) * stage.layers;
  return {
    params,
    fp8Params: fp8CopiedParams(scenario, plan, stage),
    fp8OnlyWeights: gathersParamsInFp8(scenario, plan),
    gradientBytesPerParam: gradientBytesPerParam(scenario),
    optimizerStateBytesPerParam: optimizerStateBytesPerParam(scenario, plan.zero),
    unshardedGradientBytes: plan.zero >= 2 ? gradientBytesPerParam(scenario) * Math.max(layerParams / Math.max(1, stage.layers), stage.hasEmbedding || stage.hasOutputLayer ? embeddingParams(model) / plan.tp : 0) : 0,
    communicators: ncclCommunicators(scenario, plan, stage),
    zero: plan.zero,
    fullRecompute: plan.recompute === 'full',
    tokensPerTpRank,
    layers: stage.layers,
    hidden: model.hidden,
    layerBytesPerToken: perMicrobatchLayers + scoreBytes,
    rebuiltLayerBytesPerToken: Math.max(layerBytes(false), stage.moeLayers > 0 ? layerBytes(true) + routedInputs([]) : layerBytes(false)),
    outputBytes: stage.hasOutputLayer ? tokensPerTpRank * model.vocab * (4 + BF16_BYTES) + tokensPerTpRank * mtpActivationBytesPerToken(model) : 0,
    embeddingBytes: stage.hasEmbedding ? tokensPerTpRank * model.hidden * BF16_BYTES : 0,
    // Gathered working copy of the largest layer's weights, forward and backward prefetch.
    gatheredWeightsBytes: plan.zero >= 3 ? 2 * BF16_BYTES * layerParams / Math.max(1, stage.layers) : 0,
  };
}

const toGiB = (bytes: number) => bytes / BYTES_PER_GIB;

/** Activation memory per GPU, GiB, with `inFlight` microbatches held (see {@link microbatchesInFlight}): the layers', the embedding output and the logits. */
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
  return toGiB(activations);
}

/** Bytes per GPU of one kind of per-parameter state of `dense` and `expert` parameters, sharded over the data-parallel ranks when `sharded`. */
function stateBytes(dense: number, expert: number, plan: ShardingPlan, bytesPerParam: number, sharded: boolean): number {
  const denseShards = plan.dp * plan.cp;
  const expertShards = Math.max(1, expertDataParallel(plan));
  return bytesPerParam * (dense / (sharded ? denseShards : 1) + expert / (sharded ? expertShards : 1));
}

/** The model-state terms of a stage's memory, GiB: they depend on the sharding, not on the microbatches in flight. */
interface StateParts {
  readonly weightsGiB: number;
  readonly gradientsGiB: number;
  readonly optimizerGiB: number;
  readonly fp8WeightCopiesGiB: number;
  /** Weights, gradients and optimizer state of the embedding and output matrices. */
  readonly vocabStateGiB: number;
}

function stateParts(basis: StageMemoryBasis, plan: ShardingPlan): StateParts {
  const { params, zero } = basis;
  const layerDense = params.dense - params.vocab;
  // Under fp8 parameter gather the linear layers' weights are their fp8 copies alone: no bf16 weight.
  const fp8Only = basis.fp8OnlyWeights ? basis.fp8Params : NO_FP8_PARAMS;
  return {
    weightsGiB: toGiB(stateBytes(layerDense - fp8Only.dense, params.expert - fp8Only.expert, plan, BF16_BYTES, zero >= 3) + basis.gatheredWeightsBytes),
    gradientsGiB: toGiB(stateBytes(layerDense, params.expert, plan, basis.gradientBytesPerParam, zero >= 2) + basis.unshardedGradientBytes),
    optimizerGiB: toGiB(stateBytes(layerDense, params.expert, plan, basis.optimizerStateBytesPerParam, zero >= 1)),
    // The fp8 weight and its transpose, kept whole; with fp8 parameter gather under ZeRO-3 the
    // weights themselves are the fp8 shards (1 byte each), gathered per layer into the working copy.
    fp8WeightCopiesGiB: toGiB(basis.fp8OnlyWeights && zero >= 3
      ? stateBytes(basis.fp8Params.dense, basis.fp8Params.expert, plan, FP8_BYTES, true)
      : stateBytes(basis.fp8Params.dense, basis.fp8Params.expert, plan, 2, false)),
    vocabStateGiB: toGiB(stateBytes(params.vocab, 0, plan, BF16_BYTES, zero >= 3) + stateBytes(params.vocab, 0, plan, basis.gradientBytesPerParam, zero >= 2) + stateBytes(params.vocab, 0, plan, basis.optimizerStateBytesPerParam, zero >= 1)),
  };
}

/** CUDA context and NCCL buffers of a stage's GPUs, GiB. */
const ncclBuffersGiB = (basis: StageMemoryBasis): number => basis.communicators * MEMORY_OVERHEAD.ncclBuffersGiBPerCommunicator;

/**
 * Total memory per GPU, GiB, with `activations` from {@link activationsGiB}: model state, fp8
 * copies, activations with their fragmentation allowance, CUDA context and NCCL buffers. The one
 * sum the evaluator ({@link stageMemory}) and the planner use.
 */
export function stageMemoryTotalGiB(basis: StageMemoryBasis, plan: ShardingPlan, activations: number): number {
  const state = stateParts(basis, plan);
  return state.weightsGiB + state.gradientsGiB + state.optimizerGiB + state.fp8WeightCopiesGiB + state.vocabStateGiB
    + activations * (1 + MEMORY_OVERHEAD.fragmentationFraction) + MEMORY_OVERHEAD.cudaContextGiB + ncclBuffersGiB(basis);
}

/** Memory per GPU of `stage` when each replica runs `microbatches` microbatches. */
export function stageMemory(scenario: Scenario, plan: PlanSpec, stage: StageLayout, microbatches: number): StageMemory {
  const basis = stageMemoryBasis(scenario, plan, stage);
  const state = stateParts(basis, plan);
  const dynamic = activationsGiB(basis, microbatchesInFlight(plan, stage.index, microbatches));
  // The dynamic memory is the layers' activations and the embedding output and logits.
  const vocabActivations = toGiB(basis.outputBytes + basis.embeddingBytes);
  return {
    weightsGiB: state.weightsGiB,
    gradientsGiB: state.gradientsGiB,
    optimizerGiB: state.optimizerGiB,
    fp8WeightCopiesGiB: state.fp8WeightCopiesGiB,
    activationsGiB: dynamic - vocabActivations,
    embeddingOutputGiB: state.vocabStateGiB + vocabActivations,
    cudaContextGiB: MEMORY_OVERHEAD.cudaContextGiB,
    ncclBuffersGiB: ncclBuffersGiB(basis),
    fragmentationGiB: dynamic * MEMORY_OVERHEAD.fragmentationFraction,
    totalGiB: stageMemoryTotalGiB(basis, plan, dynamic),
  };
}
