/**
 * `batch --baseline-plan`: the same given plan evaluated on every scenario; records and the CSV
 * carry its time and the speedup over it only when one is given. Worker threads run the built dist/.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse } from 'csv-parse/sync';
import type { BatchRecord } from '../src/batch/record';
import { run } from './helpers/run-cli';
import { evaluate } from '../src/model/evaluate';
import { fixturePath, loadFixture, readPlanFixture } from './helpers/fixtures';

jest.setTimeout(90_000);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-batch-baseline-'));
const readRecords = (file: string): BatchRecord[] => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as BatchRecord);

describe('batch --baseline-plan', () => {
  it('records the given plan beside each best plan: the speedup where it fits, the reasons where it does not', async () => {
    const out = path.join(tmp, 'with.ndjson');
    const csv = path.join(tmp, 'with.csv');
    const planFile = fixturePath('plans/llama3-405b-two-buildings.plan.json');
    const result = await run('batch', fixturePath('llama3-405b-two-buildings.json'), fixturePath('small/two-sites.json'), '--out', out, '--csv', csv,
      '--baseline-plan', planFile, '--time-limit', '3', '--workers', '1', '--no-baselines', '--quiet', '--no-charts');
    expect(result.code).toBe(0);
    const records = readRecords(out);
    const twoBuildings = records.find((r) => r.name === 'llama3-405b-two-buildings')!;
    const baselineS = evaluate(loadFixture('llama3-405b-two-buildings'), readPlanFixture('llama3-405b-two-buildings')).predicted.iterationTimeS;
    expect(twoBuildings.baselinePlan!.fits).toBe(true);
    expect(twoBuildings.baselinePlan!.iterationTimeS).toBeCloseTo(baselineS, 9);
    expect(twoBuildings.baselinePlan!.speedup).toBeCloseTo(baselineS / twoBuildings.iterationTimeS!, 9);
    expect(twoBuildings.baselinePlan!.source).toMatch(/llama3-405b-two-buildings\.plan\.json \([0-9a-f]{16}\)$/);
    // The two-building plan names sites the small scenario does not have: recorded, not a failure.
    const small = records.find((r) => r.name === 'two-sites')!;
    expect(small.status).toBe('optimal');
    expect(small.baselinePlan).toMatchObject({ fits: false, iterationTimeS: null, speedup: null });
    expect(small.baselinePlan!.violations[0]).toContain('bldg-a');
    const rows = parse(fs.readFileSync(csv, 'utf8'), { columns: true }) as Record<string, string>[];
    const row = rows.find((r) => r['name'] === 'llama3-405b-two-buildings')!;
    expect(Number(row['baselinePlanSpeedup'])).toBeCloseTo(twoBuildings.baselinePlan!.speedup!, 9);
    expect(rows.find((r) => r['name'] === 'two-sites')!['baselinePlanFits']).toBe('false');
    // Resuming the same results with another (or no) baseline plan is refused.
    const resumed = await run('batch', fixturePath('small/two-sites.json'), '--out', out, '--resume', '--quiet', '--no-charts');
    expect(resumed.code).toBe(2);
    expect(resumed.err).toContain('holds results computed with baseline plan');
  });

  it('adds nothing without --baseline-plan', async () => {
    const out = path.join(tmp, 'without.ndjson');
    const csv = path.join(tmp, 'without.csv');
    const result = await run('batch', fixturePath('small/two-sites.json'), '--out', out, '--csv', csv, '--time-limit', '2', '--workers', '1', '--no-baselines', '--quiet', '--no-charts');
    expect(result.code).toBe(0);
    expect(readRecords(out)[0]!).not.toHaveProperty('baselinePlan');
    expect(fs.readFileSync(csv, 'utf8').split('\r\n')[0]).not.toContain('baselinePlan');
  });
});
