/**
 * `scaleacross batch <scenario files, folders, sweep files...> --out results.ndjson [--csv results.csv]
 * [--workers N] [--resume] [--time-limit S] [--shard i/n]`: solves many scenarios in parallel
 * worker threads, one durable NDJSON line per result, resumable after any kill.
 */
import * as os from 'os';
import { resultsCsv } from '../../batch/csv';
import type { BatchRecord } from '../../batch/record';
import { runBatch } from '../../batch/run-batch';
import { buildScenarioList, describeSource, type BatchScenario } from '../../batch/scenario-list';
import { reconcileResumed } from '../../batch/resume';
import { inShard, parseShard, type Shard } from '../../batch/shard';
import { statusCounts, summaryTable } from '../../batch/summary';
import { axisSlug, sweepChartSvg } from '../../batch/svg-chart';
import { readBatchInputs } from '../../io/batch-inputs';
import { readPlanFile } from '../../io/files';
import { canonicalJson, shortHash } from '../../model/canonical-json';
import { ResultsAppender, hasContent, readResultsFile, writeFileAtomically, writeResultsFile } from '../../io/results-store';
import { createBatchProgress } from '../batch-progress';
import { profileIntervalModel, profileValues } from '../../calibration/apply-profile';
import { readCalibrationProfile } from '../../io/calibration-files';
import { EXIT, UsageError, type Output } from '../exit-codes';

export interface BatchArgs {
  readonly inputs: readonly string[];
  readonly out: string;
  readonly csv?: string;
  readonly workers?: number;
  readonly resume: boolean;
  readonly timeLimit: number;
  readonly gap: number;
  readonly baselines: boolean;
  readonly shard?: string;
  readonly timeoutGrace: number;
  readonly charts: boolean;
  readonly quiet: boolean;
  /** A calibration profile applied to every scenario. */
  readonly calibration?: string;
  /** A plan file evaluated on every scenario beside its best plan (the configuration run today). */
  readonly baselinePlan?: string;
  /** The command line as given (for the resume hint). */
  readonly argv: readonly string[];
}

export interface BatchEnvironment {
  /** A terminal stream for the progress bar, when there is one. */
  readonly progressStream?: NodeJS.WriteStream;
  /** Listen to SIGINT and SIGTERM (the real process only). */
  readonly handleSigint: boolean;
}

/** Records that answered the scenario (failed ones run again on resume). */
const REUSED_STATUSES = new Set(['optimal', 'feasible', 'infeasible', 'unknown']);

/** The plan file of `--baseline-plan`, labelled with its content hash (a changed file is another baseline). */
function batchBaselinePlan(file: string): { readonly plan: unknown; readonly source: string } {
  const plan = readPlanFile(file).plan;
  return { plan, source: `${file} (${shortHash(canonicalJson(plan))})` };
}

/** Default workers: one per core. */
export function defaultWorkerCount(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

const shellQuote = (arg: string): string => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);

/** Invalid inputs listed on stderr at the end of a batch. */
const MAX_INVALID_LISTED = 20;

/** `results.ndjson` -> `results`, the stem of the chart files. */
const outStem = (out: string): string => out.replace(/\.(ndjson|jsonl|json)$/i, '');

