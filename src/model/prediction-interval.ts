/**
 * Prediction intervals for predicted iteration time and memory per GPU, from calibration
 * residuals (docs/cost-model.md §7, prediction intervals). Pure: no I/O. A residual is the
 * relative error predicted / measured - 1 of one calibration row or measured run; the interval
 * says where the measured value of a new job should fall, given how far the model missed on jobs
 * it had not been fitted to.
 *
 * Method, in log space (r = log(predicted / measured), so measured = predicted / e^r):
 * - n >= 2 / (1 - level) - 1 residuals (19 at 90%): distribution-free order statistics. For n
 *   exchangeable residuals, a new one lies between the j-th smallest and the j-th largest with
 *   probability (n + 1 - 2j) / (n + 1); j = floor((n + 1)(1 - level) / 2) is the largest j whose
 *   coverage is at least `level`.
 * - 2 <= n below that: no order statistic reaches the level, so a Student-t prediction interval
 *   centred on the prediction: half-width t(n-1, (1 + level)/2) x sqrt(1 + 1/n) x s, with
 *   s^2 = sum r^2 / (n - 1) (the spread about zero, so a bias of the runs widens the interval
 *   rather than moving it) and s at least `minSpreadLog`.
 * - fewer than 2: no interval from these residuals (the caller falls back to others).
 * Either way the interval contains the point estimate: a bound that excluded the model's own
 * prediction would be a correction of the model, which is calibration's job, not the interval's.
 */

import { BUILT_IN_RESIDUALS, type ResidualRow } from './calibration-residuals';
import type { Scenario } from './scenario';
import { attentionCoreShare } from './transformer-flops';

export const DEFAULT_INTERVAL_LEVEL = 0.9;

/** Student t quantiles computed so far (declared before the built-in model, which needs them at load). */
const quantileMemo = new Map<string, number>();

/**
 * Memory interval when no measured memory is available (none of the 60 published calibration
 * rows reports memory): +-5% of the predicted peak, set by hand (docs/cost-model.md §7).
 */
export const MEMORY_FIXED_RELATIVE_ALLOWANCE = 0.05;

/** Floor of a profile's residual spread in the small-sample rule: run-to-run variation of measured iteration times (the profile's residualSigma floor). */
export const PROFILE_MIN_SPREAD_LOG = 0.02;

export type IntervalMethod = 'order-statistics' | 'student-t' | 'fixed-allowance';

/** An interval as multipliers of the point estimate: low = predicted x lowRatio, high = predicted x highRatio; lowRatio <= 1 <= highRatio. */
export interface IntervalRatios {
  readonly level: number;
  readonly method: IntervalMethod;
  /** Residuals the interval comes from (0 for a fixed allowance). */
  readonly n: number;
  readonly lowRatio: number;
  readonly highRatio: number;
}

/** Residuals an interval is computed from: relative errors predicted / measured - 1. */
export interface ResidualSet {
  /** What the residuals are (shown in output): e.g. "built-in calibration, 60 rows left out by table". */
  readonly basis: string;
  readonly timeErrors: readonly number[];
  /** Memory errors; fewer than 2 means the fixed allowance is used. */
  readonly memoryErrors: readonly number[];
  /** Floor of the log spread in the small-sample rule (0: none). */
  readonly minSpreadLog?: number;
}

/** The interval of a predicted iteration time. */
export interface TimeInterval {
  readonly lowS: number;
  readonly highS: number;
  readonly level: number;
  /** The residuals it comes from (the rows of the job's class for the built-in interval, or a profile's runs). */
  readonly basis: string;
  /** Why it is wide, for a job of the built-in attention-heavy class ({@link attentionHeavyNote}). */
  readonly note?: string;
}

/** The interval of a predicted memory per GPU. */
export interface MemoryInterval {
  readonly lowGiB: number;
  readonly highGiB: number;
  readonly level: number;
}

