/** Process exit codes of `scaleacross`. */
export const EXIT = {
  ok: 0,
  /** A bug: anything thrown that is not a validation error. */
  internalError: 1,
  /**
   * Invalid input or usage. Not for `batch` inputs that are invalid: those become `invalid`
   * records and the batch exits 0 (like `error` and `timeout` records); `batch` exits 2 only when
   * it cannot start (a missing path, an empty folder, bad options).
   */
  invalidInput: 2,
  /** The scenario is valid but no plan fits (`plan`, `diagnose`). */
  noPlanFits: 3,
  /** `export`: the framework cannot express the plan faithfully (the errors say why). */
  exportUnfaithful: 4,
  /** `merge`: some scenarios of the batch have no result (or the parts come from different batches). */
  incomplete: 5,
  /** `batch` stopped by SIGINT (128 + 2); rerun with --resume. */
  interrupted: 130,
  /** `batch` stopped by SIGTERM (128 + 15): its workers ended, its finished results kept; rerun with --resume. */
  terminated: 143,
} as const;

/** Wrong command-line usage (unknown flag, missing argument). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where a command writes; the real process streams in production, buffers in tests. */
export interface Output {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}
