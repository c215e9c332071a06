/**
 * User calibration (`scaleacross calibrate`): fits the cost model's efficiency factors to a few
 * runs measured on the user's own cluster, with a prior that pulls each factor towards its
 * committed value (docs/cost-model.md §7, user calibration). Pure: the runs come parsed.
 *
 * Objective, minimised by the coordinate search of fit.ts inside each factor's physical range:
 *   sum over runs of huber(log(predicted / measured))
 * + sum over link measurements of huber(log(modelled bus bandwidth / measured))
 * + priorWeight * sum over fitted factors of 0.5 * log(value / committed)^2
 * The Huber loss is fit.ts's (quadratic below 10%), so with the default weight 1 moving a factor by 10% costs as much as
 * one run predicted 10% off: one run alone moves a factor about half way to where it wants it,
 * three runs that agree about three quarters of the way.
 */
import { CALIBRATION } from '../model/calibration-constants';
import type { CalibrationProfile } from '../model/calibration-profile-schema';
import { evaluate } from '../model/evaluate';
import type { Scenario } from '../model/scenario';
import { coordinateSearch, FITTED_PARAMETERS, huber, type ConstantSet, type FittedParameter } from './fit';

/** The factors a user calibration may move: fit.ts's nine plus the bus and link efficiencies, each in its physical range. */
export const USER_FACTORS: readonly FittedParameter[] = [
  ...FITTED_PARAMETERS,
  { key: 'scaleUpBusEfficiency', min: 0.3, max: 1 },
  { key: 'scaleOutBusEfficiency', min: 0.2, max: 1 },
  { key: 'crossSiteLinkEfficiency', min: 0.05, max: 1 },
];

export type RunMetric = 'iterationTimeS' | 'tokensPerSecondPerGpu' | 'mfu';

/** A measured run, parsed: its scenario and plan are valid (the plan evaluates). */
export interface UserRun {
  readonly source: string;
  readonly scenario: Scenario;
  readonly plan: unknown;
  readonly metric: RunMetric;
  readonly measured: number;
  readonly memoryGiBPerGpu?: number;
}

/** A bandwidth measurement mapped to the factor it measures. */
export interface LinkMeasurement {
  readonly source: string;
  readonly factor: 'scaleOutBusEfficiency' | 'crossSiteLinkEfficiency';
  /** What the factor multiplies: the link's bandwidth, or the site's NIC rate, GB/s. */
  readonly nominalGBps: number;
  readonly busBandwidthGBps: number;
  readonly messageBytes: number;
}

/** Weight of the prior: 1 makes moving a factor by 10% cost as much as one run predicted 10% off. */
export const DEFAULT_PRIOR_WEIGHT = 1;
/** Fewest measured runs for fitting the compute factors (without runs, link measurements alone fit their link factors). */
export const MIN_RUNS = 3;
/** A factor is identified when changing it by 10% moves some run's prediction (or a link measurement) by at least 0.1% */
const SENSITIVITY_THRESHOLD = 0.01;
/** Floor of the assumed spread of a run's log error (run-to-run variation of measured iteration times). */
const MIN_RESIDUAL_SIGMA = 0.02;

const mutable = CALIBRATION as unknown as Record<string, number>;

/** Runs `f` with the given factors set, restoring every one of them afterwards. */
export function withFactors<T>(values: ConstantSet, f: () => T): T {
  const saved = Object.fromEntries(Object.keys(values).map((k) => [k, mutable[k]!]));
  Object.assign(mutable, values);
  try {
    return f();
  } finally {
    Object.assign(mutable, saved);
  }
}

/** The run's metric as the model predicts it with the current constants. */
export function predictRun(run: UserRun): { value: number; memoryGiBPerGpu: number; fits: boolean } {
  const result = evaluate(run.scenario, run.plan);
  return { value: result.predicted[run.metric], memoryGiBPerGpu: result.predicted.memoryGiBPerGpu, fits: result.fits };
}