/** Smallest number of residuals whose order statistics reach `level`. */
export const orderStatisticMinimum = (level: number): number => Math.ceil(2 / (1 - level) - 1 - 1e-9);

/**
 * The interval ratios that the residuals `errors` (predicted / measured - 1) give at `level`, or
 * undefined with fewer than 2 finite residuals.
 */
export function intervalRatios(errors: readonly number[], level = DEFAULT_INTERVAL_LEVEL, minSpreadLog = 0): IntervalRatios | undefined {
  if (!(level > 0 && level < 1)) throw new RangeError(`interval level must be in (0, 1), got ${level}`);
  const logs = errors.filter((e) => Number.isFinite(e) && e > -1).map((e) => Math.log1p(e)).sort((a, b) => a - b);
  const n = logs.length;
  if (n < 2) return undefined;
  const j = Math.floor((n + 1) * (1 - level) / 2 + 1e-9);
  let lowLog: number;
  let highLog: number;
  let method: IntervalMethod;
  if (j >= 1) {
    method = 'order-statistics';
    lowLog = Math.min(0, logs[j - 1]!);
    highLog = Math.max(0, logs[n - j]!);
  } else {
    method = 'student-t';
    const s = Math.max(minSpreadLog, Math.sqrt(logs.reduce((sum, r) => sum + r * r, 0) / (n - 1)));
    const half = studentTQuantile((1 + level) / 2, n - 1) * Math.sqrt(1 + 1 / n) * s;
    lowLog = -half;
    highLog = half;
  }
  // measured = predicted / e^r: the residual's low quantile bounds the measured value from above.
  return { level, method, n, lowRatio: Math.exp(-highLog), highRatio: Math.exp(-lowLog) };
}

/** A fixed symmetric relative allowance (the memory interval without measured memory). */
export const fixedAllowance = (relative: number, level = DEFAULT_INTERVAL_LEVEL): IntervalRatios =>
  ({ level, method: 'fixed-allowance', n: 0, lowRatio: 1 - relative, highRatio: 1 + relative });

/** Time and memory interval ratios of one residual set. */
export interface IntervalModel {
  readonly basis: string;
  /** Every job's time interval, or with `attentionHeavy` that of the jobs below its share. */
  readonly time: IntervalRatios;
  readonly memory: IntervalRatios;
  /**
   * The time interval of attention-heavy jobs (attention core at least {@link ATTENTION_HEAVY_SHARE}
   * of model FLOPs), from the residuals of such jobs alone (the built-in model; a profile's runs
   * are the user's own jobs and take one interval).
   */
  readonly attentionHeavy?: { readonly basis: string; readonly time: IntervalRatios };
}

/**
 * A job whose attention core (score and context products) is at least this share of its model
 * FLOPs is attention-heavy. The fused attention kernel's efficiency is the constant only one
 * published table pins (the long-context table, docs/cost-model.md §7): fitted without it, it
 * lands at 0.46-0.52 of peak against that table's 0.30, a factor of 1.5-1.7 on the kernel's
 * time, so for such a job that constant alone moves the prediction by about one side of the other
 * rows' 90% band (more in fp8, whose GEMMs take less of the time). Every threshold above 0.1252
 * and at most 0.2093 splits the 60 rows the same way (none lies between).
 */
export const ATTENTION_HEAVY_SHARE = 0.15;

/** What of a job its interval depends on. */
export interface IntervalJob {
  /** Share of the job's model FLOPs in the attention core (transformer-flops.ts attentionCoreShare). */
  readonly attentionCoreShare: number;
}

/** Attention-core shares computed so far, by model object and sequence (evaluate asks once per plan). */
const shareMemo = new WeakMap<Scenario['model'], Map<number, number>>();

