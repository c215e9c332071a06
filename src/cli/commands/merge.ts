/**
 * `scaleacross merge parts/*.ndjson --out all.ndjson [--csv all.csv] [--scenarios inputs...]`:
 * one record per scenario from shard or resumed result files, sorted by ordinal, with a
 * completeness check (exit 5 when scenarios are missing).
 */
import { resultsCsv } from '../../batch/csv';
import { mergeRecords } from '../../batch/merge';
import type { BatchRecord } from '../../batch/record';
import { buildScenarioList } from '../../batch/scenario-list';
import { statusCounts } from '../../batch/summary';
import { readBatchInputs } from '../../io/batch-inputs';
import { readResultsFile, writeFileAtomically, writeResultsFile } from '../../io/results-store';
import { EXIT, type Output } from '../exit-codes';

export interface MergeArgs {
  readonly parts: readonly string[];
  readonly out: string;
  readonly csv?: string;
  /** The batch's inputs, to name missing scenarios by id (otherwise by ordinal). */
  readonly scenarios?: readonly string[];
}

const MAX_LISTED = 20;

export function runMerge(args: MergeArgs, output: Output): number {
  const records: BatchRecord[] = [];
  for (const part of args.parts) {
    const file = readResultsFile(part, false, true);
    if (file.droppedTailBytes > 0) output.err(`${part}: ignored an unfinished last line (${file.droppedTailBytes} bytes)`);
    records.push(...file.records);
  }
  const expected = args.scenarios && args.scenarios.length > 0 ? buildScenarioList(readBatchInputs(args.scenarios)).scenarios : undefined;
  const report = mergeRecords(records, expected);
  writeResultsFile(args.out, report.records);
  if (args.csv) writeFileAtomically(args.csv, resultsCsv(report.records));
  output.out(`merged ${records.length} record(s) from ${args.parts.length} file(s) into ${args.out}: ${statusCounts(report.records)}${report.duplicatesDropped > 0 ? `; ${report.duplicatesDropped} duplicate(s) dropped` : ''}`);
  for (const problem of report.problems) output.err(`merge: ${problem}`);
  if (report.missing.length > 0) {
    output.err(`merge: incomplete: ${report.missing.length} of ${report.expectedTotal} scenario(s) have no result`);
    for (const m of report.missing.slice(0, MAX_LISTED)) {
      output.err(m.id ? `  missing ${m.id} (ordinal ${m.ordinal}): ${m.label}` : `  missing ordinal ${m.ordinal} (pass --scenarios with the batch's inputs to name it)`);
    }
    if (report.missing.length > MAX_LISTED) output.err(`  ... and ${report.missing.length - MAX_LISTED} more`);
  }
  if (report.missing.length > 0 || report.problems.length > 0) return EXIT.incomplete;
  output.out(`complete: all ${report.expectedTotal ?? 0} scenario(s) have a result`);
  return EXIT.ok;
}
