/**
 * Fits the cost model's calibrated constants (src/model/calibration-constants.ts) to the rows of
 * fixtures/calibration: one constant set for all rows, a robust loss (mean Huber loss of the log
 * error, so a few rows the model cannot explain do not drag every other row), minimised by a
 * deterministic coordinate search. Also the leave-one-source-out check: for each published table,
 * fit on the others and predict it.
 */
import { CALIBRATION } from '../model/calibration-constants';
import { calibrate, median, type CalibrationRow } from './calibration-table';

/** A fitted constant and the range it may take (physically meaningful values only). */
export interface FittedParameter {
  readonly key: keyof typeof CALIBRATION;
  readonly min: number;
  readonly max: number;
  /** Round to integers (byte counts, token counts). */
  readonly integer?: boolean;
}

/** The constants the fit moves; every other constant (bus efficiencies, latencies, bytes) is set by hand. The score bytes are at least 4: unfused softmax reads and writes each bf16 score once. */
export const FITTED_PARAMETERS: readonly FittedParameter[] = [
  { key: 'matmulPeakEfficiency', min: 0.4, max: 0.95 },
  { key: 'matmulHalfRows', min: 1, max: 1024, integer: true },
  { key: 'matmulHalfColumns', min: 1, max: 1024, integer: true },
  { key: 'fp8MatmulPeakEfficiency', min: 0.25, max: 0.95 },
  { key: 'fusedAttentionPeakEfficiency', min: 0.15, max: 0.95 },
  { key: 'elementwiseBytesPerHidden', min: 16, max: 512, integer: true },
  { key: 'scoreBytesPerElement', min: 4, max: 32, integer: true },
  { key: 'tpOverlapResidual', min: 0, max: 1 },
  { key: 'dpOverlapResidual', min: 0, max: 1 },
  { key: 'expertKernelOverheadUs', min: 0, max: 500 },
];

export type ConstantSet = Readonly<Record<string, number>>;

const mutable = CALIBRATION as unknown as Record<string, number>;

/** The current values of the fitted constants. */
export const currentConstants = (): ConstantSet =>
  Object.fromEntries(FITTED_PARAMETERS.map((p) => [p.key, mutable[p.key]!]));

/** Runs `f` with the fitted constants set to `values`, restoring them afterwards. */
export function withConstants<T>(values: ConstantSet, f: () => T): T {
  const saved = currentConstants();
  Object.assign(mutable, values);
  try {
    return f();
  } finally {
    Object.assign(mutable, saved);
  }
}

/** Huber loss of the log error, threshold 10% (quadratic below, linear above). */
const HUBER_DELTA = 0.1;
export const huber = (x: number): number => (Math.abs(x) <= HUBER_DELTA ? 0.5 * x * x : HUBER_DELTA * (Math.abs(x) - 0.5 * HUBER_DELTA));

/** Mean Huber loss of log(predicted / published) over `rows` with the current constants. */
export function loss(rows: readonly CalibrationRow[]): number {
  let sum = 0;
  for (const row of rows) {
    const r = calibrate(row);
    const logError = r.metric === 'iterationTimeS' ? Math.log(r.published / r.predicted) : Math.log(r.predicted / r.published);
    sum += huber(Number.isFinite(logError) ? logError : 10);
  }
  return sum / rows.length;
}

/** `raw` clamped to the parameter's range and rounded as the searches round (an integer, or 4 decimals). */
function inRange(p: FittedParameter, raw: number): number {
  const v = Math.min(p.max, Math.max(p.min, raw));
  return p.integer ? Math.round(v) : +v.toFixed(4);
}

/**
 * Coordinate search from `start`: each round tries, for one constant at a time, the current
 * value scaled by 1 +- step (clamped to its range); steps shrink from 40% to 2.5% when a round
 * improves nothing. Deterministic.
 */
export function fitConstants(rows: readonly CalibrationRow[], start: ConstantSet = currentConstants(), maxRounds = 40): { values: ConstantSet; loss: number } {
  return coordinateSearch(FITTED_PARAMETERS, start, (values) => withConstants(values, () => loss(rows)), { maxRounds });
}