/** The interval features of a scenario's job (they do not depend on the plan). */
export function intervalJobOf(scenario: Pick<Scenario, 'model' | 'training'>): IntervalJob {
  let bySeq = shareMemo.get(scenario.model);
  if (!bySeq) { bySeq = new Map(); shareMemo.set(scenario.model, bySeq); }
  let share = bySeq.get(scenario.training.seqLen);
  if (share === undefined) { share = attentionCoreShare(scenario.model, scenario.training.seqLen); bySeq.set(scenario.training.seqLen, share); }
  return { attentionCoreShare: share };
}

/** Whether a job takes the attention-heavy interval of a model that has one. */
export const isAttentionHeavy = (job: IntervalJob): boolean => job.attentionCoreShare >= ATTENTION_HEAVY_SHARE;

/** The interval model of `residuals`, or undefined when it has fewer than 2 time residuals. */
export function intervalModel(residuals: ResidualSet, level = DEFAULT_INTERVAL_LEVEL): IntervalModel | undefined {
  const time = intervalRatios(residuals.timeErrors, level, residuals.minSpreadLog ?? 0);
  if (!time) return undefined;
  const memory = intervalRatios(residuals.memoryErrors, level, residuals.minSpreadLog ?? 0) ?? fixedAllowance(MEMORY_FIXED_RELATIVE_ALLOWANCE, level);
  return { basis: residuals.basis, time, memory };
}

/** Iteration-time relative error of a row whose metric is a time (error as is) or a rate (tokens/s, TFLOP/s, MFU: the time ratio is its inverse). */
export const timeErrorOf = (metricIsTime: boolean, relativeError: number): number => (metricIsTime ? relativeError : 1 / (1 + relativeError) - 1);

const sharePercent = `${Math.round(100 * ATTENTION_HEAVY_SHARE)}%`;

/** The residuals of some built-in calibration rows: their leave-one-source-out errors (generated by `npm run calibration`). */
const residualSetOf = (rows: readonly ResidualRow[], which: string): ResidualSet => ({
  basis: `built-in calibration: ${rows.length} published rows${which}, each predicted with its table left out of the fit`,
  timeErrors: rows.map((r) => r.losoTimeError),
  memoryErrors: [],
});

/** The residuals of the built-in calibration: the 60 rows' leave-one-source-out errors, all of them. */
export const builtInResidualSet = (): ResidualSet => residualSetOf(BUILT_IN_RESIDUALS.rows, '');

/**
 * The built-in residuals of one job class: the rows whose attention core is at least
 * {@link ATTENTION_HEAVY_SHARE} of model FLOPs (`heavy`), or the others.
 */
export const builtInClassResidualSet = (heavy: boolean): ResidualSet => residualSetOf(
  BUILT_IN_RESIDUALS.rows.filter((r) => isAttentionHeavy(r) === heavy),
  heavy ? ` whose attention core is at least ${sharePercent} of model FLOPs` : ` whose attention core is under ${sharePercent} of model FLOPs`,
);

/**
 * The built-in interval model, by class (Mondrian): a job's interval comes from the residuals of
 * the rows of its own class, so the rows whose errors the fused attention's efficiency sets do
 * not widen the interval of jobs that spend little time in it, and are all that sets it for jobs
 * that spend much (docs/cost-model.md §7). Within a class the rules are those of
 * {@link intervalRatios}; its coverage holds for a job exchangeable with its class's rows.
 */
function builtInModel(): IntervalModel {
  const light = intervalModel(builtInClassResidualSet(false))!;
  const heavy = intervalModel(builtInClassResidualSet(true))!;
  return { ...light, attentionHeavy: { basis: heavy.basis, time: heavy.time } };
}

const BUILT_IN_MODEL = builtInModel();

/** The built-in interval model (the committed constants). */
export const builtInIntervalModel = (): IntervalModel => BUILT_IN_MODEL;

/**
 * The interval model predictions carry: the built-in one, or a profile's while it is applied
 * (src/calibration/apply-profile.ts), as the CALIBRATION constants are.
 */
let active: IntervalModel = BUILT_IN_MODEL;

export const activeIntervalModel = (): IntervalModel => active;

