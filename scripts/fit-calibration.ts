/**
 * Fits the cost model's calibrated constants (src/calibration/fit.ts) on every row of
 * fixtures/calibration at once (one constant set, mean Huber loss of the log errors, coordinate
 * search from the committed values) and prints the set with its errors per row. The chosen
 * values are written by hand into src/model/calibration-constants.ts, and only when both the
 * in-sample and the leave-one-source-out errors (`npm run calibration`) improve.
 * Run: npm run build && node dist/scripts/fit-calibration.js [--hold-out <table>]
 * With --hold-out, that table (A, B, C, E, F1, F2, G, H) is left out of the fit and predicted.
 */
import * as path from 'path';
import { type CalibrationRow } from '../src/calibration/calibration-table';
import { currentConstants, errorsWith, fitConstants, summarise } from '../src/calibration/fit';
import { readJsonArrays } from '../src/io/files';

const allRows = readJsonArrays(path.join(__dirname, '..', '..', 'fixtures', 'calibration')) as CalibrationRow[];
const holdOutFlag = process.argv.indexOf('--hold-out');
const holdOut = holdOutFlag >= 0 ? process.argv[holdOutFlag + 1]! : undefined;
const rows = allRows.filter((r) => r.table !== holdOut);
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const committed = currentConstants();
const before = summarise(errorsWith(committed, rows).values());
const fit = fitConstants(rows, committed);
const errors = errorsWith(fit.values, allRows);
console.log(`committed constants on the ${rows.length} fitted rows: median ${pct(before.median)}, largest ${pct(before.max)}`);
console.log(`fitted: ${Object.entries(fit.values).map(([k, v]) => `${k}=${v}`).join(' ')} (loss ${fit.loss.toFixed(5)})`);
for (const row of allRows) console.log(`${row.table.padEnd(3)} ${row.id.padEnd(45)} ${pct(errors.get(row.id)!).padStart(7)}${row.table === holdOut ? '  (held out)' : ''}`);
const fitted = summarise(rows.map((r) => errors.get(r.id)!));
console.log(`fitted rows: median ${pct(fitted.median)}, largest ${pct(fitted.max)}`);
if (holdOut) {
  const held = summarise(allRows.filter((r) => r.table === holdOut).map((r) => errors.get(r.id)!));
  console.log(`held out ${holdOut}: median ${pct(held.median)}, largest ${pct(held.max)}`);
}
