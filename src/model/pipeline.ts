/**
 * Pipeline schedule timing (docs/cost-model.md §5): with per-stage step times S_j (forward F_j
 * of it) and m microbatches, an iteration's pipeline phase takes m * max S + bubble, where the
 * bubble is (sum S - max S) for GPipe and 1F1B (eq. 5.1), that divided by v for the interleaved
 * schedule (eq. 5.2), and (sum Z - max Z) + max(0, p - m) * max_j min(F_j, W_j) for ZB-H1
 * (eq. 5.3; Z_j = max(F_j, W_j), W_j = (S_j - F_j) / 2 the weight-gradient half of the backward;
 * Qi et al. 2024: (p - 1)(F + B - W) with B = W when W <= F), ZB-H1's divided by v for torch's
 * interleaved zero-bubble schedule (eq. 5.5), (sum V - max V) for ZBV (eq. 5.6,
 * V_j = max(W_j, 2F_j - W_j) / 2) and (sum D - max D) for DualPipeV (eq. 5.7,
 * D_j = max(F_j, W_j - F_j / (p - 1)) / 2); the bidirectional DualPipe runs m / 2 rounds of one
 * microbatch per direction, each round a stage step, with DualPipeV's fill/drain on the p / 2 mirror
 * pairs of stages (eq. 5.10). The microbatch counts each schedule accepts are in
 * pipeline-schedule-rules.ts, the round-trip floor (eq. 5.8) in pipeline-round-trip.ts.
 */
import { CALIBRATION } from './calibration-constants';
import type { PlanSpec } from './plan-schema';
import { chainMicrobatches, endsChain, stageOfVirtualStage } from './schedule-chain';

/** Sites crossed along one replica's chain of virtual stages (folded for ZBV): pairs (from, to) in chain order, with the virtual stage that sends. */
export function chainCrossings(stageSite: readonly number[], plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>): { readonly from: number; readonly to: number; readonly virtualStage: number }[] {
  const p = stageSite.length;
  const crossings: { from: number; to: number; virtualStage: number }[] = [];
  const chain = p * plan.virtualStages;
  for (let q = 0; q + 1 < chain; q++) {
    if (endsChain(plan.schedule, q, p, chain)) continue;
    const from = stageSite[stageOfVirtualStage(plan.schedule, q, p).stage]!;
    const to = stageSite[stageOfVirtualStage(plan.schedule, q + 1, p).stage]!;
    if (from !== to) crossings.push({ from, to, virtualStage: q });
  }
  return crossings;
}

/**
 * The part of the bubble that does not depend on m (eq. 5.1-5.3, 5.5-5.7 without the ZB-H1
 * short-pipeline term): fill and drain. Non-decreasing in every S_j at a fixed forward share, so
 * the planner's bounds can call it with optimistic stage times.
 */
export function fillDrainS(stepS: readonly number[], forwardS: readonly number[], plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>): number {
  switch (plan.schedule) {
    case 'gpipe':
    case '1f1b': return sumButLargest(stepS);
    case 'interleaved': return sumButLargest(stepS) / plan.virtualStages;
    case 'zb-h1': return sumButLargest(stepS.map((step, j) => zeroBubbleShareS(step, forwardS[j]!)));
    case 'interleaved-zb': return sumButLargest(stepS.map((step, j) => zeroBubbleShareS(step, forwardS[j]!))) / plan.virtualStages;
    case 'zbv': return sumButLargest(stepS.map((step, j) => zbvShareS(step, forwardS[j]!)));
    case 'dualpipev': return sumButLargest(stepS.map((step, j) => dualPipeVShareS(step, forwardS[j]!, stepS.length)));
    case 'dualpipe': return sumButLargest(mirrorPairsS(stepS.map((step, j) => dualPipeVShareS(step, forwardS[j]!, stepS.length / 2))));
  }
}

/**
 * DualPipe's fill/drain terms (eq. 5.10): GPUs j and p - 1 - j run the same order mirrored
 * (schedule-order.ts), so the p / 2 pairs play the p / 2 stages of a DualPipeV; each pair counts
 * with the larger of its two terms. Non-decreasing in every term.
 */
