/**
 * Time of one microbatch through one pipeline stage on one site's GPUs: compute (forward,
 * backward, recomputation) and the exposed tensor-, context- and expert-parallel
 * communication (docs/cost-model.md §2-3).
 */
import { CALIBRATION } from './calibration-constants';
import { dispatchBytes, dispatchS, expertGroupShape, expertLoadImbalance, expertOutOfPodShare, scaleDispatchBytes } from './expert-dispatch';
import { allReduceS, contextParallelTier, groupSpansPods, scaleOutTier, tierForGroup, type Tier } from './network';
import type { StageLayout } from './placement';
import { expertTpOf, rankOrderOf, recomputeModulesOf, type PlanSpec } from './plan-schema';
import type { Scenario, Site } from './scenario';
import { recomputedKernelBytesPerToken } from './transformer-activations';
import { attentionCoreFlopsPerToken, attentionProjectionFlopsPerToken, fp8CastElementsPerToken, logitFlopsPerToken, mlpFlopsPerToken, mtpLinearFlopsPerToken, recomputedGemmFlopsPerToken, routerFlopsPerToken } from './transformer-flops';
import { attentionWidths, expertParams } from './transformer-params';
import { BF16_BYTES, gBpsToBytesPerS, tflopsToFlopPerS } from './units';

/**
 * Bytes HBM moves per routed token copy and hidden unit in one MoE layer's forward: the
 * permutation into expert order and the unpermutation back each read and write a bf16 element.
 */
export const MOE_PERMUTE_BYTES_PER_ELEMENT = 2 * 2 * BF16_BYTES;

/** Per-microbatch times of a stage on a site, seconds. */
export interface StageTime {
  readonly forwardS: number;
  readonly backwardS: number;
  readonly recomputeS: number;
  readonly tpExposedS: number;
  readonly cpExposedS: number;
  readonly epExposedS: number;
  /** Point-to-point sends to neighbouring stages inside the site. */
  readonly ppSendS: number;
  /** All of the above: the stage's share of one steady-state pipeline step. */
  readonly totalS: number;
}

/**
 * Fraction of peak a GEMM reaches with `rows` tokens and `columns` output features per GPU:
 * a saturating curve in both dimensions (small matrices under-use the tensor cores).
 */
export function matmulEfficiency(rows: number, columns: number): number {
  return CALIBRATION.matmulPeakEfficiency
    * (rows / (rows + CALIBRATION.matmulHalfRows))
    * (columns / (columns + CALIBRATION.matmulHalfColumns));
}

/**
 * Fraction of the fp8 peak an fp8 GEMM reaches: the same saturating shape as
 * {@link matmulEfficiency} with its own best value (fitted on the fp8 rows, docs/cost-model.md §2).
 */
export function fp8MatmulEfficiency(rows: number, columns: number): number {
  return matmulEfficiency(rows, columns) * (CALIBRATION.fp8MatmulPeakEfficiency / CALIBRATION.matmulPeakEfficiency);
}

/**
 * Fraction of the bf16 peak a fused attention kernel (flash attention) reaches: the same
 * saturating shape as {@link matmulEfficiency} with its own best value. A fused kernel computes
 * the softmax between its two matmuls, and its exponentials run on the special-function units
 * (on H100, 3.9 TFLOP/s of exponentials against 989 of matmul): FlashAttention-3 (Shah et al.
 * 2024) reaches 75% of the H100 peak forward and 50-60% backward, FlashAttention-2 35-40%
 * (docs/cost-model.md §2). Without a fused kernel the attention core runs as batched GEMMs at
 * {@link matmulEfficiency}.
 */
export function fusedAttentionEfficiency(rows: number, columns: number): number {
  return matmulEfficiency(rows, columns) * (CALIBRATION.fusedAttentionPeakEfficiency / CALIBRATION.matmulPeakEfficiency);
}

/** Tokens one GPU holds per microbatch (sequence split over cp). */
export const tokensPerGpu = (scenario: Scenario, plan: Pick<PlanSpec, 'microBatchSeqs' | 'cp'>): number =>
  (plan.microBatchSeqs * scenario.training.seqLen) / plan.cp;

