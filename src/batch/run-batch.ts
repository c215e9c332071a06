/**
 * Runs the pending scenarios of a batch on a worker pool and hands each record to `onRecord`
 * as soon as it exists. What is cached: scenarios whose content is equal except for `name`
 * (equal solve key) are solved once and the result is copied to each; on resume, a solve key
 * already answered in the results file is copied instead of solved again. Invalid scenarios
 * (and inputs that are no scenario at all: malformed JSON, invalid sweeps) are recorded without
 * a worker, their error one line naming the file and the JSON path. Failures of one scenario never stop the others.
 */
import * as path from 'path';
import type { IntervalModel } from '../model/prediction-interval';
import { parseScenario } from '../model/scenario';
import { ScenarioValidationError, formatIssuesOneLine } from '../model/validation-error';
import { failedOutcome, makeRecord, type BatchRecord, type RecordContext, type SolveOutcome } from './record';
import { sourceForMessages, type BatchScenario } from './scenario-list';
import type { BaselinePlanTask } from './baseline-plan-outcome';
import type { SolveTask } from './solve-task';
import { WorkerPool } from './worker-pool';

export interface RunBatchOptions {
  readonly workers: number;
  readonly timeLimitS: number;
  readonly gap: number;
  readonly baselines: boolean;
  /** Seconds a scenario may run past its time limit before its worker is terminated (`timeout`). */
  readonly graceS: number;
  readonly context: RecordContext;
  /** Aborting stops dispatching and ends the running solves; their scenarios stay pending. */
  readonly signal?: AbortSignal;
  readonly onRecord: (record: BatchRecord) => void;
  /** Records already in the results file: their solves are reused by solve key. */
  readonly previous?: readonly BatchRecord[];
  /** Calibration factors every solve applies (a profile's values); records of another calibration are not reused. */
  readonly calibration?: Readonly<Record<string, number>>;
  /** The profile's interval model (with `calibration`); absent: the built-in one. */
  readonly intervalModel?: IntervalModel;
  /** A plan evaluated on every scenario beside its best (`--baseline-plan`); records of another one are not reused. */
  readonly baselinePlan?: BaselinePlanTask;
  /** The compiled worker entry (default: scenario-worker.js next to this module in dist/). */
  readonly workerFile?: string;
}

export interface RunBatchReport {
  readonly interrupted: boolean;
  /** Scenarios solved by a worker (not copied, not invalid). */
  readonly solves: number;
  /** Records copied from an equal solve key. */
  readonly cacheHits: number;
  readonly workersReplaced: number;
}

const REUSABLE = new Set(['optimal', 'feasible', 'infeasible', 'unknown']);

/** The compiled worker file; from TypeScript sources (ts-jest) the built copy in dist/. */
export function defaultWorkerFile(): string {
  return __filename.endsWith('.ts')
    ? path.join(__dirname, '..', '..', 'dist', 'src', 'batch', 'scenario-worker.js')
    : path.join(__dirname, 'scenario-worker.js');
}

