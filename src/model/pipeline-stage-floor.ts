/**
 * The stage floor of 1F1B and ZB-H1 (docs/cost-model.md eq. 5.9): lower bounds on the op-by-op
 * span that, unlike the closed form (eq. 5.1, 5.3), charge only the fill and drain that every
 * schedule of those orders must wait for, so that the cost model can report the span itself and
 * the planner's bounds (docs/formulation.md §2-4) stay below it.
 */
import type { PlanSpec } from './plan-schema';
import type { RoundTripProfile } from './pipeline-round-trip';

/** The schedules whose reported phase is the op-by-op span, every planner bound being built on eq. 5.8-5.9. */
export const hasStageFloor = (plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>): boolean =>
  (plan.schedule === '1f1b' || plan.schedule === 'zb-h1') && plan.virtualStages === 1;

/**
 * Stage j's chain terms of eq. 5.9a: the fill (forwards and crossings before it), the drain (the
 * backwards and crossings before it and stage 0's W) and its first backward's round trip (every
 * later stage forward and backward, each crossing after it twice).
 */
function chainOfStage(profile: RoundTripProfile, j: number): { fillS: number; drainS: number; roundTripS: number } {
  const { forwardS: f, backS: b, weightS: w, crossS: x } = profile;
  let fillS = 0;
  let drainS = j > 0 ? w[0]! : 0;
  for (let i = 0; i < j; i++) { fillS += f[i]! + x[i]!; drainS += b[i]! + x[i]!; }
  let roundTripS = 0;
  for (let i = j + 1; i < f.length; i++) roundTripS += f[i]! + b[i]! + 2 * x[i - 1]!;
  return { fillS, drainS, roundTripS };
}

/**
 * Eq. 5.9a, the floor through stage j of m microbatches: stage j's first op is F(0), which waits
 * for the forwards of stages 0..j-1 and the crossings between them (`fill`); then it runs its m
 * forwards, backwards and weight passes one at a time (form A); and after its last backward B(m-1)
 * it runs exactly min(m, j + 1) weight passes (ZB-H1; none for 1F1B), while B(m-1) still has to
 * travel back through stages j-1..0 and their crossings, and stage 0 ends with its W (form B);
 * form C also waits for its first backward's round trip (stageFormsS).
 * `stepS[j]` is at least f + b + w of stage j. Non-decreasing in every time and in m: the planner's
 * bounds may call it with optimistic times and the fewest microbatches.
 */
export function stageLineS(profile: RoundTripProfile, stepS: readonly number[], j: number, m: number): number {
  const { forwardS: f, backS: b, weightS: w } = profile;
  const { fillS, drainS, roundTripS } = chainOfStage(profile, j);
  return stageFormsS(fillS, drainS, roundTripS, stepS[j]!, f[j]!, b[j]!, w[j]!, j, f.length, m);
}

/**
 * Eq. 5.9a's form C alone through stage j: it passes every crossing twice (those before j on fill
 * and drain, those after it on the first backward's round trip), so at zero link step plus twice
 * each crossing's link step it is still at most the span. The MIP's link-step row of the lines.
 */
export function roundTripLineS(profile: RoundTripProfile, j: number, m: number): number {
  const { forwardS: f, backS: b, weightS: w } = profile;
  const { fillS, drainS, roundTripS } = chainOfStage(profile, j);
  return fillS + f[j]! + roundTripS + m * b[j]! + Math.max(0, m - (f.length - j)) * f[j]! + (m - Math.min(m, j + 1)) * w[j]! + drainS;
}

/**
 * Eq. 5.9a's three forms for stage j of p with m microbatches, from its fill, drain and the round
 * trip through the later stages and crossings: A, fill + m S_j; B, fill + all of stage j's ops
 * before its last backward + drain; C, B with its first backward waiting for the round trip: B(0)
 * ends no earlier than fill + F_j + round trip + B_j, after which stage j runs its other m - 1
 * backwards, the forwards from F(p - j) on (it holds p - j microbatches) and the weight passes
 * before its last backward. Every coefficient is non-negative.
 */
function stageFormsS(fillS: number, drainS: number, roundTripS: number, stepS: number, f: number, b: number, w: number, j: number, p: number, m: number): number {
  const weightsBeforeS = (m - Math.min(m, j + 1)) * w;
  const formA = fillS + m * stepS;
  const formB = fillS + m * (f + b) + weightsBeforeS + drainS;
  const formC = fillS + f + roundTripS + m * b + Math.max(0, m - (p - j)) * f + weightsBeforeS + drainS;
  return Math.max(formA, formB, formC);
}

/**
 * Eq. 5.9b, the floor through a crossing at boundary q whose link direction takes `linkStepS` per
 * microbatch: the m forward sends over it queue one after the other, the first after the forwards
 * of stages 0..q; the last microbatch then runs every later stage forward and backward, comes back
 * over the crossing, and runs the backwards of stages q..0 and stage 0's W. With x the crossings'
 * latency plus link step: sum f + sum b + w_0 + 2 sum x + (m - 1) x the link step.
 */
export function linkLineS(profile: RoundTripProfile, linkStepS: number, m: number): number {
  const { forwardS: f, backS: b, weightS: w, crossS: x } = profile;
  let chainS = w[0] ?? 0;
  f.forEach((fj, j) => { chainS += fj + b[j]!; });
  for (const cross of x) chainS += 2 * cross;
  return chainS + (m - 1) * linkStepS;
}