/** The plan fields a stage's time depends on (not dp, the schedule or ZeRO). */
export type StageTimePlan = Pick<PlanSpec, 'tp' | 'cp' | 'ep' | 'expertTp' | 'pp' | 'virtualStages' | 'microBatchSeqs' | 'recompute' | 'recomputeModules' | 'rankOrder'>;

const NO_RECOMPUTED_FLOPS = { linear: 0, router: 0, routed: 0 } as const;

/** Forward FLOPs of one microbatch on one GPU of a stage, by the unit that runs them. */
export interface StageFlops {
  /** Every GEMM: the linear layers (QKV, output projection, MLP or active experts), the MoE router and the logits layer. */
  readonly gemmFlops: number;
  /** The part of gemmFlops that runs in fp8 when training.precision is fp8: the linear layers (not the router or logits). */
  readonly linearFlops: number;
  /** The part of linearFlops in the routed experts' grouped GEMMs (their own matrix sizes). */
  readonly routedExpertFlops: number;
  /** Attention scores and context, bf16: the causal half with a fused kernel, the full square without. */
  readonly attentionCoreFlops: number;
  /** What the GPU executes per microbatch: 3 x forward plus recomputation (full: a forward; selective: the attention core without a fused kernel, and the recomputed modules' GEMMs). */
  readonly hardwareFlops: number;
  /** Selective recomputation's rerun GEMMs by the unit that runs them: linear layers, routers (bf16), routed experts. */
  readonly recomputedFlops: { readonly linear: number; readonly router: number; readonly routed: number };
}

/** The FLOPs one GPU of `stage` executes per microbatch (docs/cost-model.md §1-2). */
export function stageFlops(scenario: Scenario, plan: StageTimePlan, stage: StageLayout): StageFlops {
  const { model, training } = scenario;
  const tokens = tokensPerGpu(scenario, plan);
  const denseLayers = stage.layers - stage.moeLayers;
  const attentionCoreFlops = attentionCoreFlopsPerToken(model, training.seqLen, training.flashAttention) * tokens * stage.layers / plan.tp;
  const gemmFlops = (attentionProjectionFlopsPerToken(model) * stage.layers
    + mlpFlopsPerToken(model, false) * denseLayers
    + mlpFlopsPerToken(model, true) * stage.moeLayers
    + (stage.hasOutputLayer ? logitFlopsPerToken(model) : 0)) * tokens / plan.tp;
  // bf16 only: the routers and the logits (the multi-token prediction modules' linear layers run like the model's).
  const bf16Only = (routerFlopsPerToken(model) * stage.moeLayers + (stage.hasOutputLayer ? logitFlopsPerToken(model) - mtpLinearFlopsPerToken(model) : 0)) * tokens / plan.tp;
  const routedExpertFlops = model.moe ? 2 * model.moe.topK * expertParams(model) * stage.moeLayers * tokens / plan.tp : 0;
  const forward = attentionCoreFlops + gemmFlops;
  let recompute = plan.recompute === 'full' ? forward : 0;
  let recomputedFlops: StageFlops['recomputedFlops'] = NO_RECOMPUTED_FLOPS;
  if (plan.recompute === 'selective') {
    const modules = recomputeModulesOf(plan);
    const dense = recomputedGemmFlopsPerToken(model, false, modules);
    const moe = recomputedGemmFlopsPerToken(model, true, modules);
    const modulesFlops = (denseLayers * (dense.linear + dense.routed + dense.router) + stage.moeLayers * (moe.linear + moe.routed + moe.router)) * tokens / plan.tp;
    recompute = (modules.includes('core_attn') && !training.flashAttention ? attentionCoreFlops : 0) + modulesFlops;
    // Dense layers have no router or routed experts.
    recomputedFlops = {
      linear: (denseLayers * dense.linear + stage.moeLayers * moe.linear) * tokens / plan.tp,
      router: stage.moeLayers * moe.router * tokens / plan.tp,
      routed: stage.moeLayers * moe.routed * tokens / plan.tp,
    };
  }
  return { gemmFlops, linearFlops: gemmFlops - bf16Only, routedExpertFlops, attentionCoreFlops, hardwareFlops: 3 * forward + recompute, recomputedFlops };
}