export async function runBatch(pending: readonly BatchScenario[], options: RunBatchOptions): Promise<RunBatchReport> {
  const { context, onRecord } = options;
  let cacheHits = 0;
  const previousBySolveKey = new Map<string, BatchRecord>();
  for (const record of options.previous ?? []) {
    // Only answers computed with the same calibration (or both with the committed constants) are reused.
    if (REUSABLE.has(record.status) && record.calibration === context.calibration && record.baselinePlan?.source === context.baselinePlan && !previousBySolveKey.has(record.solveKey)) previousBySolveKey.set(record.solveKey, record);
  }

  // Invalid scenarios need no worker; the others are grouped by solve key.
  const groups = new Map<string, BatchScenario[]>();
  for (const scenario of pending) {
    if (options.signal?.aborted) return { interrupted: true, solves: 0, cacheHits, workersReplaced: 0 };
    if (scenario.invalid !== undefined) {
      onRecord(makeRecord(scenario, failedOutcome('invalid', scenario.invalid), context, 0, null));
      continue;
    }
    try {
      parseScenario(scenario.spec);
    } catch (error) {
      const message = error instanceof ScenarioValidationError ? formatIssuesOneLine(error.issues, sourceForMessages(scenario.source)) : `validation threw: ${String(error)}`;
      onRecord(makeRecord(scenario, failedOutcome(error instanceof ScenarioValidationError ? 'invalid' : 'error', message), context, 0, null));
      continue;
    }
    const reused = previousBySolveKey.get(scenario.solveKey);
    if (reused) {
      onRecord(copyOf(scenario, reused, context));
      cacheHits++;
      continue;
    }
    const group = groups.get(scenario.solveKey);
    if (group) group.push(scenario);
    else groups.set(scenario.solveKey, [scenario]);
  }
  const queue = [...groups.values()];
  if (queue.length === 0) return { interrupted: false, solves: 0, cacheHits, workersReplaced: 0 };

  const budgetS = options.timeLimitS + options.graceS;
  const pool = new WorkerPool<SolveTask, SolveOutcome>({ size: Math.min(options.workers, queue.length), workerFile: options.workerFile ?? defaultWorkerFile(), budgetS });
  const onAbort = (): void => pool.cancelAll();
  options.signal?.addEventListener('abort', onAbort);
  let solves = 0;
  // Groups not yet sent, in input order (sweep neighbours next to each other); a chunk handed
  // back unrun after a crash or a timeout goes to the front.
  const remaining = [...queue];
  const runner = async (): Promise<void> => {
    while (remaining.length > 0 && !options.signal?.aborted) {
      const chunk = remaining.splice(0, chunkSize(remaining.length, pool.size));
      const task = (leader: BatchScenario): SolveTask => ({ spec: leader.spec, timeLimitS: options.timeLimitS, gap: options.gap, baselines: options.baselines, ...(options.calibration ? { calibration: options.calibration } : {}), ...(options.intervalModel ? { intervalModel: options.intervalModel } : {}), ...(options.baselinePlan ? { baselinePlan: options.baselinePlan } : {}) });
      let startedMs = performance.now();
      const ran = await pool.runChunk(chunk.map((group) => task(group[0]!)), (index, outcome) => {
        if (outcome.kind === 'cancelled') return;
        const group = chunk[index]!;
        const leader = group[0]!;
        const now = performance.now();
        const wallTimeS = (now - startedMs) / 1000;
        startedMs = now;
        const result = outcome.kind === 'done'
          ? outcome.value
          : outcome.kind === 'crashed'
            ? failedOutcome('error', outcome.message)
            : { status: 'timeout' as const, error: `no result within ${outcome.budgetS} s (time limit ${options.timeLimitS} s + grace ${options.graceS} s); worker terminated` };
        solves++;
        group.forEach((scenario, i) => {
          onRecord(makeRecord(scenario, result, context, wallTimeS, i === 0 ? null : leader.id));
          if (i > 0) cacheHits++;
        });
      });
      if (options.signal?.aborted) return;
      if (ran < chunk.length) remaining.unshift(...chunk.slice(ran));
    }
  };
  try {
    await Promise.all(Array.from({ length: pool.size }, runner));
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await pool.close();
  }
  return { interrupted: options.signal?.aborted ?? false, solves, cacheHits, workersReplaced: pool.replacements };
}

/**
 * Scenarios per worker message: guided scheduling, large chunks while much is left (tiny
 * scenarios then cost one message per chunk, not one each), one at a time at the end so that
 * the workers finish together; at most 16, so that an interrupted chunk loses little.
 */
export function chunkSize(remaining: number, workers: number): number {
  return Math.max(1, Math.min(16, Math.floor(remaining / (4 * Math.max(1, workers)))));
}

/** A record for `scenario` carrying the answer of an earlier record with the same solve key. */
function copyOf(scenario: BatchScenario, from: BatchRecord, context: RecordContext): BatchRecord {
  const outcome: SolveOutcome = {
    status: from.status as SolveOutcome['status'],
    iterationTimeS: from.iterationTimeS,
    // Records written before intervals existed have none.
    iterationTimeLowS: from.iterationTimeLowS ?? null, iterationTimeHighS: from.iterationTimeHighS ?? null, intervalLevel: from.intervalLevel ?? null, intervalBasis: from.intervalBasis ?? null, mayNotFit: from.mayNotFit ?? null,
    mfu: from.mfu, gap: from.gap, lowerBoundS: from.lowerBoundS,
    productionSpeedup: from.productionSpeedup, ppAcrossSpeedup: from.ppAcrossSpeedup,
    // Records written before the baselines' bounds existed have none.
    productionSpeedupAtLeast: from.productionSpeedupAtLeast ?? null, ppAcrossSpeedupAtLeast: from.ppAcrossSpeedupAtLeast ?? null, plan: from.plan,
    reasons: from.reasons, error: from.error, solverTimeS: from.timing.solverTimeS,
    ...(from.baselinePlan ? { baselinePlan: from.baselinePlan } : {}),
  };
  return makeRecord(scenario, outcome, context, 0, from.id);
}