/** Eq. 5.9: the largest of the stage lines and of the link lines (one per crossing's link step). */
export function stageFloorS(profile: RoundTripProfile, stepS: readonly number[], linkStepsS: readonly number[], m: number): number {
  if (m < 1) return 0;
  let floorS = 0;
  for (let j = 0; j < stepS.length; j++) floorS = Math.max(floorS, stageLineS(profile, stepS, j, m));
  for (const step of linkStepsS) floorS = Math.max(floorS, linkLineS(profile, step, m));
  return floorS;
}

/**
 * What the planner's rows take of eq. 5.9 for one layout (docs/formulation.md §2): with j* the last
 * slowest stage, k x its step plus `bubbleS` plus each crossing before j* charged `passes` times
 * (latency and link step) is at most eq. 5.9a's line through j* for every k >= 1 (form B's
 * min(k, j* + 1) weight passes are at most j* + 1 of them); `chainS` (sum f + sum b + w_0) plus
 * twice every crossing plus (k - 1) link steps is eq. 5.9b.
 */
export interface StageFloorTerms {
  readonly bubbleS: number;
  /** How many times each crossing before the slowest stage is charged: 2 with form B, 1 with form A. */
  readonly passesBefore: number;
  /** The last boundary q (stage q to q + 1) before the slowest stage; crossings after it are not charged. */
  readonly lastBoundaryBefore: number;
  readonly chainS: number;
}

export function stageFloorTerms(profile: RoundTripProfile, stepS: readonly number[]): StageFloorTerms {
  const { forwardS: f, backS: b, weightS: w, crossS: x } = profile;
  const maxStep = Math.max(...stepS);
  const j = stepS.lastIndexOf(maxStep);
  let forwards = 0;
  let backwards = j > 0 ? w[0]! : 0;
  let crossS = 0;
  for (let i = 0; i < j; i++) { forwards += f[i]!; backwards += b[i]!; crossS += x[i]!; }
  // Form A: fill only; form B: fill, drain, less the weight passes after the last backward.
  const formA = forwards;
  const formB = forwards + backwards - (j + 1) * w[j]!;
  const useB = formB >= 0 && formB + 2 * crossS >= formA + crossS;
  let chainS = w[0] ?? 0;
  f.forEach((fj, i) => { chainS += fj + b[i]!; });
  return { bubbleS: useB ? formB : formA, passesBefore: useB ? 2 : 1, lastBoundaryBefore: j - 1, chainS };
}

/**
 * Eq. 5.9a for a replica of k microbatches whose stage j takes at least `fastestS[j]` with a forward
 * share among `forwardShares[j]` (one per site it may run on), without crossings: each stage line
 * at the least forward, backward and weight pass those allow (every term of eq. 5.9a has a
 * non-negative coefficient), the largest over stages. The quick bound of 1F1B and ZB-H1.
 */
export function stageFloorAtLeastS(
  plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>, fastestS: readonly number[], forwardShares: readonly (readonly number[])[], k: number,
): number {
  if (!(k < Infinity)) return Infinity; // no microbatch count fits: as k x the slowest step
  const split = plan.schedule === 'zb-h1';
  // stageLineS with no crossings, stage by stage with running sums (O(p): the enumeration asks per candidate).
  const p = fastestS.length;
  const f: number[] = [];
  const b: number[] = [];
  let allS = 0;
  for (let j = 0; j < p; j++) {
    let least = Infinity;
    let most = -Infinity;
    for (const share of forwardShares[j]!) { least = Math.min(least, share); most = Math.max(most, share); }
    f.push(fastestS[j]! * least);
    b.push((fastestS[j]! * (1 - most)) / (split ? 2 : 1));
    allS += f[j]! + b[j]!;
  }
  let fillS = 0;
  let backsS = 0;
  let floorS = 0;
  for (let j = 0; j < p; j++) {
    const w = split ? b[j]! : 0;
    const drainS = backsS + (j > 0 && split ? b[0]! : 0);
    const roundTripS = allS - fillS - backsS - f[j]! - b[j]!;
    floorS = Math.max(floorS, stageFormsS(fillS, drainS, roundTripS, fastestS[j]!, f[j]!, b[j]!, w, j, p, k));
    fillS += f[j]!;
    backsS += b[j]!;
  }
  return floorS;
}

/**
 * The quick bound's bubble beside the fluid bound (1F1B and ZB-H1): every stage line is at most
 * the span, so their mean is too: span >= k x mean_j S_j + mean_j P_j, P_j the line's part without
 * k S_j (1F1B: the steps of the stages before j, fill and drain; ZB-H1: their forwards, form A) at
 * the least times `fastestS` and `forwardShares` allow. The replica's rate 1 / mean_j S_j is at
 * most the mean of its stages' rates (the harmonic mean is at most the arithmetic one), which the
 * fluid bound caps, so the fluid bound plus mean_j P_j bounds the iteration.
 */
export function stageFloorFluidBubbleS(plan: Pick<PlanSpec, 'schedule'>, fastestS: readonly number[], forwardShares: readonly (readonly number[])[]): number {
  let prefixS = 0;
  let sumS = 0;
  fastestS.forEach((s, j) => {
    sumS += prefixS;
    prefixS += plan.schedule === 'zb-h1' ? s * Math.min(...forwardShares[j]!) : s;
  });
  return fastestS.length > 0 ? sumS / fastestS.length : 0;
}
