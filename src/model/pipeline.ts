/**
 * Pipeline schedule timing (docs/cost-model.md §5): with per-stage step times S_j (forward F_j
 * of it) and m microbatches, an iteration's pipeline phase takes m * max S + bubble, where the
 * bubble is (sum S - max S) for GPipe and 1F1B (eq. 5.1), that divided by v for the interleaved
 * schedule (eq. 5.2), and (sum Z - max Z) + max(0, p - m) * max_j min(F_j, W_j) for ZB-H1
 * (eq. 5.3; Z_j = max(F_j, W_j), W_j = (S_j - F_j) / 2 the weight-gradient half of the backward;
 * Qi et al. 2024: (p - 1)(F + B - W) with B = W when W <= F), ZB-H1's divided by v for torch's
 * interleaved zero-bubble schedule (eq. 5.5), (sum V - max V) for ZBV (eq. 5.6,
 * V_j = max(W_j, 2F_j - W_j) / 2) and (sum D - max D) for DualPipeV (eq. 5.7,
 * D_j = max(F_j, W_j - F_j / (p - 1)) / 2).
 */
import type { PlanSpec } from './plan-schema';
import { stageOfVirtualStage } from './schedule-chain';

/** Sites crossed along one replica's chain of virtual stages (folded for ZBV): pairs (from, to) in chain order, with the virtual stage that sends. */
export function chainCrossings(stageSite: readonly number[], plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>): { readonly from: number; readonly to: number; readonly virtualStage: number }[] {
  const p = stageSite.length;
  const crossings: { from: number; to: number; virtualStage: number }[] = [];
  for (let q = 0; q + 1 < p * plan.virtualStages; q++) {
    const from = stageSite[stageOfVirtualStage(plan.schedule, q, p).stage]!;
    const to = stageSite[stageOfVirtualStage(plan.schedule, q + 1, p).stage]!;
    if (from !== to) crossings.push({ from, to, virtualStage: q });
  }
  return crossings;
}

/**
 * Megatron-LM's interleaved schedule runs microbatches in groups of N per model chunk
 * (`--microbatch-group-size-per-virtual-pipeline-stage`, default p) and refuses a last group of
 * fewer than p ("dependency bubbles"): N in [p, m] with m mod N = 0 or >= p. The smallest such N
 * (p when p divides m; it sets the warm-up, hence memory), or undefined when m < p or m is not
 * whole: then the schedule cannot run.
 */
export function interleavedGroupSize(microbatches: number, pp: number): number | undefined {
  if (!Number.isInteger(microbatches) || microbatches < pp) return undefined;
  for (let n = pp; n < microbatches; n++) {
    const last = microbatches % n;
    if (last === 0 || last >= pp) return n;
  }
  return microbatches;
}

/**
 * torch.distributed.pipelining's interleaved schedules (ScheduleInterleavedZeroBubble) run
 * microbatches in rounds: max(1, floor(m / p)) rounds of m / rounds microbatches each, and refuse
 * an m the rounds do not divide. The round size (the microbatches per chunk before the next
 * chunk's turn, Megatron's N), or undefined when m is not whole or the rounds do not divide it.
 */
export function zeroBubbleRoundSize(microbatches: number, pp: number): number | undefined {
  if (!Number.isInteger(microbatches) || microbatches < 1) return undefined;
  const rounds = Math.max(1, Math.floor(microbatches / pp));
  return microbatches % rounds === 0 ? microbatches / rounds : undefined;
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
  }
}

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
 * Why a replica with `microbatches` microbatches cannot run the schedule on `pp` stages, or
 * undefined when it can (docs/cost-model.md §5): Megatron's interleaving needs m >= p; torch's
 * interleaved zero-bubble needs m >= p (below that the cost model has no closed form) and m
 * divisible by its rounds; ZBV needs m >= 2p - 1 (torch pads fewer with idle slots, which the
 * closed form does not time); DualPipeV m >= 2p (torch refuses fewer).
 */