/**
 * The coordinate search of {@link fitConstants} over any parameters and objective (the user
 * calibration of src/calibration/user-fit.ts adds a prior to its objective): each round tries,
 * for one parameter at a time, its value scaled by 1 +- step (clamped to its range, rounded to
 * 4 decimals or to an integer); the step halves from 40% when a round improves nothing, down to
 * `minStep` (2.5% by default). Deterministic.
 */
export function coordinateSearch(
  params: readonly FittedParameter[], start: ConstantSet, objective: (values: ConstantSet) => number,
  options: { readonly maxRounds?: number; readonly minStep?: number } = {},
): { values: ConstantSet; loss: number } {
  const maxRounds = options.maxRounds ?? 40;
  const minStep = options.minStep ?? 0.025;
  let values: Record<string, number> = { ...start };
  let best = objective(values);
  let step = 0.4;
  for (let round = 0; round < maxRounds && step >= minStep; round++) {
    let improved = false;
    for (const p of params) {
      const current = values[p.key]!;
      const candidates = [current * (1 - step), current * (1 + step), current === 0 ? step / 4 : current];
      for (const raw of candidates) {
        const v = inRange(p, raw);
        if (v === current) continue;
        const trial = { ...values, [p.key]: v };
        const l = objective(trial);
        if (l < best - 1e-12) {
          best = l;
          values = trial;
          improved = true;
        }
      }
    }
    if (!improved) step /= 2;
  }
  return { values, loss: best };
}

/**
 * Where the multi-start fit begins besides its given start: every fitted constant scaled by these
 * factors at once (clamped to its range). The loss has flat valleys (the fused-attention
 * efficiency on the long-context rows, docs/cost-model.md §7) where a coordinate search stops
 * wherever it entered, so one start makes a held-out fit depend on where it began.
 */
export const START_SCALES: readonly number[] = [0.8, 1.25];

/** `start` with every fitted constant scaled by `scale`, clamped to its range and rounded as the search rounds. */
export function scaledStart(start: ConstantSet, scale: number): ConstantSet {
  return Object.fromEntries(FITTED_PARAMETERS.map((p) => [p.key, inRange(p, start[p.key]! * scale)]));
}

/**
 * Pattern search along pairs of parameters, from `start`: each round tries, for every parameter
 * alone and every pair of them, the values scaled by 1 +- step (both signs for each, so along and
 * across the diagonal; an integer moves by at least 1, a zero by a quarter of the step; clamped
 * and rounded as {@link coordinateSearch}); the step halves from `startStep` when a round
 * improves nothing, while it is at least `minStep` (5%, 2.5%, 1.25%, 0.625% by default), for at
 * most `maxRounds` rounds. A coordinate search stops at the
 * first point no single parameter improves, which in a narrow valley running between two
 * parameters (the fused-attention efficiency traded against the memory-bound bytes and the GEMM
 * curve, docs/cost-model.md §7) is wherever it entered it; a pair move follows such a valley.
 * Deterministic.
 */