/**
 * Ring attention's K,V exchanges of one microbatch through a stage: c-1 forward, twice that
 * backward, each the local tokens' keys and values at the attention's own widths (GQA with its
 * head dimension; MLA: per-head keys and values).
 */
function contextParallelS(scenario: Scenario, plan: StageTimePlan, stage: StageLayout, site: Site, sitesUsedGpus: number): number {
  const widths = attentionWidths(scenario.model);
  const kvBytes = tokensPerGpu(scenario, plan) * (widths.k + widths.v) * BF16_BYTES / plan.tp;
  const cpTier = contextParallelTier(site, sitesUsedGpus, plan.tp, plan.cp);
  return stage.layers * 3 * (plan.cp - 1) * (kvBytes / cpTier.bytesPerS + cpTier.stepLatencyS);
}

/**
 * The tier of a pipeline send inside a site (docs/cost-model.md §3): the NICs under Megatron-LM's
 * default rank order (a stage's dp replicas sit between pipeline neighbours); under
 * `tp-cp-ep-pp-dp` the scale-up fabric when each pipeline of tp x cp x pp GPUs lies inside one
 * scale-up domain (it divides the domain, so no pipeline straddles two), else the NICs (some
 * boundary of the pipeline crosses domains, and the bottleneck stage may be the one at it).
 */
export function pipelineSendTier(site: Site, plan: Pick<PlanSpec, 'tp' | 'cp' | 'pp' | 'rankOrder'>): Tier {
  const pipelineGpus = plan.tp * plan.cp * plan.pp;
  if (rankOrderOf(plan) === 'tp-cp-ep-pp-dp' && pipelineGpus <= site.scaleUpDomainGpus && site.scaleUpDomainGpus % pipelineGpus === 0) {
    return tierForGroup(site, pipelineGpus, false);
  }
  return scaleOutTier(site, false);
}

