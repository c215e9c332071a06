/**
 * Applies a calibration profile (`scaleacross calibrate --out`) to the cost model. The model
 * reads its constants from the module-level CALIBRATION object at every evaluation, so the
 * profile's identified factors are written into it for the duration of a command and restored
 * afterwards; nothing the model computes is cached across scenario parses (the planner's caches
 * live within one solve), so nothing computed with the committed constants is reused.
 */
import { CALIBRATION } from '../model/calibration-constants';
import type { CalibrationProfile } from '../model/calibration-profile-schema';
import {
  builtInIntervalModel, intervalModel, PROFILE_MIN_SPREAD_LOG, setActiveIntervalModel, timeErrorOf, type IntervalModel, type ResidualSet,
} from '../model/prediction-interval';

const mutable = CALIBRATION as unknown as Record<string, number>;

/** The factors a profile changes: identified ones only (the others stay at the committed values). */
export const profileValues = (profile: CalibrationProfile): Record<string, number> =>
  Object.fromEntries(Object.entries(profile.factors).filter(([, f]) => f.identified).map(([name, f]) => [name, f.value]));

/**
 * The residuals of a profile: each run's leave-one-out error (the factors refitted without the
 * run, then the run predicted) as an iteration-time error (a rate's error inverted), and each
 * run's memory error where memory was measured (memory is not fitted, so its errors are already
 * out of sample).
 */
export function profileResidualSet(profile: Pick<CalibrationProfile, 'runs'>): ResidualSet {
  const timeErrors = profile.runs.flatMap((run) => (run.leaveOneOutError === null ? [] : [timeErrorOf(run.metric === 'iterationTimeS', run.leaveOneOutError)]));
  const memoryErrors = profile.runs.flatMap((run) => (run.memoryGiBPerGpu ? [run.memoryGiBPerGpu.error] : []));
  return { basis: `calibration profile: ${timeErrors.length} run(s) left out one at a time`, timeErrors, memoryErrors, minSpreadLog: PROFILE_MIN_SPREAD_LOG };
}

/**
 * The interval model a profile gives: from its runs' residuals; with fewer than 2 (a profile of
 * link measurements only) the built-in one, saying so.
 */
export function profileIntervalModel(profile: Pick<CalibrationProfile, 'runs'>): IntervalModel {
  const own = intervalModel(profileResidualSet(profile));
  if (own) return own;
  const builtIn = builtInIntervalModel();
  const fallback = (basis: string) => `${basis} (the profile has fewer than 2 runs)`;
  return {
    ...builtIn,
    basis: fallback(builtIn.basis),
    ...(builtIn.attentionHeavy ? { attentionHeavy: { ...builtIn.attentionHeavy, basis: fallback(builtIn.attentionHeavy.basis) } } : {}),
  };
}

/** Sets the profile's identified factors and its interval model; returns the function that restores the previous ones. */
export function applyCalibrationProfile(profile: CalibrationProfile): () => void {
  const restoreFactors = applyFactorValues(profileValues(profile));
  const restoreInterval = setActiveIntervalModel(profileIntervalModel(profile));
  return () => { restoreInterval(); restoreFactors(); };
}

/** Sets the given factors (e.g. a profile's values sent to a batch worker); returns the function that restores them. */
export function applyFactorValues(values: Readonly<Record<string, number>>): () => void {
  const saved = Object.fromEntries(Object.keys(values).map((k) => [k, mutable[k]!]));
  Object.assign(mutable, values);
  return () => { Object.assign(mutable, saved); };
}
