/**
 * Merging result files (shards, resumed runs): one record per id, sorted by ordinal then id,
 * and a completeness check against the batch the records say they belong to (`total`,
 * `batchKey`) or, when given, the list of scenarios expected.
 */
import type { BatchRecord, RecordStatus } from './record';
import { describeSource, type BatchScenario } from './scenario-list';

/** When an id appears more than once, the record with the most definite status is kept (then the first seen). */
const STATUS_RANK: Readonly<Record<RecordStatus, number>> = { optimal: 0, feasible: 1, infeasible: 2, unknown: 3, invalid: 4, timeout: 5, error: 6 };

export interface MissingScenario {
  readonly ordinal: number;
  readonly id: string | null;
  readonly label: string | null;
}

export interface MergeReport {
  readonly records: readonly BatchRecord[];
  readonly duplicatesDropped: number;
  /** Scenarios of the batch with no record. */
  readonly missing: readonly MissingScenario[];
  /** Scenarios expected by the batch (undefined when the records disagree about it). */
  readonly expectedTotal: number | undefined;
  /** Problems that make completeness unknowable, e.g. records from different batches. */
  readonly problems: readonly string[];
}

export function mergeRecords(records: readonly BatchRecord[], expected?: readonly BatchScenario[]): MergeReport {
  const best = new Map<string, BatchRecord>();
  let duplicatesDropped = 0;
  for (const record of records) {
    const kept = best.get(record.id);
    if (kept) duplicatesDropped++;
    if (!kept || STATUS_RANK[record.status] < STATUS_RANK[kept.status]) best.set(record.id, record);
  }
  const merged = [...best.values()].sort((a, b) => a.ordinal - b.ordinal || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const problems: string[] = [];
  let missing: MissingScenario[] = [];
  let expectedTotal: number | undefined;
  if (expected) {
    expectedTotal = expected.length;
    missing = expected.filter((s) => !best.has(s.id)).map((s) => ({ ordinal: s.ordinal, id: s.id, label: describeSource(s.source) }));
    const expectedIds = new Set(expected.map((s) => s.id));
    const extra = merged.filter((r) => !expectedIds.has(r.id)).length;
    if (extra > 0) problems.push(`${extra} record(s) are not scenarios of the given inputs`);
  } else {
    const keys = new Set(merged.map((r) => `${r.batchKey}/${r.total}`));
    if (keys.size > 1) {
      problems.push(`the records come from ${keys.size} different batches (batchKey/total: ${[...keys].join(', ')}); merge parts of one batch`);
    } else if (merged.length === 0) {
      problems.push('the inputs hold no result records');
    } else {
      expectedTotal = merged[0]!.total;
      const seen = new Set(merged.map((r) => r.ordinal));
      for (let ordinal = 0; ordinal < expectedTotal; ordinal++) {
        if (!seen.has(ordinal)) missing.push({ ordinal, id: null, label: null });
      }
    }
  }
  return { records: merged, duplicatesDropped, missing, expectedTotal, problems };
}