export function scheduleMicrobatchProblem(schedule: PlanSpec['schedule'], microbatches: number, pp: number): string | undefined {
  if (!Number.isInteger(microbatches)) return undefined;
  switch (schedule) {
    case 'interleaved':
      return interleavedGroupSize(microbatches, pp) === undefined ? `the interleaved schedule needs at least pp = ${pp} microbatches per replica` : undefined;
    case 'interleaved-zb':
      if (microbatches < pp) return `the interleaved zero-bubble schedule needs at least pp = ${pp} microbatches per replica`;
      return zeroBubbleRoundSize(microbatches, pp) === undefined
        ? `the interleaved zero-bubble schedule needs microbatches divisible by its max(1, floor(m / pp)) = ${Math.floor(microbatches / pp)} rounds`
        : undefined;
    case 'zbv':
      return microbatches < 2 * pp - 1 ? `the ZBV schedule needs at least 2 x pp - 1 = ${2 * pp - 1} microbatches per replica` : undefined;
    case 'dualpipev':
      return microbatches < 2 * pp ? `the DualPipeV schedule needs at least 2 x pp = ${2 * pp} microbatches per replica` : undefined;
    default:
      return undefined;
  }
}

/** The fewest microbatches a replica may run under the schedule: pp for the interleaved ones, 2pp - 1 for ZBV, 2pp for DualPipeV, else 1. */
export function fewestScheduleMicrobatches(schedule: PlanSpec['schedule'], pp: number): number {
  switch (schedule) {
    case 'interleaved':
    case 'interleaved-zb': return pp;
    case 'zbv': return 2 * pp - 1;
    case 'dualpipev': return 2 * pp;
    default: return 1;
  }
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
    steadyS: microbatches * max,
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
  return { steadyS, bubbleS, linkExcessS, fillCrossS, phaseS: steadyS + microbatches * linkExcessS + bubbleS + fillCrossS };
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
 * half against the backward window and the all-gather half against the forward window.
 * Non-decreasing in the sync time, so the planner's bounds can call it with lower bounds.
 */
export function exposedSyncS(plan: Pick<PlanSpec, 'zero'>, overlap: boolean, syncS: number, backwardWindowS: number, forwardWindowS: number): number {
  if (!overlap) return syncS;
  if (plan.zero === 0) return Math.max(0, syncS - backwardWindowS);
  return Math.max(0, syncS / 2 - backwardWindowS) + Math.max(0, syncS / 2 - forwardWindowS);
}

/** A cross-site boundary of the chain: virtual stage q sends to q + 1, each way, taking the link step and then the latency. */
export interface ChainBoundary { readonly virtualStage: number; readonly latencyS: number; readonly stepS: number }

/**
 * What eq. 5.8 needs of one replica's 1F1B or ZB-H1 pipeline: per stage its forward, the
 * backward pass the chain waits for (all of it for 1F1B, ZB-H1's input-gradient half B) and
 * ZB-H1's weight-gradient pass W; per boundary q (stage q to q + 1) the link step plus latency
 * of a crossing there (0 inside a site).
 */
export interface RoundTripProfile {
  readonly forwardS: readonly number[];
  readonly backS: readonly number[];
  readonly weightS: readonly number[];
  readonly crossS: readonly number[];
}

/**
 * Eq. 5.8's profile for 1F1B and ZB-H1 (one chunk per stage), undefined for the other schedules
 * (no floor). Each entry is non-decreasing in the stage times, link steps and latencies.
 */
export function roundTripProfile(
  stepS: readonly number[], forwardS: readonly number[], plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>, boundaries: readonly ChainBoundary[],
): RoundTripProfile | undefined {
  if ((plan.schedule !== '1f1b' && plan.schedule !== 'zb-h1') || plan.virtualStages !== 1) return undefined;
  const split = plan.schedule === 'zb-h1';
  const backS = stepS.map((step, j) => (split ? (step - forwardS[j]!) / 2 : step - forwardS[j]!));
  const crossS = new Array<number>(Math.max(0, stepS.length - 1)).fill(0);
  for (const b of boundaries) if (b.virtualStage < crossS.length) crossS[b.virtualStage]! += b.latencyS + b.stepS;
  return { forwardS: [...forwardS], backS, weightS: split ? backS : backS.map(() => 0), crossS };
}

/**
 * Eq. 5.8, a lower bound on the op-by-op span of m microbatches (test/timeline-agreement.test.ts),
 * from chains of the schedule's own precedences. Stage j of p holds n = p - j microbatches: its
 * order runs F(i + n) after B(i) (ZB-H1: and after W(i - j) when i >= j), and stage k >= j runs
 * B(l) right after F(l + p - k - 1). So B_j(i + d), d = k - j + 1, ends at least a window
 * (forwards and backwards of stages j..k, and each crossing between them twice) after B_j(i), for
 * i + n <= m - 1. B_j(0) ends no earlier than the forward fill to j and one round trip through
 * every later stage and crossing; after the chain's last B_j(T d), stage j still runs its other
 * backwards and forwards (and weight passes), and after its last backward the stages before it
 * drain (ZB-H1: stage 0 ends with a W; stage j itself runs min(m, j + 1) more Ws). The floor is the
 * largest over (j, k). With k = j = p - 1 it is eq. 5.1 for equal stages; a crossing's round
 * trip stretches every window across it. Non-decreasing in every time; 0 without a profile.
 */
export function roundTripFloorS(profile: RoundTripProfile | undefined, microbatches: number): number {
  if (!profile || microbatches < 1) return 0;
  const { forwardS: f, backS: b, weightS: w, crossS: x } = profile;
  const p = f.length;
  const m = microbatches;
  // Prefix sums: stage s in [0, j) and boundary q in [0, j).
  const pre = (values: readonly number[]) => { const out = [0]; values.forEach((v, i) => out.push(out[i]! + v)); return out; };
  const F = pre(f);
  const B = pre(b);
  const X = pre(x);
  const stage0WeightS = w[0] ?? 0;
  let floorS = 0;
  for (let j = 0; j < p; j++) {
    const n = p - j;
    const fillS = F[j]! + X[j]!;
    const drainS = B[j]! + X[j]! + stage0WeightS;
    const firstBackwardEndS = fillS + (F[p]! - F[j]!) + (B[p]! - B[j]!) + 2 * (X[p - 1]! - X[j]!);
    const tailS = Math.max(drainS, Math.min(m, j + 1) * w[j]!);
    for (let k = j; k < p; k++) {
      const d = k - j + 1;
      const windowS = (F[k + 1]! - F[j]!) + (B[k + 1]! - B[j]!) + 2 * (X[k]! - X[j]!);
      const steps = m - 1 >= n ? Math.floor((m - 1 - n) / d) + 1 : 0;
      const last = steps * d;
      const stepWeightsS = (steps - Math.min(steps, Math.ceil(j / d))) * w[j]!;
      const chainEndS = firstBackwardEndS + steps * windowS + stepWeightsS;
      // Stage j's ops between B(last) and B(m - 1): backwards, forwards from F(last + n), Ws from W(last - j).
      const betweenS = (m - 1 - last) * b[j]! + Math.max(0, m - last - n) * f[j]! + Math.max(0, m - 1 - j - Math.max(last - j, 0)) * w[j]!;
      floorS = Math.max(floorS, chainEndS + betweenS + tailS);
    }
    if (x.slice(j, j + MIXED_CHAIN_WINDOW - 1).some((cross) => cross > 0)) {
      floorS = Math.max(floorS, mixedChainEndS(profile, j, m, firstBackwardEndS) + tailS);
    }
  }
  return floorS;
}

/** Longest window (stages j..k) a mixed chain takes: few microbatches share a crossing's round trip beyond it. */
const MIXED_CHAIN_WINDOW = 8;

/**
 * Eq. 5.8's mixed chain on stage j, for stages up to MIXED_CHAIN_WINDOW - 1 before a crossing:
 * the end of B_j(i) is at least that of B_j(i - 1) plus the stage's own ops between them (its
 * forward F(i - 1 + n) while there is one, ZB-H1's W(i - 1 - j) once i - 1 >= j, and B itself),
 * and at least that of B_j(i - d) plus the window of stages j..j + d - 1 (as in the single
 * chains), so a chain may wait for the crossing while the stage has little else to do and run
 * at its own pace later. O(m x MIXED_CHAIN_WINDOW) per stage.
 */
function mixedChainEndS(profile: RoundTripProfile, j: number, m: number, firstBackwardEndS: number): number {
  const { forwardS: f, backS: b, weightS: w, crossS: x } = profile;
  const p = f.length;
  const n = p - j;
  const longest = Math.min(MIXED_CHAIN_WINDOW, p - j);
  // windowS[d]: forwards and backwards of stages j..j + d - 1 and each crossing between them twice.
  const windowS = [0];
  for (let d = 1; d <= longest; d++) windowS.push(windowS[d - 1]! + f[j + d - 1]! + b[j + d - 1]! + (d > 1 ? 2 * x[j + d - 2]! : 0));
  const end = [firstBackwardEndS];
  for (let i = 1; i < m; i++) {
    const previous = i - 1;
    let e = end[previous]! + (previous + n <= m - 1 ? f[j]! : 0) + (previous >= j ? w[j]! : 0) + b[j]!;
    for (let d = 2; d <= Math.min(longest, i); d++) {
      const from = i - d;
      if (from + n > m - 1) continue;
      e = Math.max(e, end[from]! + (from >= j ? w[j]! : 0) + windowS[d]!);
    }
    end.push(e);
  }
  return end[m - 1]!;
}
