/**
 * Applies a calibration profile (`scaleacross calibrate --out`) to the cost model. The model
 * reads its constants from the module-level CALIBRATION object at every evaluation, so the
 * profile's identified factors are written into it for the duration of a command and restored
 * afterwards; nothing the model computes is cached across scenario parses (the planner's caches
 * live within one solve), so nothing computed with the committed constants is reused.
 */
import { CALIBRATION } from '../model/calibration-constants';
import type { CalibrationProfile } from '../model/calibration-profile-schema';

const mutable = CALIBRATION as unknown as Record<string, number>;

/** The factors a profile changes: identified ones only (the others stay at the committed values). */
export const profileValues = (profile: CalibrationProfile): Record<string, number> =>
  Object.fromEntries(Object.entries(profile.factors).filter(([, f]) => f.identified).map(([name, f]) => [name, f.value]));

/** Sets the profile's identified factors; returns the function that restores the previous values. */
export const applyCalibrationProfile = (profile: CalibrationProfile): (() => void) => applyFactorValues(profileValues(profile));

/** Sets the given factors (e.g. a profile's values sent to a batch worker); returns the function that restores them. */
export function applyFactorValues(values: Readonly<Record<string, number>>): () => void {
  const saved = Object.fromEntries(Object.keys(values).map((k) => [k, mutable[k]!]));
  Object.assign(mutable, values);
  return () => { Object.assign(mutable, saved); };
}