export function pairSearch(
  params: readonly FittedParameter[], start: ConstantSet, objective: (values: ConstantSet) => number,
  options: { readonly startStep?: number; readonly minStep?: number; readonly maxRounds?: number } = {},
): { values: ConstantSet; loss: number } {
  const minStep = options.minStep ?? 0.005;
  const maxRounds = options.maxRounds ?? 200;
  let values: Record<string, number> = { ...start };
  let best = objective(values);
  // One step of a parameter: relative, from 0 a quarter of the step (as coordinateSearch), an integer by at least 1.
  const stepped = (p: FittedParameter, value: number, sign: number, step: number): number => {
    if (sign === 0) return value;
    if (p.integer) return inRange(p, value + sign * Math.max(1, Math.round(Math.abs(value) * step)));
    return inRange(p, value === 0 ? sign * step / 4 : value * (1 + sign * step));
  };
  const pointOf = (v: Readonly<Record<string, number>>) => params.map((p) => v[p.key]).join(',');
  let step = options.startStep ?? 0.05;
  for (let round = 0; round < maxRounds && step >= minStep; round++) {
    let improved = false;
    // The current point and the moves tried this round: a move that rounds back to either costs no evaluation.
    const tried = new Set<string>([pointOf(values)]);
    for (let i = 0; i < params.length; i++) {
      for (let j = i; j < params.length; j++) {
        const a = params[i]!;
        const b = params[j]!;
        for (const signA of [1, -1]) {
          for (const signB of i === j ? [0] : [1, -1]) {
            const trial = { ...values, [a.key]: stepped(a, values[a.key]!, signA, step) };
            if (i !== j) trial[b.key] = stepped(b, values[b.key]!, signB, step);
            const point = pointOf(trial);
            if (tried.has(point)) continue;
            tried.add(point);
            const l = objective(trial);
            if (l < best - 1e-12) {
              best = l;
              values = trial;
              improved = true;
            }
          }
        }
      }
    }
    if (!improved) step /= 2;
  }
  return { values, loss: best };
}

/**
 * {@link fitConstants} from `start` and from each of {@link START_SCALES} around it, the least
 * loss of them (the given start's on ties) then followed along pairs of constants
 * ({@link pairSearch}) to the valley's floor: without that last step a held-out fit stops near
 * where it started, and the start is the committed set, fitted with the held-out table in it.
 * `polish` false skips it (tests). Deterministic.
 */
export function fitConstantsMultiStart(rows: readonly CalibrationRow[], start: ConstantSet, maxRounds = 40, polish = true): { values: ConstantSet; loss: number; startScale: number } {
  let best = { ...fitConstants(rows, start, maxRounds), startScale: 1 };
  for (const scale of START_SCALES) {
    const fit = fitConstants(rows, scaledStart(start, scale), maxRounds);
    if (fit.loss < best.loss - 1e-12) best = { ...fit, startScale: scale };
  }
  if (!polish) return best;
  // The pair search's rounds are cheaper to stop than its steps: five times the coordinate search's cap.
  return { ...pairSearch(FITTED_PARAMETERS, best.values, (values) => withConstants(values, () => loss(rows)), { maxRounds: 5 * maxRounds }), startScale: best.startScale };
}

/** Absolute relative errors per row id with the given constants. */
export const errorsWith = (values: ConstantSet, rows: readonly CalibrationRow[]): Map<string, number> =>
  withConstants(values, () => new Map(rows.map((row) => [row.id, calibrate(row).relativeError])));

export interface LosoResult {
  /** Per row: its error when its own table was left out of the fit. */
  readonly errors: Map<string, number>;
  /** Per table: the constants fitted without it. */
  readonly fits: Map<string, ConstantSet>;
  /** Per table: the start scale whose fit was kept (1: the given start; see {@link START_SCALES}). */
  readonly startScales: Map<string, number>;
}

/**
 * Leave one source out: for each table, fit on the other tables (the multi-start fit around
 * `start`, or from `start` alone with `multiStart` false), predict it.
 */
export function leaveOneSourceOut(rows: readonly CalibrationRow[], start: ConstantSet, multiStart = true): LosoResult {
  const tables = [...new Set(rows.map((r) => r.table))].sort();
  const errors = new Map<string, number>();
  const fits = new Map<string, ConstantSet>();
  const startScales = new Map<string, number>();
  for (const table of tables) {
    const others = rows.filter((r) => r.table !== table);
    const fit = multiStart ? fitConstantsMultiStart(others, start) : { ...fitConstants(others, start), startScale: 1 };
    fits.set(table, fit.values);
    startScales.set(table, fit.startScale);
    for (const [id, e] of errorsWith(fit.values, rows.filter((r) => r.table === table))) errors.set(id, e);
  }
  return { errors, fits, startScales };
}

/** Median and largest absolute value. */
export const summarise = (errors: Iterable<number>): { median: number; max: number } => {
  const abs = [...errors].map(Math.abs);
  return { median: median(abs), max: Math.max(...abs) };
};
