/**
 * The cost model against published measurements (../shared/data/calibration.md): every fixture
 * row parses and evaluates, predictions stay physical, and docs/calibration.md shows the current
 * table. The accuracy targets of issue 17 are reported in docs/calibration.md, not asserted: the
 * model does not meet them on every table (docs/cost-model.md §7).
 */
import * as fs from 'fs';
import * as path from 'path';
import { calibrate, formatCalibrationTable, median, type CalibrationRow } from '../src/calibration/calibration-table';
import { coordinateSearch, currentConstants, FITTED_PARAMETERS, fitConstants, fitConstantsMultiStart, leaveOneSourceOut, loss, pairSearch, scaledStart, START_SCALES, withConstants } from '../src/calibration/fit';
import { readJsonArrays } from '../src/io/files';
import { ROOT } from './helpers/fixtures';

type Json = any; // a row's scenario document

const rows = readJsonArrays(path.join(ROOT, 'fixtures', 'calibration')) as CalibrationRow[];
const results = rows.map(calibrate);
const byTable = (table: string) => results.filter((_, i) => rows[i]!.table === table);

describe('calibration against published throughput', () => {
  it('covers every expressible row of calibration.md sections A-C and E-H', () => {
    const counts = Object.fromEntries(['A', 'B', 'C', 'E', 'F1', 'F2', 'G', 'H'].map((t) => [t, byTable(t).length]));
    expect(counts).toEqual({ A: 10, B: 9, C: 8, E: 6, F1: 5, F2: 8, G: 11, H: 3 });
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    for (const row of rows) expect(row.assumptions.length).toBeGreaterThan(0);
  });

  it('every row evaluates to a finite positive prediction; MFU against the dense bf16 peak stays below 1, predicted and published', () => {
    for (const r of results) {
      expect({ id: r.id, finite: Number.isFinite(r.predicted) && r.predicted > 0 }).toEqual({ id: r.id, finite: true });
      expect({ id: r.id, mfuBelowOne: r.mfu > 0 && r.mfu < 1 }).toEqual({ id: r.id, mfuBelowOne: true });
      // The published run's MFU: the prediction's scaled by published over predicted tokens/s/GPU.
      const publishedMfu = r.mfu * r.publishedTokensPerGpu / r.predictedTokensPerGpu;
      expect({ id: r.id, publishedMfuBelowOne: publishedMfu > 0 && publishedMfu < 1 }).toEqual({ id: r.id, publishedMfuBelowOne: true });
    }
  });

  it('fp8 rows are exactly the rows whose scenario asks for fp8 (id prefix fp8-)', () => {
    for (const row of rows) expect({ id: row.id, fp8: (row.scenario as Json).training.precision === 'fp8' }).toEqual({ id: row.id, fp8: row.id.startsWith('fp8-') });
  });

  it('dense bf16 Megatron tables (A, B, C): median absolute error <= 10%, every row <= 20%, every published plan fits', () => {
    const dense = [...byTable('A'), ...byTable('B'), ...byTable('C')];
    expect(median(dense.map((r) => Math.abs(r.relativeError)))).toBeLessThanOrEqual(0.1);
    for (const r of dense) expect({ id: r.id, withinTwentyPercent: Math.abs(r.relativeError) <= 0.2 }).toEqual({ id: r.id, withinTwentyPercent: true });
    for (const r of dense) expect({ id: r.id, fits: r.fits }).toEqual({ id: r.id, fits: true });
  });

  it('the fitter never ends above its start, leaves the committed constants as they were, and leave-one-source-out predicts each table from a fit without it', () => {
    const committed = currentConstants();
    const some = ['megatron-sc21-1.7B', 'fp8-nemo-long-llama2-7b-128k', 'folding-mixtral-8x22b-gbs256-128gpus'].map((id) => rows.find((r) => r.id === id)!);
    const start = loss(some);
    const fit = fitConstants(some, committed, 2);
    expect(fit.loss).toBeLessThanOrEqual(start);
    expect(withConstants(fit.values, () => loss(some))).toBeCloseTo(fit.loss, 12);
    expect(currentConstants()).toEqual(committed);
    const loso = leaveOneSourceOut(some.slice(0, 2), committed, false);
    expect([...loso.fits.keys()]).toEqual(['A', 'F2']);
    // Fitted on the long-context row alone, the SC'21 row's error is its error under those constants.
    expect(loso.errors.get('megatron-sc21-1.7B')).toBeCloseTo(withConstants(loso.fits.get('A')!, () => calibrate(some[0]!).relativeError), 12);
    expect(currentConstants()).toEqual(committed);
  });

  it('the multi-start fit keeps the least loss of its starts, each start within the constants\' ranges', () => {
    const committed = currentConstants();
    const some = ['fp8-nemo-long-llama2-7b-128k', 'folding-mixtral-8x22b-gbs256-128gpus'].map((id) => rows.find((r) => r.id === id)!);
    for (const scale of START_SCALES) {
      const start = scaledStart(committed, scale);
      for (const p of FITTED_PARAMETERS) {
        expect(start[p.key]).toBeGreaterThanOrEqual(p.min);
        expect(start[p.key]).toBeLessThanOrEqual(p.max);
      }
    }
    const single = fitConstants(some, committed, 2);
    const multi = fitConstantsMultiStart(some, committed, 2, false);
    const others = START_SCALES.map((scale) => fitConstants(some, scaledStart(committed, scale), 2).loss);
    expect(multi.loss).toBeCloseTo(Math.min(single.loss, ...others), 12);
    expect(withConstants(multi.values, () => loss(some))).toBeCloseTo(multi.loss, 12);
    // Followed along pairs of constants from there: the loss it reports is its values' loss, the same on a second run.
    const polished = fitConstantsMultiStart(some, committed, 2);
    expect(withConstants(polished.values, () => loss(some))).toBeCloseTo(polished.loss, 12);
    expect(fitConstantsMultiStart(some, committed, 2).values).toEqual(polished.values);
    expect(currentConstants()).toEqual(committed);
  });

  it('the pair search follows a valley between two constants that stops the coordinate search', () => {
    // A narrow valley along x = y (walls 1000 x (x - y)^2) whose floor falls towards (1, 1); start on it at (0.5, 0.5).
    // Two constants' names (the search only needs keys and ranges), a synthetic objective.
    const params = [{ key: 'matmulPeakEfficiency', min: 0.01, max: 10 }, { key: 'fp8MatmulPeakEfficiency', min: 0.01, max: 10 }] as const;
    const objective = (v: Readonly<Record<string, number>>) => {
      const [x, y] = [v['matmulPeakEfficiency']!, v['fp8MatmulPeakEfficiency']!];
      return 1000 * (x - y) ** 2 + (x + y - 2) ** 2;
    };
    const start = { matmulPeakEfficiency: 0.5, fp8MatmulPeakEfficiency: 0.5 };
    const coordinate = coordinateSearch(params, start, objective);
    // Any one-constant move climbs a wall more than it descends the floor: the coordinate search stays near its start.
    expect(coordinate.loss).toBeGreaterThan(0.8);
    const pairs = pairSearch(params, start, objective, { minStep: 0.001 });
    expect(pairs.loss).toBeLessThan(1e-3);
    expect(pairs.values['matmulPeakEfficiency']).toBeCloseTo(1, 1);
    expect(pairs.values['fp8MatmulPeakEfficiency']).toBeCloseTo(1, 1);
  });

  it('the pair search moves an integer constant by at least 1 and a constant at 0 off it', () => {
    // Minimum at 5 for an integer constant started at 3 (5% of 3 rounds to 0) and at 0.2 for one started at 0.
    const params = [{ key: 'scoreBytesPerElement', min: 0, max: 32, integer: true }, { key: 'dpOverlapResidual', min: 0, max: 1 }] as const;
    const objective = (v: Readonly<Record<string, number>>) => (v['scoreBytesPerElement']! - 5) ** 2 + (v['dpOverlapResidual']! - 0.2) ** 2;
    const found = pairSearch(params, { scoreBytesPerElement: 3, dpOverlapResidual: 0 }, objective, { minStep: 0.001 });
    expect(found.values['scoreBytesPerElement']).toBe(5);
    expect(found.values['dpOverlapResidual']).toBeCloseTo(0.2, 2);
  });

  it('docs/calibration.md shows the current table (regenerate with `npm run calibration`)', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'calibration.md'), 'utf8');
    const table = formatCalibrationTable(results).split('\n').slice(2); // the rows and the summary line, without the header
    const docRows = table.filter((l) => l.startsWith('| ')).map((l) => {
      const [id, metric, published, predicted, error] = l.split(' | ');
      return [id, metric, published, predicted, error];
    });
    for (const [id, metric, published, predicted, error] of docRows) {
      expect(doc).toContain(`${id} | ${rows.find((r) => `| ${r.id}` === id)!.table} | ${metric} | ${published} | ${predicted} | ${error} |`);
    }
    expect(doc).toContain(table[table.length - 1]);
  });
});