const logError = (predicted: number, measured: number): number => {
  const e = Math.log(predicted / measured);
  return Number.isFinite(e) ? e : 10;
};

/** Log distance of a value from its prior, safe for factors whose range reaches 0. */
const priorDistance = (value: number, prior: number): number => Math.log(Math.max(value, 0.01 * prior) / prior);

function objective(runs: readonly UserRun[], links: readonly LinkMeasurement[], fitted: readonly FittedParameter[], prior: ConstantSet, values: ConstantSet, priorWeight: number): number {
  return withFactors(values, () => {
    let sum = 0;
    for (const run of runs) sum += huber(logError(predictRun(run).value, run.measured));
    for (const link of links) sum += huber(logError(link.nominalGBps * mutable[link.factor]!, link.busBandwidthGBps));
    for (const p of fitted) sum += 0.5 * priorWeight * priorDistance(values[p.key]!, prior[p.key]!) ** 2;
    return sum;
  });
}

/** Largest |d log(prediction)| over the runs and link measurements when the factor moves by about 10%, per unit of d log(factor). */
export function sensitivity(p: FittedParameter, runs: readonly UserRun[], links: readonly LinkMeasurement[], prior: ConstantSet): number {
  const base = prior[p.key]!;
  let moved = Math.min(p.max, base * 1.1);
  if (p.integer) moved = Math.min(p.max, Math.max(Math.round(moved), base + 1));
  if (moved === base) moved = Math.max(p.min, p.integer ? base - 1 : base / 1.1);
  if (moved === base || base <= 0) return 0;
  const dLog = Math.abs(Math.log(moved / base));
  const before = withFactors(prior, () => runs.map((r) => predictRun(r).value));
  const after = withFactors({ ...prior, [p.key]: moved }, () => runs.map((r) => predictRun(r).value));
  let largest = links.some((l) => l.factor === p.key) ? 1 : 0;
  runs.forEach((_, i) => { largest = Math.max(largest, Math.abs(Math.log(after[i]! / before[i]!)) / dLog); });
  return largest;
}

function fitOn(runs: readonly UserRun[], links: readonly LinkMeasurement[], fitted: readonly FittedParameter[], prior: ConstantSet, priorWeight: number): ConstantSet {
  if (fitted.length === 0) return prior;
  return coordinateSearch(fitted, prior, (values) => objective(runs, links, fitted, prior, values, priorWeight), { maxRounds: 80, minStep: 0.005 }).values;
}

export interface UserCalibration {
  readonly profile: Omit<CalibrationProfile, 'created' | 'runsFile'>;
  /** The fitted values of every user factor. */
  readonly values: ConstantSet;
}

/**
 * Fits the factors the runs identify, with the prior; per run the error before, after and left
 * out; per factor the uncertainty (curvature) and leave-one-out spread. Throws nothing for valid
 * runs; the caller checks {@link MIN_RUNS}.
 */
