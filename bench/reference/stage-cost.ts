// Frozen copy of src/model/stage-cost.ts at commit da25fb5 (main before the enumeration perf work, after the pipeline-schedule
// change): the reference the equivalence test (test/candidates-equivalence.test.ts) and bench/enumeration-speed.ts compare against.
// Added the same ring-attention merge term as src (ringMergeS, CALIBRATION.ringStepBytesPerElement),
// and the same pod rule (groups slowed by pods only when spread over them, network.ts groupSpansPods).
/**
 * Time of one microbatch through one pipeline stage on one site's GPUs: compute (forward,
 * backward, recomputation) and the exposed tensor-, context- and expert-parallel
 * communication (docs/cost-model.md §2-3).
 */
import { CALIBRATION } from '../../src/model/calibration-constants';
import { dispatchBytes, dispatchS, expertGroupShape, expertOutOfPodShare } from '../../src/model/expert-dispatch';
import { allReduceS, contextParallelTier, groupSpansPods, scaleOutTier, tierForGroup } from '../../src/model/network';
import type { StageLayout } from './placement';
import type { PlanSpec } from '../../src/model/plan-schema';
import type { Scenario, Site } from '../../src/model/scenario';
import {
  attentionCoreFlopsPerToken, attentionProjectionFlopsPerToken, attentionWidths, expertParams, logitFlopsPerToken, mlpFlopsPerToken,
  recomputedGemmFlopsPerToken, recomputedKernelBytesPerToken,
} from '../../src/model/transformer';
import { BF16_BYTES, gBpsToBytesPerS, tflopsToFlopPerS } from '../../src/model/units';
import { MOE_PERMUTE_BYTES_PER_ELEMENT } from '../../src/model/stage-cost';

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

/** Tokens one GPU holds per microbatch (sequence split over cp). */
export const tokensPerGpu = (scenario: Scenario, plan: PlanSpec): number =>
  (plan.microBatchSeqs * scenario.training.seqLen) / plan.cp;