export async function runBatchCommand(args: BatchArgs, output: Output, env: BatchEnvironment): Promise<number> {
  let shard: Shard | undefined;
  if (args.shard !== undefined) {
    const parsed = parseShard(args.shard);
    if (typeof parsed === 'string') throw new UsageError(parsed);
    shard = parsed;
  }
  if (hasContent(args.out) && !args.resume) {
    throw new UsageError(`${args.out} already holds results: pass --resume to continue that batch, or remove the file`);
  }
  const list = buildScenarioList(readBatchInputs(args.inputs));
  // One profile for the whole batch: a scenario naming its own is refused rather than silently ignored.
  const profile = args.calibration !== undefined ? readCalibrationProfile(args.calibration) : undefined;
  const calibrationLabel = profile ? `${args.calibration} (${profile.created})` : undefined;
  const naming = list.scenarios.find((s) => s.spec !== null && typeof s.spec === 'object' && 'calibration' in s.spec);
  if (naming && !profile) {
    throw new UsageError(`${describeSource(naming.source)} names a calibration profile; batch applies one profile to every scenario: pass it with --calibration`);
  }
  const baselinePlan = args.baselinePlan === undefined ? undefined : batchBaselinePlan(args.baselinePlan);
  const mine = list.scenarios.filter((s) => !shard || inShard(s.id, shard));
  const mineIds = new Set(mine.map((s) => s.id));

  const read = args.resume ? readResultsFile(args.out, true) : { records: [], droppedTailBytes: 0 };
  if (read.droppedTailBytes > 0) output.err(`${args.out}: dropped an unfinished last line (${read.droppedTailBytes} bytes) left by an interrupted write`);
  // Inputs that changed since (a fixed file has a new content id): their invalid records are dropped, the rest carried over.
  const resumed = reconcileResumed(read.records, list);
  const existing = { records: resumed.records };
  const doneById = new Map<string, BatchRecord>();
  for (const record of existing.records) if (mineIds.has(record.id) && !doneById.has(record.id)) doneById.set(record.id, record);
  const otherCalibration = existing.records.find((r) => mineIds.has(r.id) && r.calibration !== calibrationLabel);
  if (otherCalibration) {
    const what = (label: string | undefined) => (label === undefined ? 'the committed constants' : `calibration ${label}`);
    throw new UsageError(`${args.out} holds results computed with ${what(otherCalibration.calibration)}; this batch uses ${what(calibrationLabel)}: write to another --out`);
  }
  const otherBaseline = existing.records.find((r) => mineIds.has(r.id) && REUSED_STATUSES.has(r.status) && r.baselinePlan?.source !== baselinePlan?.source);
  if (otherBaseline) {
    const what = (label: string | undefined) => (label === undefined ? 'no baseline plan' : `baseline plan ${label}`);
    throw new UsageError(`${args.out} holds results computed with ${what(otherBaseline.baselinePlan?.source)}; this batch uses ${what(baselinePlan?.source)}: write to another --out`);
  }
  if (resumed.changed) {
    writeResultsFile(args.out, resumed.records);
    if (resumed.superseded.length > 0) {
      const files = [...new Set(resumed.superseded.map((r) => r.source.file))];
      output.err(`${args.out}: dropped ${resumed.superseded.length} invalid record(s) of input(s) changed since (${files.slice(0, 3).join(', ')}${files.length > 3 ? ', ...' : ''}): their inputs run again`);
    }
    if (resumed.carriedOver > 0) output.err(`${args.out}: ${resumed.carriedOver} record(s) carried over into this batch (its inputs changed since they were written)`);
  }
  const foreign = existing.records.filter((r) => !mineIds.has(r.id)).length;
  if (foreign > 0) output.err(`${args.out}: ${foreign} record(s) are not scenarios of this batch${shard ? ' shard' : ''}; kept, not counted`);
  const pending: BatchScenario[] = mine.filter((s) => !doneById.has(s.id));

  const workers = args.workers ?? defaultWorkerCount();
  const progress = createBatchProgress(env.progressStream, output.err, args.quiet);
  const controller = new AbortController();
  // SIGINT or SIGTERM: stop dispatching, terminate the workers (their running solves stay
  // pending), keep every finished record, exit with the resume hint. A second signal exits at once.
  let stoppedBy: 'SIGINT' | 'SIGTERM' | undefined;
  const onSignal = (signal: 'SIGINT' | 'SIGTERM'): void => {
    if (controller.signal.aborted) process.exit(signal === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted);
    stoppedBy = signal;
    controller.abort();
  };
  if (env.handleSigint) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  const appender = new ResultsAppender(args.out);
  const newRecords: BatchRecord[] = [];
  progress.start(mine.length, doneById.size);
  let report;
  try {
    report = await runBatch(pending, {
      workers,
      timeLimitS: args.timeLimit,
      gap: args.gap,
      baselines: args.baselines,
      graceS: args.timeoutGrace,
      context: { total: list.scenarios.length, batchKey: list.batchKey, timeLimitS: args.timeLimit, ...(calibrationLabel !== undefined ? { calibration: calibrationLabel } : {}), ...(baselinePlan ? { baselinePlan: baselinePlan.source } : {}) },
      ...(profile ? { calibration: profileValues(profile), intervalModel: profileIntervalModel(profile) } : {}),
      ...(baselinePlan ? { baselinePlan } : {}),
      signal: controller.signal,
      previous: existing.records,
      onRecord: (record) => {
        appender.append(record);
        newRecords.push(record);
        progress.record(record);
      },
    });
  } finally {
    progress.stop();
    appender.close();
    if (env.handleSigint) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }

  const done = doneById.size + newRecords.length;
  if (report.interrupted) {
    const resume = ['scaleacross', ...args.argv, ...(args.argv.includes('--resume') ? [] : ['--resume'])].map(shellQuote).join(' ');
    output.err(`${stoppedBy === 'SIGTERM' ? 'terminated' : 'interrupted'}: ${done} of ${mine.length} done; resume with: ${resume}`);
    return stoppedBy === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
  }

  const records = [...doneById.values(), ...newRecords].sort((a, b) => a.ordinal - b.ordinal);
  const written: string[] = [args.out];
  if (args.csv) {
    writeFileAtomically(args.csv, resultsCsv(records));
    written.push(args.csv);
  }
  if (args.charts) {
    for (const sweep of list.sweeps) {
      const mineOfSweep = records.filter((r) => r.source.kind === 'sweep' && r.source.file === sweep.file && r.source.sweep === sweep.name);
      if (mineOfSweep.length === 0) continue;
      for (const axis of sweep.axes) {
        const file = `${outStem(args.out)}.${axisSlug(sweep.name)}.${axisSlug(axis)}.svg`;
        writeFileAtomically(file, sweepChartSvg(mineOfSweep, axis, `${sweep.name}: iteration time vs ${axis}`));
        written.push(file);
      }
    }
  }
  output.out(summaryTable(records));
  output.out('');
  const extra = [
    report.cacheHits > 0 ? `${report.cacheHits} from the solve cache` : '',
    report.workersReplaced > 0 ? `${report.workersReplaced} worker(s) replaced after a crash or timeout` : '',
    doneById.size > 0 ? `${doneById.size} already done before this run` : '',
  ].filter((s) => s !== '');
  output.out(`${statusCounts(records)}${shard ? ` (shard ${shard.index}/${shard.count} of ${list.scenarios.length})` : ''}; ${report.solves} solved by ${Math.min(workers, Math.max(1, report.solves))} worker(s)${extra.length > 0 ? `; ${extra.join('; ')}` : ''}`);
  if (calibrationLabel !== undefined) output.out(`calibration: ${calibrationLabel}`);
  output.out(`wrote ${written.join(', ')}`);
  // Invalid inputs do not stop the batch nor change its exit code (every input has its record); say which and why.
  const invalid = records.filter((r) => r.status === 'invalid');
  if (invalid.length > 0) {
    output.err(`${invalid.length} invalid input(s), recorded as invalid (fix them and rerun with --resume):`);
    for (const r of invalid.slice(0, MAX_INVALID_LISTED)) output.err(`  ${r.error}`);
    if (invalid.length > MAX_INVALID_LISTED) output.err(`  ... and ${invalid.length - MAX_INVALID_LISTED} more (the "error" of each record in ${args.out})`);
  }
  return EXIT.ok;
}