export function calibrateToRuns(
  runs: readonly UserRun[], links: readonly LinkMeasurement[],
  options: { readonly priorWeight?: number; /** Fit only these factors (names of USER_FACTORS); default all the runs identify. */ readonly factors?: readonly string[] } = {},
): UserCalibration {
  const priorWeight = options.priorWeight ?? DEFAULT_PRIOR_WEIGHT;
  const asked = options.factors ? USER_FACTORS.filter((p) => options.factors!.includes(p.key)) : USER_FACTORS;
  const prior: ConstantSet = Object.fromEntries(USER_FACTORS.map((p) => [p.key, mutable[p.key]!]));
  // Without runs, only the link factors the measurements name are fitted.
  const candidates = runs.length === 0 ? asked.filter((p) => links.some((l) => l.factor === p.key)) : asked;
  const sensitivities = new Map(candidates.map((p) => [p.key, sensitivity(p, runs, links, prior)]));
  const fitted = candidates.filter((p) => sensitivities.get(p.key)! >= SENSITIVITY_THRESHOLD);
  const values = fitOn(runs, links, fitted, prior, priorWeight);

  const before = withFactors(prior, () => runs.map(predictRun));
  const after = withFactors(values, () => runs.map(predictRun));
  const residuals = runs.map((r, i) => logError(after[i]!.value, r.measured));
  const rms = residuals.length > 0 ? Math.sqrt(residuals.reduce((s, e) => s + e * e, 0) / residuals.length) : 0;
  const residualSigma = Math.max(MIN_RESIDUAL_SIGMA, rms);

  // Leave one out: refit without run i (same factors, from the prior), predict run i.
  const loo = runs.length >= MIN_RUNS ? runs.map((run, i) => {
    const refit = fitOn(runs.filter((_, j) => j !== i), links, fitted, prior, priorWeight);
    return { values: refit, predicted: withFactors(refit, () => predictRun(run).value) };
  }) : undefined;

  const factors: CalibrationProfile['factors'] = {};
  for (const p of USER_FACTORS) {
    const identified = fitted.includes(p);
    const value = values[p.key]!;
    let uncertainty: number | null = null;
    let spread: number | null = null;
    if (identified) {
      // Curvature of the objective in log(value): the posterior spread is residualSigma / sqrt(J'').
      const h = 0.05;
      const at = (v: number) => objective(runs, links, fitted, prior, { ...values, [p.key]: v }, priorWeight);
      const base = Math.max(value, 1e-6);
      const curvature = (at(base * Math.exp(h)) - 2 * at(base) + at(base * Math.exp(-h))) / (h * h);
      uncertainty = round(base * residualSigma / Math.sqrt(Math.max(curvature, 1e-6)), 4);
      if (loo) spread = round(Math.max(...loo.map((l) => Math.abs(l.values[p.key]! / base - 1))), 4);
    }
    factors[p.key] = { value, prior: prior[p.key]!, identified, uncertainty, leaveOneOutSpread: spread, range: [p.min, p.max] };
  }

  const rel = (predicted: number, measured: number) => round(predicted / measured - 1, 6);
  const profileRuns = runs.map((run, i) => ({
    source: run.source,
    metric: run.metric,
    measured: run.measured,
    predictedBefore: round(before[i]!.value, 6),
    predictedAfter: round(after[i]!.value, 6),
    errorBefore: rel(before[i]!.value, run.measured),
    errorAfter: rel(after[i]!.value, run.measured),
    leaveOneOutError: loo ? rel(loo[i]!.predicted, run.measured) : null,
    ...(run.memoryGiBPerGpu !== undefined ? {
      memoryGiBPerGpu: { measured: run.memoryGiBPerGpu, predicted: round(after[i]!.memoryGiBPerGpu, 3), error: rel(after[i]!.memoryGiBPerGpu, run.memoryGiBPerGpu) },
    } : {}),
    fits: after[i]!.fits,
  }));
  return {
    values,
    profile: {
      version: 1,
      kind: 'scaleacross-calibration',
      scope: 'one set of factors for every GPU type, fabric and link of the runs (the cluster the runs were measured on)',
      fit: {
        runs: runs.length,
        links: links.length,
        objective: 'sum of Huber(log error) over runs and link measurements + priorWeight x sum of 0.5 log(value / prior)^2 over fitted factors',
        priorWeight,
        residualSigma: round(residualSigma, 4),
      },
      factors,
      runs: profileRuns,
      links: links.map((l) => ({
        source: l.source, factor: l.factor, nominalGBps: round(l.nominalGBps, 4), busBandwidthGBps: l.busBandwidthGBps, messageBytes: l.messageBytes,
        measuredEfficiency: round(l.busBandwidthGBps / l.nominalGBps, 4),
      })),
    },
  };
}

const round = (x: number, digits: number): number => +x.toFixed(digits);