/** Computes the per-microbatch time of `stage` on `site` under `plan`. */
export function stageTime(scenario: Scenario, plan: PlanSpec, stage: StageLayout, site: Site, sitesUsedGpus: number): StageTime {
  const { model, training } = scenario;
  const tokens = tokensPerGpu(scenario, plan);
  const tp = plan.tp;
  const peak = tflopsToFlopPerS(training.precision === 'fp8' ? site.gpu.peakFp8Tflops ?? site.gpu.peakBf16Tflops : site.gpu.peakBf16Tflops);
  const efficiency = matmulEfficiency(tokens, model.hidden / tp);
  const flopRate = peak * efficiency;
  const denseLayers = stage.layers - stage.moeLayers;
  const causalOnly = training.flashAttention;

  const coreFlops = attentionCoreFlopsPerToken(model, training.seqLen, causalOnly) * tokens * stage.layers / tp;
  const projectionFlops = (attentionProjectionFlopsPerToken(model) * stage.layers
    + mlpFlopsPerToken(model, false) * denseLayers
    + mlpFlopsPerToken(model, true) * stage.moeLayers
    + (stage.hasOutputLayer ? logitFlopsPerToken(model) : 0)) * tokens / tp;
  // Memory-bound kernels (norms, activations, residuals, dropout; softmax over the score matrix without a fused kernel).
  const hbm = gBpsToBytesPerS(site.gpu.hbmGBps);
  const elementwiseS = (tokens / tp) * stage.layers * model.hidden * CALIBRATION.elementwiseBytesPerHidden / hbm;
  const scoreS = training.flashAttention ? 0
    : (tokens / tp) * stage.layers * model.heads * (training.seqLen / plan.cp) * CALIBRATION.scoreBytesPerElement / hbm;
  // The fused-attention rate (docs/cost-model.md §2) follows the cost model's change after the freeze, as the current code computes it.
  const attentionRate = training.flashAttention
    ? tflopsToFlopPerS(site.gpu.peakBf16Tflops) * (efficiency * (CALIBRATION.fusedAttentionPeakEfficiency / CALIBRATION.matmulPeakEfficiency))
    : flopRate;
  const attentionS = coreFlops / attentionRate;
  // The ring-attention merge per step after the first (docs/cost-model.md §2) follows the cost model's change after the freeze.
  const ringMergeS = plan.cp > 1
    ? (plan.cp - 1) * (tokens / tp) * stage.layers * attentionWidths(model).context * CALIBRATION.ringStepBytesPerElement / hbm
    : 0;
  const coreS = attentionS + scoreS + ringMergeS;
  // The MoE terms (routed experts' grouped GEMMs at their own size, token permutation, per-expert
  // kernels; docs/cost-model.md §3, EP) follow the cost model's change after the freeze, written out here.
  const moe = model.moe;
  const routedFlops = moe ? 2 * moe.topK * expertParams(model) * stage.moeLayers * tokens / tp : 0;
  const expertTp = plan.expertTp ?? tp;
  const expertRows = moe ? (plan.ep * ((expertTp * tokens) / tp) * moe.topK) / moe.experts : 1;
  const expertRate = moe ? peak * matmulEfficiency(expertRows, moe.expertFfnHidden / expertTp) : flopRate;
  const permuteS = moe ? (tokens / tp) * stage.moeLayers * moe.topK * model.hidden * MOE_PERMUTE_BYTES_PER_ELEMENT / hbm : 0;
  const expertKernelS = moe ? stage.moeLayers * (moe.experts / plan.ep) * CALIBRATION.expertKernelOverheadUs * 1e-6 : 0;
  const forwardS = attentionS + (projectionFlops - routedFlops) / flopRate + (routedFlops * (moe?.loadImbalance ?? 1)) / expertRate + elementwiseS + permuteS + expertKernelS + 0 + scoreS + ringMergeS;
  const backwardS = 2 * forwardS;
  // Selective recomputation by module (docs/cost-model.md §2, added after the freeze): each recomputed
  // module's forward again, written out; the default module list is the attention core alone.
  const modules = plan.recompute === 'selective' ? plan.recomputeModules ?? ['core_attn'] : [];
  const moeRecomputed = plan.recompute === 'selective' && stage.moeLayers > 0 && modules.includes('moe');
  let modulesS = 0;
  if (plan.recompute === 'selective') {
    const dense = recomputedGemmFlopsPerToken(model, false, modules);
    const moeFlops = recomputedGemmFlopsPerToken(model, true, modules);
    const kernelBytes = (denseLayers * recomputedKernelBytesPerToken(model, false, modules) + stage.moeLayers * recomputedKernelBytesPerToken(model, true, modules)) * tokens / tp;
    modulesS = (denseLayers * dense.linear + stage.moeLayers * moeFlops.linear) * tokens / tp / flopRate
      + stage.moeLayers * moeFlops.router * tokens / tp / flopRate
      + (stage.moeLayers * moeFlops.routed * tokens / tp) * (moe?.loadImbalance ?? 1) / expertRate
      + kernelBytes / hbm
      + (moeRecomputed ? permuteS + expertKernelS : 0);
  }
  const recomputeS = plan.recompute === 'full' ? forwardS
    : plan.recompute === 'selective' ? (modules.includes('core_attn') && !training.flashAttention ? coreS : 0) + modulesS : 0;
  const gemmS = forwardS + backwardS + recomputeS;

  // Tensor parallel: 2 all-reduce equivalents forward and 2 backward per layer (+2 when recomputing).
  const tpCollectives = (4 + (plan.recompute === 'full' ? 2 : 0)) * stage.layers;
  const tpBytes = tokens * model.hidden * BF16_BYTES;
  const spansPods = groupSpansPods(site, sitesUsedGpus, tp);
  const tpTier = tierForGroup(site, tp, spansPods);
  const tpS = expertTp === tp || stage.moeLayers === 0 ? tpCollectives * allReduceS(tpBytes, tp, tpTier)
    : (tpCollectives / 2) * allReduceS(tpBytes, tp, tpTier)
      + ((tpCollectives / 2) / stage.layers) * ((stage.layers - stage.moeLayers) * allReduceS(tpBytes, tp, tpTier)
        + stage.moeLayers * allReduceS(tpBytes, expertTp, tierForGroup(site, expertTp, groupSpansPods(site, sitesUsedGpus, expertTp))));
  // A recomputed dense MLP reruns its collectives over tp, a recomputed MoE layer over the expert tp ranks.
  const recomputedMlps = plan.recompute === 'selective' && modules.includes('mlp') ? denseLayers : 0;
  const tpRecomputeS = (recomputedMlps > 0 ? recomputedMlps * allReduceS(tpBytes, tp, tpTier) : 0)
    + (moeRecomputed ? stage.moeLayers * allReduceS(tpBytes, expertTp, tierForGroup(site, expertTp, groupSpansPods(site, sitesUsedGpus, expertTp))) : 0);
  const tpAllS = tpS + tpRecomputeS;
  const tpExposedS = training.overlap.tensorParallel ? Math.max(tpAllS - gemmS, tpAllS * CALIBRATION.tpOverlapResidual) : tpAllS;

  // Context parallel (ring attention): c-1 exchanges of the local K,V forward, twice that backward, hidden behind attention.
  const kvWidths = attentionWidths(model); // the model's key and value widths (head dimension, MLA), as the current code computes them
  const kvBytes = tokens * (kvWidths.k + kvWidths.v) * BF16_BYTES / tp;
  const cpTier = contextParallelTier(site, sitesUsedGpus, tp, plan.cp);
  const cpS = plan.cp > 1 ? stage.layers * 3 * (plan.cp - 1) * (kvBytes / cpTier.bytesPerS + cpTier.stepLatencyS) : 0;
  const cpExposedS = Math.max(0, cpS - 3 * (attentionS + scoreS + (plan.cp > 1 ? ringMergeS * (plan.cp - 2) / (plan.cp - 1) : 0)));

  // Expert parallel: dispatch and combine forward and backward per MoE layer, on NVLink and the NIC at once (the current model's).
  let epExposedS = 0;
  if (plan.ep > 1 && stage.moeLayers > 0 && model.moe) {
    const shape = expertGroupShape(site, plan.ep, expertTp);
    const even = dispatchBytes(model, shape, plan.ep, tokens / tp, training.expertDispatcher);
    const imbalance = model.moe.loadImbalance ?? 1;
    const bytes = { nicBytes: even.nicBytes * imbalance, scaleUpBytes: even.scaleUpBytes * imbalance };
    const a2aCount = (4 + (plan.recompute === 'full' || moeRecomputed ? 2 : 0)) * stage.moeLayers;
    const epS = a2aCount * dispatchS(site, shape, tp, bytes, expertOutOfPodShare(site, sitesUsedGpus, plan.ep, expertTp));
    epExposedS = training.overlap.expertParallel ? Math.max(epS - gemmS, epS * CALIBRATION.tpOverlapResidual) : epS;
  }

  // Pipeline sends to the neighbouring stage inside the site: activations forward, gradients backward, per chunk.
  const sendBytes = (tokens * model.hidden * BF16_BYTES) / tp;
  const nic = scaleOutTier(site, false);
  const ppSendS = plan.pp > 1 ? 2 * plan.virtualStages * (sendBytes / nic.bytesPerS + nic.stepLatencyS) : 0;

  const totalS = gemmS + tpExposedS + cpExposedS + epExposedS + ppSendS;
  return { forwardS, backwardS, recomputeS, tpExposedS, cpExposedS, epExposedS, ppSendS, totalS };
}
