/**
 * One result line of a batch (NDJSON): what was solved, where it came from, the outcome and
 * how long it took. Every scenario of a batch ends as exactly one record, whatever happened.
 */
import type { PlanSpec } from '../model/plan-schema';
import type { PlanResult } from '../solve/plan-result';
import type { BaselinePlanOutcome } from './baseline-plan-outcome';
import type { BatchScenario, ScenarioSource } from './scenario-list';

/**
 * optimal/feasible/infeasible/unknown: as `plan` reports them. invalid: the input is not a
 * valid scenario (it failed validation, or is malformed JSON, an invalid sweep or sweep point). error: the solve threw or crashed its worker. timeout: it ran past its budget
 * (time limit + grace) and its worker was terminated.
 */
export const RECORD_STATUSES = ['optimal', 'feasible', 'infeasible', 'unknown', 'invalid', 'error', 'timeout'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

/** Statuses counted as failures by progress and summaries (the batch could not answer). */
export const FAILED_STATUSES: ReadonlySet<RecordStatus> = new Set(['invalid', 'error', 'timeout']);

/** What a solve produced, as sent back by a worker. */
export interface SolveOutcome {
  readonly status: Exclude<RecordStatus, 'timeout'>;
  readonly iterationTimeS: number | null;
  /** The prediction interval of iterationTimeS (docs/cost-model.md §7), and its level. */
  readonly iterationTimeLowS: number | null;
  readonly iterationTimeHighS: number | null;
  readonly intervalLevel: number | null;
  /** The residuals the interval comes from (the job's class of published rows, or the profile's runs). */
  readonly intervalBasis: string | null;
  /** The plan's peak memory lies within the memory interval of its GPUs' capacity. */
  readonly mayNotFit: boolean | null;
  readonly mfu: number | null;
  /** (plan - bound) / plan. */
  readonly gap: number | null;
  readonly lowerBoundS: number | null;
  /** Production baseline time / our time (null without a production plan). */
  readonly productionSpeedup: number | null;
  readonly ppAcrossSpeedup: number | null;
  /** The least speedups the baselines' proven bounds imply (baseline bound / our time; null without one). */
  readonly productionSpeedupAtLeast: number | null;
  readonly ppAcrossSpeedupAtLeast: number | null;
  readonly plan: PlanSpec | null;
  readonly reasons: readonly string[];
  readonly error: string | null;
  readonly solverTimeS: number | null;
  /** With `--baseline-plan` only: the given plan on this scenario and the speedup over it. */
  readonly baselinePlan?: BaselinePlanOutcome;
}

export interface BatchRecord extends Omit<SolveOutcome, 'status' | 'solverTimeS'> {
  readonly id: string;
  readonly ordinal: number;
  /** Scenarios in the whole (unsharded) batch. */
  readonly total: number;
  readonly batchKey: string;
  readonly solveKey: string;
  readonly name: string | null;
  readonly source: ScenarioSource;
  readonly alsoFrom: readonly ScenarioSource[];
  readonly status: RecordStatus;
  /** The calibration profile the solve used (`file (created)`), when one was given. */
  readonly calibration?: string;
  /** Not deterministic: left out when comparing runs. */
  readonly timing: {
    readonly wallTimeS: number;
    readonly solverTimeS: number | null;
    readonly timeLimitS: number;
    /** Id of the scenario whose solve this result was copied from (same content but the name). */
    readonly cachedFrom: string | null;
    readonly finishedAt: string;
  };
}

const finiteOrNull = (x: number | undefined): number | null => (x !== undefined && Number.isFinite(x) ? x : null);

export function outcomeFromPlanResult(result: PlanResult): SolveOutcome {
  const production = result.baselines.find((b) => b.name === 'production');
  const ppAcross = result.baselines.find((b) => b.name === 'pp-across');
  return {
    status: result.status,
    iterationTimeS: finiteOrNull(result.evaluation?.predicted.iterationTimeS),
    iterationTimeLowS: finiteOrNull(result.evaluation?.predicted.interval.lowS),
    iterationTimeHighS: finiteOrNull(result.evaluation?.predicted.interval.highS),
    intervalLevel: finiteOrNull(result.evaluation?.predicted.interval.level),
    intervalBasis: result.evaluation?.predicted.interval.basis ?? null,
    mayNotFit: result.evaluation ? result.evaluation.mayNotFit : null,
    mfu: finiteOrNull(result.evaluation?.predicted.mfu),
    gap: result.plan ? finiteOrNull(result.bound.gap) : null,
    lowerBoundS: finiteOrNull(result.bound.lowerBoundS),
    productionSpeedup: finiteOrNull(production?.speedup),
    ppAcrossSpeedup: finiteOrNull(ppAcross?.speedup),
    productionSpeedupAtLeast: finiteOrNull(production?.speedupAtLeast),
    ppAcrossSpeedupAtLeast: finiteOrNull(ppAcross?.speedupAtLeast),
    plan: result.plan ?? null,
    reasons: result.reasons,
    error: null,
    solverTimeS: result.solver.timeS,
  };
}

/** An outcome without a plan: invalid input, a crash or a thrown error. */
export function failedOutcome(status: 'invalid' | 'error', message: string): SolveOutcome {
  return { status, iterationTimeS: null, iterationTimeLowS: null, iterationTimeHighS: null, intervalLevel: null, intervalBasis: null, mayNotFit: null, mfu: null, gap: null, lowerBoundS: null, productionSpeedup: null, ppAcrossSpeedup: null, productionSpeedupAtLeast: null, ppAcrossSpeedupAtLeast: null, plan: null, reasons: [], error: message, solverTimeS: null };
}

export interface RecordContext {
  readonly total: number;
  readonly batchKey: string;
  readonly timeLimitS: number;
  /** The calibration profile of the batch (`file (created)`), when one was given. */
  readonly calibration?: string;
  /** The baseline plan of the batch (`file (content hash)`), when one was given. */
  readonly baselinePlan?: string;
}

export function makeRecord(
  scenario: BatchScenario,
  outcome: SolveOutcome | { readonly status: 'timeout'; readonly error: string },
  context: RecordContext,
  wallTimeS: number,
  cachedFrom: string | null,
): BatchRecord {
  const full: SolveOutcome = outcome.status === 'timeout' ? { ...failedOutcome('error', outcome.error) } : outcome;
  const { status: _status, solverTimeS, ...rest } = full;
  return {
    id: scenario.id,
    ordinal: scenario.ordinal,
    total: context.total,
    batchKey: context.batchKey,
    solveKey: scenario.solveKey,
    name: scenario.name,
    source: scenario.source,
    alsoFrom: scenario.alsoFrom,
    status: outcome.status,
    ...rest,
    ...(context.calibration !== undefined ? { calibration: context.calibration } : {}),
    timing: { wallTimeS, solverTimeS, timeLimitS: context.timeLimitS, cachedFrom, finishedAt: new Date().toISOString() },
  };
}

/** The record without its timing: what two runs of the same scenarios should agree on. */
export function deterministicPart(record: BatchRecord): Omit<BatchRecord, 'timing'> {
  const { timing: _timing, ...rest } = record;
  return rest;
}
