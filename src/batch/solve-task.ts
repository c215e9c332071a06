import type { IntervalModel } from '../model/prediction-interval';
import type { BaselinePlanTask } from './baseline-plan-outcome';

/** What the batch sends a worker thread for one scenario, and the test-only crash hook's names. */

export interface SolveTask {
  /** The scenario JSON as written (validated again in the worker). */
  readonly spec: unknown;
  readonly timeLimitS: number;
  readonly gap: number;
  readonly baselines: boolean;
  /** Calibration factors to apply for the solve (a profile's identified values; `--calibration`). */
  readonly calibration?: Readonly<Record<string, number>>;
  /** The profile's interval model (prediction intervals of the records), with `calibration`. */
  readonly intervalModel?: IntervalModel;
  /** A given plan to evaluate beside the best one (`--baseline-plan`). */
  readonly baselinePlan?: BaselinePlanTask;
}

/** Environment variable that arms the test-only crash hook (values: exit, throw, hang). */
export const TEST_CRASH_ENV = 'SCALEACROSS_TEST_CRASH';
/** A scenario whose name contains this crashes its worker when {@link TEST_CRASH_ENV} is set. */
export const TEST_CRASH_MARKER = '[test-crash]';
