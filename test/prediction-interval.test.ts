/** Prediction intervals from calibration residuals (src/model/prediction-interval.ts). */
import * as fc from 'fast-check';
import * as path from 'path';
import { calibrate, type CalibrationRow } from '../src/calibration/calibration-table';
import { readJsonArrays } from '../src/io/files';
import { BUILT_IN_RESIDUALS } from '../src/model/calibration-residuals';
import {
  builtInIntervalModel, fixedAllowance, intervalModel, intervalRatios, MEMORY_FIXED_RELATIVE_ALLOWANCE, orderStatisticMinimum,
  studentTQuantile, timeErrorOf, timeInterval,
} from '../src/model/prediction-interval';
import { ROOT } from './helpers/fixtures';

/** Residuals as relative errors, from log residuals in (-0.7, 0.7). */
const logResiduals = (minLength: number, maxLength: number) =>
  fc.array(fc.double({ min: -0.7, max: 0.7, noNaN: true }), { minLength, maxLength });
const toErrors = (logs: readonly number[]): number[] => logs.map((r) => Math.expm1(r));
const levels = fc.constantFrom(0.5, 0.8, 0.9, 0.95);

describe('intervalRatios', () => {
  it('contains the point estimate for any residuals, level and prediction', () => {
    fc.assert(fc.property(logResiduals(2, 80), levels, fc.double({ min: 1e-3, max: 1e4, noNaN: true }), (logs, level, predictedS) => {
      const ratios = intervalRatios(toErrors(logs), level)!;
      const interval = timeInterval(predictedS, { basis: 'test', time: ratios, memory: fixedAllowance(0.05) });
      expect(interval.lowS).toBeLessThanOrEqual(predictedS);
      expect(interval.highS).toBeGreaterThanOrEqual(predictedS);
      expect(interval.level).toBe(level);
    }));
  });

  it('widens weakly when the residuals widen (each moved away from zero), strictly when scaled and the interval is not degenerate', () => {
    fc.assert(fc.property(
      logResiduals(2, 80), levels, fc.double({ min: 1.01, max: 3, noNaN: true }), fc.array(fc.double({ min: 1, max: 3, noNaN: true }), { minLength: 80, maxLength: 80 }),
      (logs, level, scale, factors) => {
        const base = intervalRatios(toErrors(logs), level)!;
        // Each residual moved away from zero by its own factor: weakly wider.
        const spread = intervalRatios(toErrors(logs.map((r, i) => r * factors[i]!)), level)!;
        expect(spread.method).toBe(base.method);
        expect(spread.lowRatio).toBeLessThanOrEqual(base.lowRatio);
        expect(spread.highRatio).toBeGreaterThanOrEqual(base.highRatio);
        // All scaled by the same factor > 1: each side that is not at the point estimate moves out strictly.
        const scaled = intervalRatios(toErrors(logs.map((r) => r * scale)), level)!;
        if (base.lowRatio < 1 - 1e-12) expect(scaled.lowRatio).toBeLessThan(base.lowRatio);
        else expect(scaled.lowRatio).toBeLessThanOrEqual(base.lowRatio);
        if (base.highRatio > 1 + 1e-12) expect(scaled.highRatio).toBeGreaterThan(base.highRatio);
        else expect(scaled.highRatio).toBeGreaterThanOrEqual(base.highRatio);
      },
    ));
  });

  it('uses order statistics from 2 / (1 - level) - 1 residuals and the Student t rule below', () => {
    expect(orderStatisticMinimum(0.9)).toBe(19);
    expect(orderStatisticMinimum(0.8)).toBe(9);
    const logs = Array.from({ length: 19 }, (_, i) => (i - 9) / 100);
    expect(intervalRatios(toErrors(logs), 0.9)!.method).toBe('order-statistics');
    expect(intervalRatios(toErrors(logs.slice(1)), 0.9)!.method).toBe('student-t');
    // 19 residuals at 90%: the smallest and the largest (coverage 18/20).
    const r = intervalRatios(toErrors(logs), 0.9)!;
    expect(r.highRatio).toBeCloseTo(Math.exp(0.09), 12);
    expect(r.lowRatio).toBeCloseTo(Math.exp(-0.09), 12);
    expect(intervalRatios([0.1], 0.9)).toBeUndefined();
  });

  it('widens with fewer residuals of the same spread (the small-sample inflation)', () => {
    const at = (n: number) => intervalRatios(toErrors(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 0.05 : -0.05))), 0.9)!;
    for (let n = 3; n < 18; n++) expect(at(n).highRatio).toBeGreaterThan(at(n + 1).highRatio);
  });

  it('applies the spread floor only below it', () => {
    const tiny = toErrors([0.001, -0.001, 0.002]);
    const floored = intervalRatios(tiny, 0.9, 0.02)!;
    const half = studentTQuantile(0.95, 2) * Math.sqrt(1 + 1 / 3) * 0.02;
    expect(floored.highRatio).toBeCloseTo(Math.exp(half), 12);
    const wide = toErrors([0.1, -0.1, 0.05]);
    expect(intervalRatios(wide, 0.9, 0.02)).toEqual(intervalRatios(wide, 0.9, 0));
  });

  it('covers about the level of new draws from the residuals\' distribution', () => {
    // Deterministic normal draws (Box-Muller on a linear congruential generator).
    let seed = 12345;
    const uniform = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed + 0.5) / 2147483648; };
    const normal = () => 0.08 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    for (const n of [5, 60]) {
      let inside = 0;
      const trials = 3000;
      for (let t = 0; t < trials; t++) {
        const ratios = intervalRatios(toErrors(Array.from({ length: n }, normal)), 0.9)!;
        const measuredRatio = Math.exp(-normal());
        if (measuredRatio >= ratios.lowRatio && measuredRatio <= ratios.highRatio) inside++;
      }
      expect(inside / trials).toBeGreaterThan(0.87);
      expect(inside / trials).toBeLessThan(0.96);
    }
  });
});