/** Computes the per-microbatch time of `stage` on `site` under `plan`. */
export function stageTime(scenario: Scenario, plan: StageTimePlan, stage: StageLayout, site: Site, sitesUsedGpus: number): StageTime {
  const { model, training } = scenario;
  const tokens = tokensPerGpu(scenario, plan);
  const tp = plan.tp;
  const bf16Rate = tflopsToFlopPerS(site.gpu.peakBf16Tflops) * matmulEfficiency(tokens, model.hidden / tp);
  // fp8 (Transformer Engine): only the linear layers' GEMMs run in fp8, at the fp8 peak times
  // their own efficiency; attention, the logits layer and the router stay bf16 (docs/cost-model.md §2).
  const fp8 = training.precision === 'fp8' && site.gpu.peakFp8Tflops !== undefined;
  const linearPeak = tflopsToFlopPerS(fp8 ? site.gpu.peakFp8Tflops! : site.gpu.peakBf16Tflops);
  const linearEfficiency = fp8 ? fp8MatmulEfficiency : matmulEfficiency;
  const linearRate = linearPeak * linearEfficiency(tokens, model.hidden / tp);
  // Routed experts run as grouped GEMMs of their own size: the rows one local expert receives
  // (balanced routing: the ep x expertTp GPUs' tokens, tokens / tp each, times topK / experts;
  // ep x tokens x topK / experts when expertTp = tp) by the expert FFN width per expert-tp rank.
  const expertTp = expertTpOf(plan);
  const expertRows = model.moe ? (plan.ep * ((expertTp * tokens) / tp) * model.moe.topK) / model.moe.experts : 1;
  const expertRate = model.moe ? linearPeak * linearEfficiency(expertRows, model.moe.expertFfnHidden / expertTp) : linearRate;
  const flops = stageFlops(scenario, plan, stage);
  // Memory-bound kernels (norms, activations, residuals, dropout; softmax over the score matrix without a fused kernel).
  const hbm = gBpsToBytesPerS(site.gpu.hbmGBps);
  const elementwiseS = (tokens / tp) * stage.layers * model.hidden * CALIBRATION.elementwiseBytesPerHidden / hbm;
  // MoE token permutation: every routed copy is gathered into expert order and scattered back
  // (read and write, bf16, twice per layer forward: MOE_PERMUTE_BYTES_PER_ELEMENT).
  const permuteS = model.moe ? (tokens / tp) * stage.moeLayers * model.moe.topK * model.hidden * MOE_PERMUTE_BYTES_PER_ELEMENT / hbm : 0;
  const expertKernelS = model.moe ? stage.moeLayers * (model.moe.experts / plan.ep) * CALIBRATION.expertKernelOverheadUs * 1e-6 : 0;
  // fp8 casts of the GEMM operands, forward and backward together; a third is charged to the forward (backward = 2 x forward).
  const castS = fp8
    ? (tokens / tp) * (fp8CastElementsPerToken(model, false) * (stage.layers - stage.moeLayers) + fp8CastElementsPerToken(model, true) * stage.moeLayers)
      * CALIBRATION.fp8CastBytesPerElement / hbm / 3
    : 0;
  const scoreS = training.flashAttention ? 0
    : (tokens / tp) * stage.layers * model.heads * (training.seqLen / plan.cp) * CALIBRATION.scoreBytesPerElement / hbm;
  // Ring attention: each step after the first merges its partial output into the running one
  // (online-softmax correction) over the local tokens and the attention's context width.
  const ringMergeS = plan.cp > 1
    ? (plan.cp - 1) * (tokens / tp) * stage.layers * attentionWidths(model).context * CALIBRATION.ringStepBytesPerElement / hbm
    : 0;
  const attentionRate = training.flashAttention
    ? tflopsToFlopPerS(site.gpu.peakBf16Tflops) * fusedAttentionEfficiency(tokens, model.hidden / tp)
    : bf16Rate;
  const attentionS = flops.attentionCoreFlops / attentionRate;
  const coreS = attentionS + scoreS + ringMergeS;
  const flopsS = attentionS + (fp8
    ? (flops.linearFlops - flops.routedExpertFlops) / linearRate + (flops.gemmFlops - flops.linearFlops) / bf16Rate
    : (flops.gemmFlops - flops.routedExpertFlops) / bf16Rate)
    + (flops.routedExpertFlops * expertLoadImbalance(model)) / expertRate;
  const forwardS = flopsS + elementwiseS + permuteS + expertKernelS + castS + scoreS + ringMergeS;
  const backwardS = 2 * forwardS;
  // Selective recomputation reruns each recomputed module's forward before its backward: GEMMs at
  // their own rates, norms and activation functions at HBM speed, a recomputed MoE layer also its
  // permutation and expert kernels (and below its collectives).
  const modules = recomputeModulesOf(plan);
  const denseLayers = stage.layers - stage.moeLayers;
  const moeRecomputed = plan.recompute === 'selective' && stage.moeLayers > 0 && modules.includes('moe');
  let modulesS = 0;
  if (plan.recompute === 'selective') {
    const kernelBytes = (denseLayers * recomputedKernelBytesPerToken(model, false, modules) + stage.moeLayers * recomputedKernelBytesPerToken(model, true, modules)) * tokens / tp;
    const rerun = flops.recomputedFlops;
    modulesS = rerun.linear / linearRate
      + rerun.router / bf16Rate
      + rerun.routed * expertLoadImbalance(model) / expertRate
      + kernelBytes / hbm
      + (moeRecomputed ? permuteS + expertKernelS : 0);
  }
  const recomputeS = plan.recompute === 'full' ? forwardS
    : plan.recompute === 'selective' ? (modules.includes('core_attn') && !training.flashAttention ? coreS : 0) + modulesS : 0;
  const gemmS = forwardS + backwardS + recomputeS;

  // Tensor parallel: 2 all-reduce equivalents forward and 2 backward per layer (+2 when recomputing;
  // +1 per recomputed MLP or MoE layer, over the expert tp ranks for MoE).
  const tpCollectives = (4 + (plan.recompute === 'full' ? 2 : 0)) * stage.layers;
  const tpBytes = tokens * model.hidden * BF16_BYTES;
  // Groups spread over pods (network.ts): tensor parallelism's only when it is larger than a pod.
  const tpTier = tierForGroup(site, tp, groupSpansPods(site, sitesUsedGpus, tp));
  const expertTpTier = expertTp === tp ? tpTier : tierForGroup(site, expertTp, groupSpansPods(site, sitesUsedGpus, expertTp));
  // With expertTp < tp (MoE Parallel Folding) a MoE layer's MLP half runs its collectives over the expertTp ranks only.
  const tpS = expertTp === tp || stage.moeLayers === 0 ? tpCollectives * allReduceS(tpBytes, tp, tpTier)
    : (tpCollectives / 2) * allReduceS(tpBytes, tp, tpTier)
      + ((tpCollectives / 2) / stage.layers) * ((stage.layers - stage.moeLayers) * allReduceS(tpBytes, tp, tpTier)
        + stage.moeLayers * allReduceS(tpBytes, expertTp, expertTpTier));
  const recomputedMlps = plan.recompute === 'selective' && modules.includes('mlp') ? denseLayers : 0;
  const tpRecomputeS = (recomputedMlps > 0 ? recomputedMlps * allReduceS(tpBytes, tp, tpTier) : 0)
    + (moeRecomputed ? stage.moeLayers * allReduceS(tpBytes, expertTp, expertTpTier) : 0);
  const tpAllS = tpS + tpRecomputeS;
  const tpExposedS = training.overlap.tensorParallel ? Math.max(tpAllS - gemmS, tpAllS * CALIBRATION.tpOverlapResidual) : tpAllS;

  // Context parallel (ring attention), hidden behind attention: only the excess is exposed.
  // The exchange for step k + 1 runs beside step k's attention and merge: the last merge comes after the last exchange.
  const cpExposedS = plan.cp > 1
    ? Math.max(0, contextParallelS(scenario, plan, stage, site, sitesUsedGpus) - 3 * (attentionS + scoreS + ringMergeS * (plan.cp - 2) / (plan.cp - 1)))
    : 0;

  // Expert parallel: dispatch and combine forward and backward per MoE layer, on NVLink and the NIC at once.
  let epExposedS = 0;
  if (plan.ep > 1 && stage.moeLayers > 0 && model.moe) {
    const shape = expertGroupShape(site, plan.ep, expertTp);
    // The busiest rank receives loadImbalance times its share: the all-to-all waits for it.
    const bytes = scaleDispatchBytes(dispatchBytes(model, shape, plan.ep, tokens / tp, training.expertDispatcher), expertLoadImbalance(model));
    // +2 when the layer's forward is recomputed (full, or selective with moe).
    const a2aCount = (4 + (plan.recompute === 'full' || moeRecomputed ? 2 : 0)) * stage.moeLayers;
    const epS = a2aCount * dispatchS(site, shape, tp, bytes, expertOutOfPodShare(site, sitesUsedGpus, plan.ep, expertTp));
    // Overlapped with another microbatch's compute (Megatron's 1F1B all-to-all overlap, DualPipe):
    // the same exposure rule as tensor-parallel overlap.
    epExposedS = training.overlap.expertParallel ? Math.max(epS - gemmS, epS * CALIBRATION.tpOverlapResidual) : epS;
  }

  // Pipeline sends to the neighbouring stage inside the site: activations forward, gradients backward, per chunk.
  const sendBytes = (tokens * model.hidden * BF16_BYTES) / tp;
  const sendTier = pipelineSendTier(site, plan);
  const ppSendS = plan.pp > 1 ? 2 * plan.virtualStages * (sendBytes / sendTier.bytesPerS + sendTier.stepLatencyS) : 0;

  const totalS = gemmS + tpExposedS + cpExposedS + epExposedS + ppSendS;
  return { forwardS, backwardS, recomputeS, tpExposedS, cpExposedS, epExposedS, ppSendS, totalS };
}
