/** Batch results as CSV (RFC 4180 quoting by csv-stringify): one row per record, one column per swept axis. */
import { stringify } from 'csv-stringify/sync';
import type { BatchRecord } from './record';

const cell = (x: unknown): string | number => (x === null || x === undefined ? '' : typeof x === 'number' ? x : String(x));

export function resultsCsv(records: readonly BatchRecord[]): string {
  const axisPaths = [...new Set(records.flatMap((r) => (r.source.kind === 'sweep' ? Object.keys(r.source.axes) : [])))];
  // Columns of a given baseline plan (batch --baseline-plan) only when the records have one.
  const baseline = records.some((r) => r.baselinePlan !== undefined);
  const header = [
    'id', 'ordinal', 'name', 'source', 'sweep', ...axisPaths, 'status', 'iterationTimeS', 'iterationTimeLowS', 'iterationTimeHighS', 'intervalLevel', 'mayNotFit', 'mfu', 'gap', 'lowerBoundS',
    'productionSpeedup', 'ppAcrossSpeedup', 'productionSpeedupAtLeast', 'ppAcrossSpeedupAtLeast', ...(baseline ? ['baselinePlanS', 'baselinePlanFits', 'baselinePlanSpeedup'] : []), 'tp', 'cp', 'ep', 'pp', 'dp', 'microBatchSeqs', 'schedule', 'recompute', 'zero',
    'wallTimeS', 'cachedFrom', 'error',
  ];
  const rows = records.map((r) => {
    const axes = r.source.kind === 'sweep' ? r.source.axes : {};
    const p = r.plan;
    return [
      r.id, r.ordinal, r.name, r.source.file, r.source.kind === 'sweep' ? r.source.sweep : null, ...axisPaths.map((a) => axes[a]),
      r.status, r.iterationTimeS, r.iterationTimeLowS, r.iterationTimeHighS, r.intervalLevel, r.mayNotFit, r.mfu, r.gap, r.lowerBoundS, r.productionSpeedup, r.ppAcrossSpeedup, r.productionSpeedupAtLeast, r.ppAcrossSpeedupAtLeast,
      ...(baseline ? [r.baselinePlan?.iterationTimeS, r.baselinePlan?.fits, r.baselinePlan?.speedup] : []), p?.tp, p?.cp, p?.ep, p?.pp, p?.dp, p?.microBatchSeqs, p?.schedule, p?.recompute, p?.zero,
      r.timing.wallTimeS, r.timing.cachedFrom, r.error ?? (r.reasons.length > 0 ? r.reasons.join('; ') : null),
    ].map(cell);
  });
  return stringify([header, ...rows], { record_delimiter: 'windows' });
}
