/**
 * `plan --baseline-plan`: the plan run today, evaluated beside the best plan. The speedup it prints
 * must equal the ratio of two separate `evaluate` runs (baseline plan, best plan).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { run } from './helpers/run-cli';
import { clone, fixturePath, readPlanFixture } from './helpers/fixtures';

jest.setTimeout(60_000);

const example = fixturePath('llama3-405b-two-buildings.json');
const current = fixturePath('plans/llama3-405b-two-buildings.plan.json');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-baseline-'));
const writeTemp = (name: string, value: unknown): string => {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
};
const evaluatedS = async (planFile: string): Promise<number> => {
  const result = await run('evaluate', example, '--plan', planFile, '--json');
  expect(result.code).toBe(0);
  return JSON.parse(result.out).predicted.iterationTimeS;
};

describe('plan --baseline-plan', () => {
  it('reports the speedup over the given plan, equal to the ratio of the two evaluate results', async () => {
    const result = await run('plan', example, '--baseline-plan', current, '--json', '--time-limit', '3', '--no-explain-idle');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out);
    expect(json.baselinePlan.fits).toBe(true);
    expect(json.baselinePlan.violations).toEqual([]);
    const baselineS = await evaluatedS(current);
    const bestS = await evaluatedS(writeTemp('best.json', json.plan));
    expect(json.baselinePlan.iterationTimeS).toBeCloseTo(baselineS, 12);
    expect(json.baselinePlan.speedup).toBeCloseTo(baselineS / bestS, 12);
    // The best plan is the best the search found: never slower than a plan of its space it was shown.
    expect(json.baselinePlan.speedup).toBeGreaterThanOrEqual(1 - json.bound.gap);
  });

  it('prints the speedup in the text output', async () => {
    const result = await run('plan', example, '--baseline-plan', current, '--time-limit', '3', '--no-explain-idle');
    expect(result.code).toBe(0);
    const line = result.out.split('\n').find((l) => l.startsWith('Against your plan'))!;
    expect(line).toMatch(new RegExp(`^Against your plan \\(${current.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\): \\d+\\.\\d{3} s \\([^)]*\\), the best plan is \\d+\\.\\d{3}x faster`));
  });

  it('reports a plan that does not fit the scenario with its reasons, not a crash', async () => {
    const doubled = clone(readPlanFixture('llama3-405b-two-buildings')) as { dp: number; placement: { replicaGroups: { replicas: number }[] } };
    doubled.dp *= 2;
    for (const g of doubled.placement.replicaGroups) g.replicas *= 2;
    const file = writeTemp('too-many-gpus.json', doubled);
    const json = JSON.parse((await run('plan', example, '--baseline-plan', file, '--json', '--time-limit', '2', '--no-explain-idle')).out);
    expect(json.baselinePlan.fits).toBe(false);
    expect(json.baselinePlan.speedup).toBeNull();
    expect(json.baselinePlan.violations).toEqual(expect.arrayContaining(['bldg-a has 8192 GPUs, the plan uses 16384']));
    const text = await run('plan', example, '--baseline-plan', file, '--time-limit', '2', '--no-explain-idle');
    expect(text.code).toBe(0);
    expect(text.out).toContain(`Against your plan (${file}): does not fit this scenario`);
    expect(text.out).toContain('bldg-a has 8192 GPUs, the plan uses 16384');
  });

  it('exits 2 naming the file and path for a plan of other sites, before searching', async () => {
    const elsewhere = clone(readPlanFixture('llama3-405b-two-buildings')) as { placement: { replicaGroups: { stageSites: { site: string }[] }[] } };
    elsewhere.placement.replicaGroups[0]!.stageSites[0]!.site = 'bldg-z';
    const file = writeTemp('elsewhere.json', elsewhere);
    const result = await run('plan', example, '--baseline-plan', file, '--time-limit', '2', '--no-explain-idle');
    expect(result.code).toBe(2);
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.err).toContain(`${file}: plan.placement.replicaGroups[0].stageSites[0].site`);
  });
});