function mirrorPairsS(terms: readonly number[]): number[] {
  const p = terms.length;
  return Array.from({ length: Math.floor(p / 2) }, (_, k) => Math.max(terms[k]!, terms[p - 1 - k]!));
}

/** Steps each stage runs in the steady state: m, or for DualPipe m / 2 rounds of one microbatch per direction (a round is a stage step: its GPUs hold two stages). */
export const steadyRounds = (schedule: PlanSpec['schedule'], microbatches: number): number => chainMicrobatches(schedule, microbatches);

/**
 * The per-stage term whose sum over all stages but the largest is the fill/drain of the
 * zero-bubble schedules (their forward share matters): each is S x g(forward share) with g >= 0.
 * Undefined for the schedules whose fill/drain does not depend on the forward share.
 */
export function forwardShareTermS(schedule: PlanSpec['schedule'], stages: number): ((stepS: number, forwardS: number) => number) | undefined {
  switch (schedule) {
    case 'zb-h1':
    case 'interleaved-zb': return zeroBubbleShareS;
    case 'zbv': return zbvShareS;
    case 'dualpipev': return (stepS, forwardS) => dualPipeVShareS(stepS, forwardS, stages);
    default: return undefined;
  }
}

/**
 * DualPipeV's fill/drain per stage (eq. 5.7): max(F, W - F/(p - 1))/2 on p stages, so that on
 * equal stages the fill/drain is max((p - 1)F, (p - 1)W - F)/2, the span of the op-by-op timeline
 * of the published order (no forward/backward overlap) for every m >= 2p and forward share 0.1-0.5
 * (test/zero-bubble-schedules.test.ts). Non-decreasing in S at a fixed forward share.
 */
export function dualPipeVShareS(stepS: number, forwardS: number, stages: number): number {
  const weightS = (stepS - forwardS) / 2;
  return Math.max(forwardS, stages > 1 ? weightS - forwardS / (stages - 1) : 0) / 2;
}

/**
 * ZBV's fill/drain per stage (eq. 5.6): with a chunk's forward f = F/2 and weight-gradient pass
 * w = W/2 (W = (S - F)/2), each of the other p - 1 stages leaves a gap of max(w, 2f - w). Exact on
 * equal stages when F <= W (forward share <= 1/3, every plan this cost model produces: backward is
 * twice the forward); above that the simulated span is (F - W)/2 shorter. Non-decreasing in S at a
 * fixed forward share.
 */
export function zbvShareS(stepS: number, forwardS: number): number {
  const chunkWeightS = (stepS - forwardS) / 4;
  return Math.max(chunkWeightS, forwardS - chunkWeightS);
}

/**
 * ZB-H1's fill/drain per stage (eq. 5.3): the weight-gradient passes W fill the drain's gaps,
 * each as long as a forward, only when W <= F; otherwise each gap is a W. Non-decreasing in S at
 * a fixed forward share.
 */
export function zeroBubbleShareS(stepS: number, forwardS: number): number {
  return Math.max(forwardS, (stepS - forwardS) / 2);
}

/**
 * ZB-H1 with fewer microbatches than stages (eq. 5.3): the drain has p - m fewer weight-gradient
 * passes to fill it with, each gap min(F, W) long. Zero for the other schedules and for m >= p.
 */
export function shortPipelineS(stepS: readonly number[], forwardS: readonly number[], microbatches: number, plan: Pick<PlanSpec, 'schedule'>): number {
  if (plan.schedule !== 'zb-h1') return 0;
  let gap = 0;
  stepS.forEach((s, j) => { gap = Math.max(gap, Math.min(forwardS[j]!, (s - forwardS[j]!) / 2)); });
  return Math.max(0, stepS.length - microbatches) * gap;
}

/**
 * Pipeline phase of one replica: m microbatches through stages with per-microbatch step times
 * `stepS` (seconds), `forwardS` of each being forward work. Equal to the op-by-op simulation
 * (pipeline-timeline.ts) for equal stages under every schedule; for unequal stages the steady
 * state runs at the slowest stage and fill/drain passes every other stage once, which bounds
 * the simulated span from above (docs/cost-model.md §5).
 */
