/**
 * The round-trip floor of a replica's pipeline (docs/cost-model.md §5): how long its chain's
 * cross-site boundaries keep a microbatch away, which no schedule can hide when few
 * microbatches share each crossing (eq. 5.8).
 */
import type { PlanSpec } from './plan-schema';

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
  /** The schedule whose op orders the span floor (eq. 5.11, pipeline-span-floor.ts) simulates; absent: no span floor. */
  readonly schedule?: '1f1b' | 'zb-h1';
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
  return { forwardS: [...forwardS], backS, weightS: split ? backS : backS.map(() => 0), crossS, schedule: plan.schedule };
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
  const { forwardS: f, backS: b, crossS: x } = profile;
  const p = f.length;
  const m = microbatches;
  // Prefix sums: stage s in [0, j) and boundary q in [0, j).
  const sums: ChainSums = { F: prefixSums(f), B: prefixSums(b), X: prefixSums(x) };
  let floorS = 0;
  for (let j = 0; j < p; j++) {
    const { firstBackwardEndS, tailS } = stageEnds(profile, sums, j, m);
    for (let k = j; k < p; k++) {
      floorS = Math.max(floorS, singleChainS(profile, j, k - j + 1, m, firstBackwardEndS, windowOf(sums, j, k), mostWindows(p, j, k, m)) + tailS);
    }
    if (x.slice(j, j + MIXED_CHAIN_WINDOW - 1).some((cross) => cross > 0)) {
      floorS = Math.max(floorS, mixedChainEndS(profile, j, m, firstBackwardEndS) + tailS);
    }
  }
  return floorS;
}

/** Prefix sums of a profile's forwards, backwards and crossings. */
interface ChainSums { readonly F: readonly number[]; readonly B: readonly number[]; readonly X: readonly number[] }

/** Eq. 5.8 at stage j: the end of its first backward (fill, then a round trip through every later stage and crossing) and the tail after its last. */
function stageEnds(profile: RoundTripProfile, { F, B, X }: ChainSums, j: number, m: number): { firstBackwardEndS: number; tailS: number } {
  const { forwardS: f, weightS: w } = profile;
  const p = f.length;
  const fillS = F[j]! + X[j]!;
  const drainS = B[j]! + X[j]! + (w[0] ?? 0);
  return { firstBackwardEndS: fillS + (F[p]! - F[j]!) + (B[p]! - B[j]!) + 2 * (X[p - 1]! - X[j]!), tailS: Math.max(drainS, Math.min(m, j + 1) * w[j]!) };
}

/** The most windows of stages j..k a chain of m microbatches takes: B_j(i) to B_j(i + d) while i + p - j <= m - 1. */
const mostWindows = (p: number, j: number, k: number, m: number): number => (m - 1 >= p - j ? Math.floor((m - 1 - (p - j)) / (k - j + 1)) + 1 : 0);

/** The window of stages j..k: their forwards and backwards, and each crossing between them twice. */
const windowOf = ({ F, B, X }: ChainSums, j: number, k: number): number => (F[k + 1]! - F[j]!) + (B[k + 1]! - B[j]!) + 2 * (X[k]! - X[j]!);

/** A single chain of eq. 5.8 without its tail: B_j(0), t windows of d stages from j, then stage j's own ops to B_j(m - 1). */
function singleChainS(profile: RoundTripProfile, j: number, d: number, m: number, firstBackwardEndS: number, windowS: number, t: number): number {
  const { forwardS: f, backS: b, weightS: w } = profile;
  const n = f.length - j;
  const last = t * d;
  const stepWeightsS = (t - Math.min(t, Math.ceil(j / d))) * w[j]!;
  const chainEndS = firstBackwardEndS + t * windowS + stepWeightsS;
  // Stage j's ops between B(last) and B(m - 1): backwards, forwards from F(last + n), Ws from W(last - j).
  const betweenS = (m - 1 - last) * b[j]! + Math.max(0, m - last - n) * f[j]! + Math.max(0, m - 1 - j - Math.max(last - j, 0)) * w[j]!;
  return chainEndS + betweenS;
}

