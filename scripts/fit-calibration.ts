/**
 * Coarse grid search for the cost model's calibrated constants against the rows of
 * fixtures/calibration (one constant set for all rows), in two stages: the bf16 constants on
 * every bf16 row at once, then, with those fixed, the fp8 constants on every fp8 row at once
 * (the fp8 constants do not change a bf16 row, so the second stage leaves the first's fit as it
 * is). Prints the best sets; the chosen values are then written by hand into
 * src/model/calibration-constants.ts.
 * Run: npm run build && node dist/scripts/fit-calibration.js [--fp8] [--hold-out <row id prefix>]
 * --fp8 runs the second stage only (the bf16 constants as in calibration-constants.ts).
 * With --hold-out, the rows whose id starts with the prefix are left out of the fit and the
 * best set's errors on them are printed: a check that the constants are not fitted to the rows.
 */
import * as path from 'path';
import { calibrate, median, type CalibrationRow } from '../src/calibration/calibration-table';
import { CALIBRATION } from '../src/model/calibration-constants';
import { readJsonArrays } from '../src/io/files';

const isFp8 = (row: CalibrationRow): boolean => (row.scenario as { training: { precision?: string } }).training.precision === 'fp8';
const fp8Stage = process.argv.includes('--fp8');
const allRows = (readJsonArrays(path.join(__dirname, '..', '..', 'fixtures', 'calibration')) as CalibrationRow[])
  .filter((row) => isFp8(row) === fp8Stage);
const holdOutFlag = process.argv.indexOf('--hold-out');
const holdOut = holdOutFlag >= 0 ? process.argv[holdOutFlag + 1]! : undefined;
const rows = holdOut ? allRows.filter((r) => !r.id.startsWith(holdOut)) : allRows;
const heldOut = holdOut ? allRows.filter((r) => r.id.startsWith(holdOut)) : [];
const range = (from: number, to: number, step: number): number[] =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => +(from + i * step).toFixed(6));
const grid: Record<string, number[]> = fp8Stage ? {
  fp8MatmulPeakEfficiency: range(0.36, 0.72, 0.01),
} : {
  matmulPeakEfficiency: [0.68, 0.72, 0.76, 0.8],
  matmulHalfRows: [32, 64, 128, 256],
  matmulHalfColumns: [32, 64, 128, 256],
  elementwiseBytesPerHidden: [64, 96, 128, 160],
  scoreBytesPerElement: [4, 8, 12, 16],
  tpOverlapResidual: [0.3, 0.45, 0.6, 0.8],
};
const keys = Object.keys(grid);
const mutable = CALIBRATION as unknown as Record<string, number>;
const best: { score: number; med: number; max: number; values: number[] }[] = [];
const choose = (i: number, values: number[]): void => {
  if (i === keys.length) {
    keys.forEach((key, k) => { mutable[key] = values[k]!; });
    const errors = rows.map((row) => Math.abs(calibrate(row).relativeError));
    const med = median(errors);
    const max = Math.max(...errors);
    best.push({ score: max + med, med, max, values: [...values] });
    best.sort((a, b) => a.score - b.score);
    if (best.length > 5) best.pop();
    return;
  }
  for (const value of grid[keys[i]!]!) choose(i + 1, [...values, value]);
};
choose(0, []);
for (const b of best) {
  console.log(`median ${(100 * b.med).toFixed(1)}% max ${(100 * b.max).toFixed(1)}%  ${keys.map((k, i) => `${k}=${b.values[i]}`).join(' ')}`);
}
if (heldOut.length > 0) {
  keys.forEach((key, k) => { mutable[key] = best[0]!.values[k]!; });
  const errors = heldOut.map((row) => Math.abs(calibrate(row).relativeError));
  console.log(`held out ${holdOut}* (${heldOut.length} rows), with the best set fitted on the other ${rows.length}: median ${(100 * median(errors)).toFixed(1)}%, largest ${(100 * Math.max(...errors)).toFixed(1)}%`);
}
