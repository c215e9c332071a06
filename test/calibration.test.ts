/**
 * The cost model against published measurements (../shared/data/calibration.md): prints
 * predicted vs published per row; one constant set for every row.
 */
import * as fs from 'fs';
import * as path from 'path';
import { calibrate, formatCalibrationTable, median, type CalibrationRow } from '../src/calibration/calibration-table';
import { readJsonArrays } from '../src/io/files';
import { ROOT } from './helpers/fixtures';

const rows = readJsonArrays(path.join(ROOT, 'fixtures', 'calibration')) as CalibrationRow[];
const results = rows.map(calibrate);

describe('calibration against published throughput', () => {
  it('covers every row of the three published tables (10 + 9 + 8)', () => {
    expect(rows.filter((r) => r.id.startsWith('megatron-sc21-'))).toHaveLength(10);
    expect(rows.filter((r) => r.id.startsWith('megatron-h100-'))).toHaveLength(9);
    expect(rows.filter((r) => r.id.startsWith('korthikanti-'))).toHaveLength(8);
  });

  it('median absolute error <= 10%, every row <= 20%, every published plan fits', () => {
    console.log(formatCalibrationTable(results));
    const errors = results.map((r) => Math.abs(r.relativeError));
    expect(median(errors)).toBeLessThanOrEqual(0.1);
    for (const r of results) expect({ id: r.id, withinTwentyPercent: Math.abs(r.relativeError) <= 0.2 }).toEqual({ id: r.id, withinTwentyPercent: true });
    for (const r of results) expect({ id: r.id, fits: r.fits }).toEqual({ id: r.id, fits: true });
  });

  it('docs/calibration.md shows the current table (regenerate with `npm run calibration`)', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'calibration.md'), 'utf8');
    expect(doc).toContain(formatCalibrationTable(results));
  });
});