/**
 * Eq. 5.8's single chains for a replica of at least `microbatches` microbatches, its count known
 * only from below: a chain of {@link roundTripFloorS} may take any number t of windows up to the
 * most its count allows (after B_j(t d) stage j runs the rest of its ops at its own pace), each
 * such chain a lower bound on the span, and with t fixed every term grows with the count. So the
 * largest over (j, k, t) at this count is at most the span of every larger count: non-decreasing
 * in the count, which the chains taking the most windows need not be. A chain is piecewise linear
 * in t, kinked where a max(0, .) term or the weight-pass count changes, so it is evaluated at
 * those kinks and the ends. The mixed chains are left out. For the crossing floor's split
 * replicas (docs/formulation.md §4, step 3(d)); 0 without a profile.
 */
export function roundTripFloorAtLeastS(profile: RoundTripProfile | undefined, microbatches: number): number {
  if (!profile || microbatches < 1) return 0;
  const { forwardS: f, backS: b, crossS: x } = profile;
  const p = f.length;
  const m = microbatches;
  const sums: ChainSums = { F: prefixSums(f), B: prefixSums(b), X: prefixSums(x) };
  let floorS = 0;
  // The window counts to try at each (j, k): the ends and both sides of each kink, without repeats.
  const ts = new Int32Array(12);
  for (let j = 0; j < p; j++) {
    const { firstBackwardEndS, tailS } = stageEnds(profile, sums, j, m);
    const n = p - j;
    for (let k = j; k < p; k++) {
      const d = k - j + 1;
      const most = mostWindows(p, j, k, m);
      let count = 0;
      const tryAt = (t: number) => {
        if (t < 0 || t > most) return;
        for (let i = 0; i < count; i++) if (ts[i] === t) return;
        ts[count++] = t;
      };
      tryAt(0);
      tryAt(most);
      for (const kink of [(m - n) / d, j / d, (m - 1) / d]) { tryAt(Math.floor(kink)); tryAt(Math.ceil(kink)); }
      const windowS = windowOf(sums, j, k);
      for (let i = 0; i < count; i++) floorS = Math.max(floorS, singleChainS(profile, j, d, m, firstBackwardEndS, windowS, ts[i]!) + tailS);
    }
  }
  return floorS;
}

