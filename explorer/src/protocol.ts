/** Messages between the explorer page and its planning worker. */
import type { InputIssue } from '../../src/model/validation-error';
import type { BreakdownBar } from '../../src/report/breakdown-chart';

/** Page -> worker: plan this scenario spec (the compiled HiGHS module is shared by every worker). */
export interface PlanRequest {
  readonly type: 'plan';
  readonly spec: unknown;
  readonly highsModule: WebAssembly.Module;
  readonly timeLimitS: number;
  readonly gap: number;
  /** A calibration profile (as `calibrate --out` writes it) to plan with; absent: the committed constants. */
  readonly calibrationProfile?: unknown;
}

/** Page -> worker: plan the spec at each value of one field (the sweep). */
export interface SweepRequest {
  readonly type: 'sweep';
  readonly spec: unknown;
  readonly highsModule: WebAssembly.Module;
  /** JSON path of the swept number, e.g. `cluster.links[0].bandwidthGbps`. */
  readonly path: string;
  readonly values: readonly number[];
  readonly timeLimitS: number;
  readonly calibrationProfile?: unknown;
}

/** Page -> worker: turn a Hugging Face config.json into the scenario's model object (as `import-model`). */
export interface ImportModelRequest {
  readonly type: 'import-model';
  readonly config: unknown;
  readonly name: string;
  readonly source: string;
}

export type ToWorker = PlanRequest | SweepRequest | ImportModelRequest;

export interface ProgressMessage {
  readonly type: 'progress';
  readonly incumbentS: number;
  readonly boundS: number;
  readonly gap: number;
  readonly elapsedS: number;
}

/** The spec does not validate: the same issues (JSON path, message) the CLI prints. */
export interface InvalidMessage {
  readonly type: 'invalid';
  readonly issues: readonly InputIssue[];
}

/** One verified fix of the diagnosis, with the spec it produces. */
export interface FixView {
  readonly change: string;
  readonly path: string;
  readonly verifiedIterationTimeS: number;
  readonly spec: unknown;
}

/** What the page shows for a scenario with a plan. */
export interface PlanView {
  /** The same JSON `plan --json` prints. */
  readonly planJson: unknown;
  readonly status: string;
  readonly iterationTimeS: number;
  readonly lowerBoundS: number;
  readonly gap: number;
  readonly summary: readonly { readonly label: string; readonly value: string }[];
  readonly bars: readonly BreakdownBar[];
  readonly breakdownSvg: string;
  readonly timelineSvg?: string;
  readonly timelineNote?: string;
  readonly siteMapSvg: string;
  readonly network: readonly { readonly between: string; readonly settings: string }[];
  readonly links: readonly { readonly label: string; readonly gbps: number; readonly rttMs: number; readonly utilization: number }[];
  readonly exports: { readonly megatron: string; readonly torchtitan: string };
  readonly elapsedS: number;
}

/** What the page shows when no plan fits. */
export interface DiagnosisView {
  readonly status: string;
  /** Each conflicting requirement; `set` numbers the independent conflicts (a plan needs one member of each relaxed; 0: the fixes together). */
  readonly conflicts: readonly { readonly set: number; readonly constraint: string; readonly detail: string; readonly fixes: readonly FixView[] }[];
  readonly conflictSets: number;
  readonly reasons: readonly string[];
  readonly elapsedS: number;
}

export interface ResultMessage {
  readonly type: 'result';
  readonly plan?: PlanView;
  readonly diagnosis?: DiagnosisView;
}

/** The planner is diagnosing an infeasible scenario (a few re-solves). */
export interface DiagnosingMessage {
  readonly type: 'diagnosing';
  readonly reasons: readonly string[];
}

export interface SweepPoint {
  readonly value: number;
  readonly iterationTimeS?: number;
  /** The plan's shape (degrees, schedule, where stages sit); a change marks a new best plan. */
  readonly shape?: string;
  readonly issue?: string;
}

export interface SweepMessage {
  readonly type: 'sweep-point';
  readonly point: SweepPoint;
  readonly done: boolean;
}

export interface ErrorMessage {
  readonly type: 'error';
  readonly message: string;
}

export interface ModelMessage {
  readonly type: 'model';
  readonly model: unknown;
}

export type FromWorker = ProgressMessage | InvalidMessage | ResultMessage | DiagnosingMessage | SweepMessage | ModelMessage | ErrorMessage;