/** Sets the interval model predictions carry; returns the function that restores the previous one. */
export function setActiveIntervalModel(model: IntervalModel): () => void {
  const saved = active;
  active = model;
  return () => { active = saved; };
}

/** The time interval ratios `model` gives `job`, and the residuals they come from. */
export function timeRatiosFor(job: IntervalJob, model: IntervalModel = active): { readonly ratios: IntervalRatios; readonly basis: string } {
  if (model.attentionHeavy && isAttentionHeavy(job)) return { ratios: model.attentionHeavy.time, basis: model.attentionHeavy.basis };
  return { ratios: model.time, basis: model.basis };
}

/** Notes written so far, by interval model and attention-core share. */
const noteMemo = new WeakMap<IntervalModel, Map<number, string>>();

/**
 * Why a job's interval is as wide as it is, when it is the attention-heavy class's (undefined
 * otherwise): its share, and the rows the interval comes from.
 */
export function attentionHeavyNote(job: IntervalJob, model: IntervalModel = active): string | undefined {
  if (!model.attentionHeavy || !isAttentionHeavy(job)) return undefined;
  // Every evaluation of a heavy job asks (the planner's screening among them): the text once per model and share.
  let byShare = noteMemo.get(model);
  if (!byShare) { byShare = new Map(); noteMemo.set(model, byShare); }
  let note = byShare.get(job.attentionCoreShare);
  if (note === undefined) {
    note = `the attention core is ${(100 * job.attentionCoreShare).toFixed(0)}% of this job's model FLOPs; the ${model.attentionHeavy.time.n} published rows at ${sharePercent} or more, each predicted with its table left out of the fit, set it (the fused attention's speed is what the published rows pin least)`;
    byShare.set(job.attentionCoreShare, note);
  }
  return note;
}


/** The interval of `job`'s predicted iteration time `predictedS`. */
export function timeInterval(predictedS: number, job: IntervalJob, model: IntervalModel = active): TimeInterval {
  const { ratios, basis } = timeRatiosFor(job, model);
  const note = attentionHeavyNote(job, model);
  return { lowS: predictedS * ratios.lowRatio, highS: predictedS * ratios.highRatio, level: ratios.level, basis, ...(note ? { note } : {}) };
}

export const memoryInterval = (predictedGiB: number, model: IntervalModel = active): MemoryInterval =>
  ({ lowGiB: predictedGiB * model.memory.lowRatio, highGiB: predictedGiB * model.memory.highRatio, level: model.memory.level });

/** A plan that fits the model but whose memory interval reaches past the capacity: "may not fit". */
export const mayNotFit = (memoryGiB: number, capacityGiB: number, model: IntervalModel = active): boolean =>
  memoryGiB <= capacityGiB && memoryGiB * model.memory.highRatio > capacityGiB;

// Student t quantile: regularised incomplete beta (continued fraction, Numerical Recipes §6.4) and bisection.

function logGamma(x: number): number {
  const c = [76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5];
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.000000000190015;
  for (const ci of c) ser += ci / ++y;
  return -tmp + Math.log(2.5066282746310005 * ser / x);
}

function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - (a + b) * x / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d; if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c; if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d; h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d; if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c; if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-14) break;
  }
  return h;
}

function regularisedBeta(a: number, b: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? front * betaContinuedFraction(a, b, x) / a : 1 - front * betaContinuedFraction(b, a, 1 - x) / b;
}

/** Cumulative distribution of Student's t with `df` degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  const tail = 0.5 * regularisedBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

/** The p-quantile of Student's t with `df` degrees of freedom (p in (0, 1)). */
export function studentTQuantile(p: number, df: number): number {
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  const key = `${p}:${df}`;
  let q = quantileMemo.get(key);
  if (q === undefined) {
    q = bisectTQuantile(p, df);
    if (quantileMemo.size < 1000) quantileMemo.set(key, q);
  }
  return q;
}

function bisectTQuantile(p: number, df: number): number {
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}