describe('studentTQuantile', () => {
  it('matches tabulated values', () => {
    expect(studentTQuantile(0.95, 1)).toBeCloseTo(6.313752, 5);
    expect(studentTQuantile(0.95, 2)).toBeCloseTo(2.919986, 5);
    expect(studentTQuantile(0.95, 4)).toBeCloseTo(2.131847, 5);
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.228139, 5);
    expect(studentTQuantile(0.95, 1000)).toBeCloseTo(1.646379, 4);
    expect(studentTQuantile(0.05, 4)).toBeCloseTo(-2.131847, 5);
  });
});

describe('built-in residuals', () => {
  const rows = readJsonArrays(path.join(ROOT, 'fixtures', 'calibration')) as CalibrationRow[];

  it('are the calibration rows\' in-sample errors under the committed constants (regenerate with npm run calibration when they move)', () => {
    expect(BUILT_IN_RESIDUALS.rows.map((r) => r.id).sort()).toEqual(rows.map((r) => r.id).sort());
    for (const row of rows) {
      const stored = BUILT_IN_RESIDUALS.rows.find((r) => r.id === row.id)!;
      const result = calibrate(row);
      expect(stored.inSampleTimeError).toBeCloseTo(timeErrorOf(row.metric === 'iterationTimeS', result.relativeError), 5);
    }
  });

  it('give the 90% interval by the order statistics of the leave-one-source-out errors', () => {
    const logs = BUILT_IN_RESIDUALS.rows.map((r) => Math.log1p(r.losoTimeError)).sort((a, b) => a - b);
    const n = logs.length;
    const j = Math.floor((n + 1) * 0.05 + 1e-9);
    expect((n + 1 - 2 * j) / (n + 1)).toBeGreaterThanOrEqual(0.9);
    const model = builtInIntervalModel();
    expect(model.time.method).toBe('order-statistics');
    expect(model.time.lowRatio).toBeCloseTo(Math.exp(-Math.max(0, logs[n - j]!)), 12);
    expect(model.time.highRatio).toBeCloseTo(Math.exp(-Math.min(0, logs[j - 1]!)), 12);
    expect(model.memory).toEqual(fixedAllowance(MEMORY_FIXED_RELATIVE_ALLOWANCE));
  });

  it('fall back to the fixed memory allowance with fewer than 2 memory residuals, and use them from 2', () => {
    expect(intervalModel({ basis: 't', timeErrors: [0.1, -0.1], memoryErrors: [0.02] })!.memory.method).toBe('fixed-allowance');
    expect(intervalModel({ basis: 't', timeErrors: [0.1, -0.1], memoryErrors: [0.02, -0.03] })!.memory.method).toBe('student-t');
  });
});
