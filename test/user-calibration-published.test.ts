/**
 * User calibration on a published table it was not fitted on (bench/user-calibration.ts): the
 * long-context fp8 table (F2) left out of the built-in fit, three of its rows given to the user
 * fit, its other rows predicted better than by the constants fitted without it. Runs the built
 * bench in a child process (`npm run build` first): the refit without the table takes about 20 s
 * there and several minutes inside jest's sandbox.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import type { TableResult } from '../bench/user-calibration';
import { median } from '../src/calibration/calibration-table';
import { ROOT } from './helpers/fixtures';

describe('calibrate on three rows of a published table left out of the built-in fit', () => {
  it('predicts the table\'s other rows better than the constants fitted without it (F2, long context)', () => {
    const child = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'bench', 'user-calibration.js'), '--table', 'F2'], { encoding: 'utf8' });
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: '' });
    const result = JSON.parse(child.stdout) as TableResult;
    expect(result.given).toHaveLength(3);
    expect(result.others.length).toBeGreaterThanOrEqual(2);
    const before = result.others.map((o) => Math.abs(o.before));
    const after = result.others.map((o) => Math.abs(o.after));
    expect(median(after)).toBeLessThan(median(before));
    expect(Math.max(...after)).toBeLessThan(Math.max(...before));
    expect(Object.keys(result.changed).length).toBeGreaterThan(0);
  }, 120_000);
});