/** out[i] = sum of values[0..i): stage s in [0, j) and boundary q in [0, j). */
function prefixSums(values: readonly number[]): number[] {
  const out = [0];
  values.forEach((v, i) => out.push(out[i]! + v));
  return out;
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

/**
 * A line of eq. 5.8 in one link's step L: the chain that attains the floor when every boundary
 * routed over the link takes `atStepS` more, its value there and how many of those link steps it
 * waits out (its slope in L). Every chain of eq. 5.8 is a lower bound on the span at any link step,
 * and its value is linear in L with that slope, so `valueS + linkSteps x (L - atStepS)` is at most
 * the floor, hence at most the span, at every L >= 0: the tangent rows of the placement MIP
 * (docs/formulation.md §3, F6) take it at several steps, where the round-trip row charges each
 * crossing once.
 */
export interface FloorLine {
  readonly valueS: number;
  readonly linkSteps: number;
}

/** A chain's end as a line in L: value at the tangent step and slope. */
interface Affine { readonly v: number; readonly s: number }

const later = (a: Affine, b: Affine): Affine => (b.v > a.v || (b.v === a.v && b.s > a.s) ? b : a);

/**
 * {@link roundTripFloorS} of `profile` with `atStepS` added to each boundary q where `onLink[q]`,
 * and the slope in that step of the chain attaining it (the same chains, the same order of
 * operations: its value equals roundTripFloorS of the shifted profile, test/timeline-agreement.test.ts).
 * Kept beside roundTripFloorS rather than under it: carrying a slope through every chain takes
 * 2-3x its time (p 4-32), and the cost model's evaluations call that one; only the MIP's tangent
 * rows and the outer bound need the slope.
 */
export function roundTripFloorLine(profile: RoundTripProfile | undefined, microbatches: number, onLink: readonly boolean[], atStepS: number): FloorLine {
  if (!profile || microbatches < 1) return { valueS: 0, linkSteps: 0 };
  const { forwardS: f, backS: b, weightS: w } = profile;
  const x = profile.crossS.map((cross, q) => cross + (onLink[q] ? atStepS : 0));
  const u = profile.crossS.map((_, q) => (onLink[q] ? 1 : 0));
  const p = f.length;
  const m = microbatches;
  const F = prefixSums(f);
  const B = prefixSums(b);
  const X = prefixSums(x);
  const U = prefixSums(u);
  const stage0WeightS = w[0] ?? 0;
  let floor: Affine = { v: 0, s: 0 };
  for (let j = 0; j < p; j++) {
    const n = p - j;
    const fill: Affine = { v: F[j]! + X[j]!, s: U[j]! };
    const drain: Affine = { v: B[j]! + X[j]! + stage0WeightS, s: U[j]! };
    const firstBackwardEnd: Affine = {
      v: fill.v + (F[p]! - F[j]!) + (B[p]! - B[j]!) + 2 * (X[p - 1]! - X[j]!),
      s: fill.s + 2 * (U[p - 1]! - U[j]!),
    };
    const tail = later(drain, { v: Math.min(m, j + 1) * w[j]!, s: 0 });
    for (let k = j; k < p; k++) {
      const d = k - j + 1;
      const windowS = (F[k + 1]! - F[j]!) + (B[k + 1]! - B[j]!) + 2 * (X[k]! - X[j]!);
      const windowSteps = 2 * (U[k]! - U[j]!);
      const steps = m - 1 >= n ? Math.floor((m - 1 - n) / d) + 1 : 0;
      const last = steps * d;
      const stepWeightsS = (steps - Math.min(steps, Math.ceil(j / d))) * w[j]!;
      const chainEndS = firstBackwardEnd.v + steps * windowS + stepWeightsS;
      const betweenS = (m - 1 - last) * b[j]! + Math.max(0, m - last - n) * f[j]! + Math.max(0, m - 1 - j - Math.max(last - j, 0)) * w[j]!;
      floor = later(floor, { v: chainEndS + betweenS + tail.v, s: firstBackwardEnd.s + steps * windowSteps + tail.s });
    }
    if (x.slice(j, j + MIXED_CHAIN_WINDOW - 1).some((cross) => cross > 0)) {
      const mixed = mixedChainEndLine(profile, x, u, j, m, firstBackwardEnd);
      floor = later(floor, { v: mixed.v + tail.v, s: mixed.s + tail.s });
    }
  }
  return { valueS: floor.v, linkSteps: floor.s };
}

/** {@link mixedChainEndS} on the shifted crossings `x`, with the slope of the path attaining it (`u`: 1 where a boundary is on the link). */
function mixedChainEndLine(profile: RoundTripProfile, x: readonly number[], u: readonly number[], j: number, m: number, firstBackwardEnd: Affine): Affine {
  const { forwardS: f, backS: b, weightS: w } = profile;
  const p = f.length;
  const n = p - j;
  const longest = Math.min(MIXED_CHAIN_WINDOW, p - j);
  const windowS = [0];
  const windowSteps = [0];
  for (let d = 1; d <= longest; d++) {
    windowS.push(windowS[d - 1]! + f[j + d - 1]! + b[j + d - 1]! + (d > 1 ? 2 * x[j + d - 2]! : 0));
    windowSteps.push(windowSteps[d - 1]! + (d > 1 ? 2 * u[j + d - 2]! : 0));
  }
  const end: Affine[] = [firstBackwardEnd];
  for (let i = 1; i < m; i++) {
    const previous = i - 1;
    let e: Affine = { v: end[previous]!.v + (previous + n <= m - 1 ? f[j]! : 0) + (previous >= j ? w[j]! : 0) + b[j]!, s: end[previous]!.s };
    for (let d = 2; d <= Math.min(longest, i); d++) {
      const from = i - d;
      if (from + n > m - 1) continue;
      e = later(e, { v: end[from]!.v + (from >= j ? w[j]! : 0) + windowS[d]!, s: end[from]!.s + windowSteps[d]! });
    }
    end.push(e);
  }
  return end[m - 1]!;
}
