/** The end-of-batch summary: one row per scenario and a count per status. */
import { RECORD_STATUSES, type BatchRecord } from './record';
import { describeSource } from './scenario-list';

const fixed = (x: number | null, digits: number, suffix = ''): string => (x === null ? '-' : `${x.toFixed(digits)}${suffix}`);
const percent = (x: number | null): string => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
const MAX_LABEL = 96;

export function scenarioLabel(record: BatchRecord): string {
  const label = record.source.kind === 'file' ? `${record.name ?? '(no name)'} (${record.source.file})` : describeSource(record.source);
  return label.length > MAX_LABEL ? `${label.slice(0, MAX_LABEL - 3)}...` : label;
}

/** `200 scenarios: 180 optimal, 17 feasible, 3 error`. */
export function statusCounts(records: readonly BatchRecord[]): string {
  const counts = RECORD_STATUSES.map((s) => [s, records.filter((r) => r.status === s).length] as const).filter(([, n]) => n > 0);
  return `${records.length} scenario${records.length === 1 ? '' : 's'}${counts.length > 0 ? `: ${counts.map(([s, n]) => `${n} ${s}`).join(', ')}` : ''}`;
}

/** A fixed-width table: scenario, status, iteration time and its interval, MFU, gap, speedup over `production`. */
export function summaryTable(records: readonly BatchRecord[]): string {
  const header = ['scenario', 'status', 'iteration s', 'interval', 'MFU', 'gap', 'vs production'];
  const rows = records.map((r) => [
    scenarioLabel(r),
    r.status,
    fixed(r.iterationTimeS, 4),
    r.iterationTimeS != null && r.iterationTimeLowS != null && r.iterationTimeHighS != null && r.intervalLevel != null
      ? `${r.iterationTimeLowS.toFixed(4)}-${r.iterationTimeHighS.toFixed(4)}, ${Math.round(100 * r.intervalLevel)}%${r.mayNotFit ? ', may not fit' : ''}` : '-',
    percent(r.mfu),
    percent(r.gap),
    fixed(r.productionSpeedup, 2, 'x'),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: readonly string[]): string => cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
