/**
 * What `batch --resume` does with the records already in a results file. Records are keyed by
 * content id, so an input that changed since (a malformed file fixed, a sweep corrected) has a
 * new id and is run again. Two things keep the file one batch after such a change:
 * - an `invalid` record of an input file of this batch whose id is no longer produced (the file
 *   was fixed, or broken differently) is superseded: dropped, as it no longer describes the file
 *   (solved records of changed inputs are kept: they cost a solve and may be reused by solve key);
 * - a record of a scenario still in the batch is carried over into it: its ordinal, total, batch
 *   key and sources become this batch's (its answer and timing stay).
 * Pure: the caller rewrites the file when `changed`.
 */
import type { BatchRecord } from './record';
import type { BatchScenario, ScenarioList } from './scenario-list';

export interface ResumedRecords {
  /** The file's records to keep, in file order, carried over where they belong to this batch. */
  readonly records: readonly BatchRecord[];
  /** Invalid records of inputs that changed since. */
  readonly superseded: readonly BatchRecord[];
  /** Records whose bookkeeping was brought into this batch. */
  readonly carriedOver: number;
  /** True when `records` differs from the file. */
  readonly changed: boolean;
}

const sameSources = (record: BatchRecord, scenario: BatchScenario): boolean =>
  JSON.stringify([record.source, record.alsoFrom]) === JSON.stringify([scenario.source, scenario.alsoFrom]);

export function reconcileResumed(existing: readonly BatchRecord[], list: ScenarioList): ResumedRecords {
  const byId = new Map(list.scenarios.map((s) => [s.id, s]));
  const inputFiles = new Set(list.scenarios.flatMap((s) => [s.source, ...s.alsoFrom]).map((source) => source.file));
  const superseded = existing.filter((r) => r.status === 'invalid' && !byId.has(r.id) && inputFiles.has(r.source.file));
  const total = list.scenarios.length;
  let carriedOver = 0;
  const records = existing.filter((r) => !superseded.includes(r)).map((r): BatchRecord => {
    const scenario = byId.get(r.id);
    if (!scenario || (r.batchKey === list.batchKey && r.total === total && r.ordinal === scenario.ordinal && sameSources(r, scenario))) return r;
    carriedOver++;
    return { ...r, ordinal: scenario.ordinal, total, batchKey: list.batchKey, source: scenario.source, alsoFrom: scenario.alsoFrom };
  });
  return { records, superseded, carriedOver, changed: superseded.length > 0 || carriedOver > 0 };
}
