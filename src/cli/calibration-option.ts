/**
 * `--calibration profile.json` and a scenario's `"calibration": "profile.json"` (relative to the
 * scenario file): which profile a command uses (the option wins over the scenario's field), and
 * how its output names it.
 */
import * as path from 'path';
import { applyCalibrationProfile, profileValues } from '../calibration/apply-profile';
import { readCalibrationProfile } from '../io/calibration-files';
import type { CalibrationProfile } from '../model/calibration-profile-schema';
import type { Scenario } from '../model/scenario';
import { ScenarioValidationError } from '../model/validation-error';

export interface ActiveCalibration {
  /** The profile file as given (the option), or resolved against the scenario file. */
  readonly file: string;
  readonly from: 'option' | 'scenario';
  readonly profile: CalibrationProfile;
}

/** The profile a command uses, or undefined for the committed constants. */
export function resolveCalibration(option: string | undefined, scenarioFile: string, scenario: Scenario): ActiveCalibration | undefined {
  if (option !== undefined) return { file: option, from: 'option', profile: readCalibrationProfile(option) };
  const field = scenario.spec.calibration;
  if (field === undefined) return undefined;
  const file = path.relative(process.cwd(), path.resolve(path.dirname(scenarioFile), field)) || field;
  try {
    return { file, from: 'scenario', profile: readCalibrationProfile(file) };
  } catch (error) {
    if (!(error instanceof ScenarioValidationError)) throw error;
    // `scenario.json: calibration: profile.json: no such file`.
    throw new ScenarioValidationError(error.issues.map((issue) => ({ path: 'calibration', message: `${field}: ${issue.path === '' ? '' : `${issue.path}: `}${issue.message}` })), scenarioFile);
  }
}

/** Runs `f` with the profile applied (the committed constants restored afterwards). */
export async function withCalibration<T>(active: ActiveCalibration | undefined, f: () => T | Promise<T>): Promise<T> {
  if (!active) return f();
  const restore = applyCalibrationProfile(active.profile);
  try {
    return await f();
  } finally {
    restore();
  }
}

/** Synchronous form of {@link withCalibration}. */
export function withCalibrationSync<T>(active: ActiveCalibration | undefined, f: () => T): T {
  if (!active) return f();
  const restore = applyCalibrationProfile(active.profile);
  try {
    return f();
  } finally {
    restore();
  }
}

/** The `calibration` key of JSON output. */
export const calibrationJson = (active: ActiveCalibration) => ({
  profile: active.file, from: active.from, created: active.profile.created, factors: profileValues(active.profile),
});

/** The line text output ends with. */
export function calibrationLine(active: ActiveCalibration): string {
  const changed = Object.entries(active.profile.factors).filter(([, f]) => f.identified && f.value !== f.prior)
    .map(([name, f]) => `${name} ${+f.value.toPrecision(4)} (${f.value > f.prior ? '+' : ''}${(100 * (f.value / f.prior - 1)).toFixed(1)}%)`);
  return `Calibration: ${active.file}${active.from === 'scenario' ? ' (named by the scenario)' : ''}, fitted ${active.profile.created.slice(0, 10)} on ${active.profile.fit.runs} run(s): ${changed.join(', ') || 'no factor changed'}`;
}