export function pipelinePhaseS(
  stepS: readonly number[],
  forwardS: readonly number[],
  microbatches: number,
  plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>,
): { readonly steadyS: number; readonly bubbleS: number } {
  const max = Math.max(0, ...stepS);
  return {
    steadyS: steadyRounds(plan.schedule, microbatches) * max,
    bubbleS: fillDrainS(stepS, forwardS, plan) + shortPipelineS(stepS, forwardS, microbatches, plan),
  };
}

/** A cross-site boundary on the chain as the pipeline formula sees it. */
export interface PipelineHop { readonly latencyS: number; readonly stepS: number }

/** One replica's pipeline phase with its cross-site boundaries (docs/cost-model.md §5, eq. 5.4). */
export interface PipelinePhase {
  readonly steadyS: number;
  readonly bubbleS: number;
  /** Per microbatch: how much the slowest link step exceeds the slowest stage. */
  readonly linkExcessS: number;
  /** Latency and one transfer of every crossing, on fill and on drain. */
  readonly fillCrossS: number;
  /** steady + m x link excess + bubble + fill/drain crossings. */
  readonly phaseS: number;
}

/**
 * Eq. 5.4: m x max(S, link steps) + bubble + 2 x sum over crossings (latency + link step): a link
 * is a pipeline stage of its own, and fill and drain pay each crossing once each way.
 */
export function pipelineWithHopsS(
  stepS: readonly number[],
  forwardS: readonly number[],
  microbatches: number,
  plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>,
  hops: readonly PipelineHop[],
): PipelinePhase {
  const { steadyS, bubbleS } = pipelinePhaseS(stepS, forwardS, microbatches, plan);
  let linkStep = 0;
  let fillCrossS = 0;
  for (const hop of hops) {
    linkStep = Math.max(linkStep, hop.stepS);
    fillCrossS += 2 * (hop.latencyS + hop.stepS);
  }
  const linkExcessS = Math.max(0, linkStep - Math.max(0, ...stepS));
  return { steadyS, bubbleS, linkExcessS, fillCrossS, phaseS: steadyS + steadyRounds(plan.schedule, microbatches) * linkExcessS + bubbleS + fillCrossS };
}

/** Forward share of a stage's step: the step split in the ratio of forward to all compute (a third without recomputation). */
export function forwardPartS(stepS: number, time: { readonly forwardS: number; readonly backwardS: number; readonly recomputeS: number }): number {
  const work = time.forwardS + time.backwardS + time.recomputeS;
  return work > 0 ? (stepS * time.forwardS) / work : stepS / 3;
}

function sumButLargest(values: readonly number[]): number {
  let sum = 0;
  let max = 0;
  for (const x of values) { sum += x; max = Math.max(max, x); }
  return sum - max;
}

/**
 * Gradient sync left exposed after a stage's compute (docs/cost-model.md §3): all of it without
 * overlap; with ZeRO-0 what the backward window cannot hide; with ZeRO >= 1 the reduce-scatter
 * half against the backward window and the all-gather half against the forward window; each
 * overlapped part at least the residual share CALIBRATION.dpOverlapResidual of itself.
 * Non-decreasing in the sync time, so the planner's bounds can call it with lower bounds.
 */
export function exposedSyncS(plan: Pick<PlanSpec, 'zero'>, overlap: boolean, syncS: number, backwardWindowS: number, forwardWindowS: number): number {
  if (!overlap) return syncS;
  const residual = CALIBRATION.dpOverlapResidual;
  if (plan.zero === 0) return Math.max(residual * syncS, syncS - backwardWindowS);
  return Math.max(residual * syncS / 2, syncS / 2 - backwardWindowS) + Math.max(residual * syncS / 2, syncS / 2 - forwardWindowS);
}

// Re-exported for the callers that read a schedule's timing and its rules together.
export { fewestScheduleMicrobatches, interleavedGroupSize, scheduleMicrobatchProblem, zeroBubbleRoundSize } from './pipeline-schedule-rules';
export { roundTripFloorS, roundTripProfile, type ChainBoundary, type RoundTripProfile } from './pipeline-round-trip';
