/** Prediction intervals in the output of evaluate, plan and report, and the "may not fit" flag. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { profileIntervalModel } from '../src/calibration/apply-profile';
import { run } from './helpers/run-cli';
import type { CalibrationProfile } from '../src/model/calibration-profile-schema';
import { GPU_CATALOG } from '../src/model/gpu-catalog';
import { builtInIntervalModel } from '../src/model/prediction-interval';
import { fixturePath } from './helpers/fixtures';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-intervals-'));
const example = fixturePath('llama3-405b-two-buildings.json');
const examplePlan = fixturePath('plans/llama3-405b-two-buildings.plan.json');
const oneSite = fixturePath('small/one-site.json');
const oneSitePlan = fixturePath('calibration-runs/plans/one-site.plan.json');
/** How the text output prints seconds (src/cli/format-evaluation.ts). */
const seconds = (s: number): string => (s >= 100 ? s.toFixed(0) : s >= 1 ? s.toFixed(2) : s.toFixed(3));

/** A profile whose runs left out one at a time missed by `errors` (iteration time), with measured memory errors `memory`. */
function profileFile(name: string, errors: readonly number[], memory: readonly number[] = []): string {
  const profile: CalibrationProfile = {
    version: 1, kind: 'scaleacross-calibration', created: '2026-12-01T00:00:00.000Z', runsFile: 'runs.json', scope: 'test',
    fit: { runs: errors.length, links: 0, objective: 'test', priorWeight: 1, residualSigma: 0.02 },
    factors: {},
    runs: errors.map((e, i) => ({
      source: `runs[${i}]`, metric: 'iterationTimeS', measured: 1, predictedBefore: 1, predictedAfter: 1, errorBefore: e, errorAfter: e, leaveOneOutError: e, fits: true,
      ...(memory[i] !== undefined ? { memoryGiBPerGpu: { measured: 10, predicted: 10 * (1 + memory[i]!), error: memory[i]! } } : {}),
    })),
    links: [],
  };
  const file = path.join(tmp, name);
  fs.writeFileSync(file, JSON.stringify(profile));
  return file;
}

describe('evaluate', () => {
  it('--json keeps iterationTimeS and adds predicted.interval from the built-in residuals', async () => {
    const result = await run('evaluate', example, '--plan', examplePlan, '--json');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out);
    const p = json.predicted;
    const model = builtInIntervalModel();
    expect(p.iterationTimeS).toBeGreaterThan(0);
    expect(p.interval.level).toBe(0.9);
    expect(p.interval.lowS).toBeCloseTo(p.iterationTimeS * model.time.lowRatio, 9);
    expect(p.interval.highS).toBeCloseTo(p.iterationTimeS * model.time.highRatio, 9);
    expect(p.interval.lowS).toBeLessThan(p.iterationTimeS);
    expect(p.interval.highS).toBeGreaterThan(p.iterationTimeS);
    expect(p.memoryInterval.lowGiB).toBeCloseTo(p.memoryGiBPerGpu * 0.95, 9);
    expect(p.memoryInterval.highGiB).toBeCloseTo(p.memoryGiBPerGpu * 1.05, 9);
    expect(json.mayNotFit).toBe(false);
    for (const site of p.sites) expect(site.mayNotFit).toBe(false);
  });

  it('prints the interval beside the iteration time, the same numbers as --json', async () => {
    const json = JSON.parse((await run('evaluate', example, '--plan', examplePlan, '--json')).out);
    const text = (await run('evaluate', example, '--plan', examplePlan)).out;
    const { iterationTimeS, interval } = json.predicted;
    expect(text).toContain(`Iteration time   ${seconds(iterationTimeS)} s (${seconds(interval.lowS)}-${seconds(interval.highS)}, 90%)`);
    expect(text).toMatch(/Memory per GPU {3}peak [\d.]+ GiB \([\d.]+-[\d.]+, 90%\)/);
  });

  it('gives an attention-heavy job (64K context) the heavy rows\' interval, says why, and a profile one interval for every job', async () => {
    const rows = JSON.parse(fs.readFileSync(fixturePath('calibration/nemo-long-context.json'), 'utf8')) as { id: string; scenario: unknown; plan: unknown }[];
    const row = rows.find((r) => r.id === 'fp8-nemo-long-llama2-7b-64k')!;
    const scenarioFile = path.join(tmp, 'long.json');
    const planFile = path.join(tmp, 'long.plan.json');
    fs.writeFileSync(scenarioFile, JSON.stringify(row.scenario));
    fs.writeFileSync(planFile, JSON.stringify(row.plan));
    const json = JSON.parse((await run('evaluate', scenarioFile, '--plan', planFile, '--json')).out).predicted;
    const heavy = builtInIntervalModel().attentionHeavy!;
    expect(json.interval.lowS).toBeCloseTo(json.iterationTimeS * heavy.time.lowRatio, 9);
    expect(json.interval.highS).toBeCloseTo(json.iterationTimeS * heavy.time.highRatio, 9);
    expect(json.interval.basis).toBe(heavy.basis);
    expect(json.interval.note).toMatch(/^the attention core is 57% of this job's model FLOPs/);
    const text = (await run('evaluate', scenarioFile, '--plan', planFile)).out;
    expect(text).toMatch(/Interval {9}wide: the attention core is 57% of this job's model FLOPs; the 9 published rows at 15% or more/);
    // The light example prints no such line and names its own rows.
    const light = await run('evaluate', example, '--plan', examplePlan, '--json');
    expect(JSON.parse(light.out).predicted.interval.basis).toContain('51 published rows');
    expect((await run('evaluate', example, '--plan', examplePlan)).out).not.toContain('Interval ');
    // A profile's runs are the user's own jobs: its interval, whatever the job's attention share, and no note.
    const profile = profileFile('heavy-job.json', [0.03, -0.02, 0.01, -0.04, 0.02]);
    const withProfile = JSON.parse((await run('evaluate', scenarioFile, '--plan', planFile, '--json', '--calibration', profile)).out).predicted;
    const own = profileIntervalModel(JSON.parse(fs.readFileSync(profile, 'utf8')));
    expect(withProfile.interval.highS).toBeCloseTo(withProfile.iterationTimeS * own.time.highRatio, 12);
    expect(withProfile.interval.note).toBeUndefined();
    expect((await run('evaluate', scenarioFile, '--plan', planFile, '--calibration', profile)).out).not.toContain('Interval ');
  });

  it('takes the interval from a profile\'s leave-one-out residuals, wider when they are wider', async () => {
    const narrow = profileFile('narrow.json', [0.03, -0.02, 0.01, -0.04, 0.02], [0.02, -0.01, 0.03]);
    const wide = profileFile('wide.json', [0.09, -0.06, 0.03, -0.12, 0.06], [0.02, -0.01, 0.03]);
    const a = JSON.parse((await run('evaluate', oneSite, '--plan', oneSitePlan, '--json', '--calibration', narrow)).out).predicted;
    const b = JSON.parse((await run('evaluate', oneSite, '--plan', oneSitePlan, '--json', '--calibration', wide)).out).predicted;
    // No factor in these profiles: the same point estimate, intervals from the residuals alone.
    expect(b.iterationTimeS).toBe(a.iterationTimeS);
    const model = profileIntervalModel(JSON.parse(fs.readFileSync(narrow, 'utf8')));
    expect(model.time.method).toBe('student-t');
    expect(a.interval.lowS).toBeCloseTo(a.iterationTimeS * model.time.lowRatio, 12);
    expect(a.interval.highS).toBeCloseTo(a.iterationTimeS * model.time.highRatio, 12);
    expect(b.interval.lowS).toBeLessThan(a.interval.lowS);
    expect(b.interval.highS).toBeGreaterThan(a.interval.highS);
    // Three measured memory errors: a Student-t memory interval, not the fixed 5%.
    expect(model.memory.method).toBe('student-t');
    expect(a.memoryInterval.highGiB).toBeCloseTo(a.memoryGiBPerGpu * model.memory.highRatio, 12);
    expect(a.memoryInterval.highGiB).not.toBeCloseTo(a.memoryGiBPerGpu * 1.05, 6);
    // Without the profile, the built-in interval again.
    const plain = JSON.parse((await run('evaluate', oneSite, '--plan', oneSitePlan, '--json')).out).predicted;
    expect(plain.interval.highS).toBeCloseTo(plain.iterationTimeS * builtInIntervalModel().time.highRatio, 12);
  });
});

describe('may not fit', () => {
  const spec = JSON.parse(fs.readFileSync(oneSite, 'utf8'));
  const withCapacity = (name: string, memoryGiB: number): string => {
    const h100 = GPU_CATALOG['H100-SXM']!;
    const { gpuType: _gpuType, ...site } = spec.cluster.sites[0];
    const file = path.join(tmp, name);
    fs.writeFileSync(file, JSON.stringify({
      ...spec, $schema: undefined,
      cluster: { ...spec.cluster, sites: [{ ...site, gpu: { name: 'H100-test', peakBf16Tflops: h100.peakBf16Tflops, peakFp8Tflops: h100.peakFp8Tflops, memoryGiB, hbmGBps: h100.hbmGBps, scaleUpGBps: h100.scaleUpGBps, scaleUpDomainGpus: h100.scaleUpDomainGpus, nicGbps: h100.nicGbps } }] },
    }));
    return file;
  };

  it('flags a plan whose peak memory is within its interval of the capacity, and not one clear of it or over it', async () => {
    const peak = JSON.parse((await run('evaluate', oneSite, '--plan', oneSitePlan, '--json')).out).predicted.memoryGiBPerGpu as number;
    const near = JSON.parse((await run('evaluate', withCapacity('near.json', peak * 1.02), '--plan', oneSitePlan, '--json')).out);
    expect(near.fits).toBe(true);
    expect(near.mayNotFit).toBe(true);
    expect(near.predicted.sites[0].mayNotFit).toBe(true);
    const clear = JSON.parse((await run('evaluate', withCapacity('clear.json', peak * 1.06), '--plan', oneSitePlan, '--json')).out);
    expect(clear.fits).toBe(true);
    expect(clear.mayNotFit).toBe(false);
    const over = JSON.parse((await run('evaluate', withCapacity('over.json', peak * 0.98), '--plan', oneSitePlan, '--json')).out);
    expect(over.fits).toBe(false);
    expect(over.mayNotFit).toBe(false);
    const text = (await run('evaluate', withCapacity('near.json', peak * 1.02), '--plan', oneSitePlan)).out;
    expect(text).toContain('Fits: yes, but may not fit: dc peaks at');
    expect(text).toContain('(to plan with headroom, give the site memoryReserveGiB)');
    expect((await run('evaluate', withCapacity('clear.json', peak * 1.06), '--plan', oneSitePlan)).out).not.toContain('may not fit');
  });

  it('plan flags its plan near capacity in text, --json and the report', async () => {
    const first = JSON.parse((await run('plan', oneSite, '--json', '--time-limit', '10')).out);
    const near = withCapacity('plan-near.json', first.predicted.memoryGiBPerGpu * 1.02);
    const result = JSON.parse((await run('plan', near, '--json', '--time-limit', '10')).out);
    expect(result.fits).toBe(true);
    const peak = result.predicted.memoryGiBPerGpu as number;
    const capacity = first.predicted.memoryGiBPerGpu * 1.02;
    // The flag is the memory interval reaching past the capacity; on the same plan as before it does.
    expect(result.mayNotFit).toBe(peak * 1.05 > capacity);
    if (JSON.stringify(result.plan) === JSON.stringify(first.plan)) expect(result.mayNotFit).toBe(true);
    const text = (await run('plan', near, '--time-limit', '10')).out;
    expect(text.includes('may not fit')).toBe(result.mayNotFit);
    const html = path.join(tmp, 'near.html');
    const report = await run('report', near, '--html', html, '--time-limit', '10');
    expect(report.code).toBe(0);
    expect(report.out).toMatch(/s per iteration \([\d.]+-[\d.]+, 90%\)/);
    const page = fs.readFileSync(html, 'utf8');
    expect(page.includes('id="may-not-fit"')).toBe(result.mayNotFit);
    expect(page).toContain('id="iteration-interval"');
  });
});

describe('plan', () => {
  it('--json has predicted.interval (and for each baseline) and the text prints it', async () => {
    const result = await run('plan', oneSite, '--json', '--time-limit', '10');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out);
    const model = builtInIntervalModel();
    expect(json.predicted.interval.lowS).toBeCloseTo(json.predicted.iterationTimeS * model.time.lowRatio, 12);
    expect(json.predicted.interval.highS).toBeCloseTo(json.predicted.iterationTimeS * model.time.highRatio, 12);
    expect(json.predicted.interval.level).toBe(0.9);
    expect(json.mayNotFit).toBe(false);
    for (const b of json.baselines) {
      if (b.iterationTimeS !== null) expect(b.interval.highS).toBeCloseTo(b.iterationTimeS * model.time.highRatio, 12);
    }
    const text = (await run('plan', oneSite, '--time-limit', '10')).out;
    const { iterationTimeS, interval } = json.predicted;
    expect(text).toContain(`Iteration time   ${seconds(iterationTimeS)} s (${seconds(interval.lowS)}-${seconds(interval.highS)}, 90%)`);
  });
});

describe('an attention-heavy job (64K context) everywhere an interval is printed', () => {
  const rows = JSON.parse(fs.readFileSync(fixturePath('calibration/nemo-long-context.json'), 'utf8')) as { id: string; scenario: unknown; plan: Record<string, unknown> }[];
  const row = rows.find((r) => r.id === 'fp8-nemo-long-llama2-7b-64k')!;
  const scenarioFile = path.join(tmp, 'heavy.json');
  const planFile = path.join(tmp, 'heavy.plan.json');
  const otherPlanFile = path.join(tmp, 'heavy-other.plan.json');
  fs.writeFileSync(scenarioFile, JSON.stringify(row.scenario));
  fs.writeFileSync(planFile, JSON.stringify(row.plan));
  // Another plan of the same job on the same 64 GPUs: TP 8, CP 2, DP 4 in place of TP 4, CP 2, DP 8.
  fs.writeFileSync(otherPlanFile, JSON.stringify({ ...row.plan, tp: 8, cp: 2, dp: 4 }));
  const light = builtInIntervalModel().time;
  const heavy = builtInIntervalModel().attentionHeavy!.time;
  const isHeavy = (timeS: number, interval: { lowS: number; highS: number }) => {
    expect(interval.lowS).toBeCloseTo(timeS * heavy.lowRatio, 9);
    expect(interval.highS).toBeCloseTo(timeS * heavy.highRatio, 9);
    expect(interval.highS).not.toBeCloseTo(timeS * light.highRatio, 3);
  };

  it('plan --json: the plan, its baselines and a given baseline plan all take the heavy class; two plans of the job the same ratios', async () => {
    const result = await run('plan', scenarioFile, '--json', '--quiet', '--time-limit', '5', '--baseline-plan', otherPlanFile);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out);
    isHeavy(json.predicted.iterationTimeS, json.predicted.interval);
    const baselines = json.baselines.filter((b: { iterationTimeS: number | null }) => b.iterationTimeS !== null);
    expect(baselines.length).toBeGreaterThan(0);
    for (const b of baselines) isHeavy(b.iterationTimeS, b.interval);
    expect(json.baselinePlan.fits).toBe(true);
    isHeavy(json.baselinePlan.iterationTimeS, json.baselinePlan.interval);
    // The class is the job's: a different plan of it (another time) has the same ratios.
    expect(json.baselinePlan.iterationTimeS).not.toBeCloseTo(json.predicted.iterationTimeS, 3);
    const text = (await run('plan', scenarioFile, '--quiet', '--time-limit', '5')).out;
    expect(text).toContain('Interval         wide: the attention core is 57%');
  });

  it('report and batch: the report says why, the NDJSON records name the residuals', async () => {
    const html = path.join(tmp, 'heavy.html');
    expect((await run('report', scenarioFile, '--plan', planFile, '--html', html)).code).toBe(0);
    expect(fs.readFileSync(html, 'utf8')).toContain('wide: the attention core is 57% of this job');
    const out = path.join(tmp, 'heavy.ndjson');
    expect((await run('batch', scenarioFile, '--out', out, '--workers', '1', '--time-limit', '5', '--quiet', '--no-charts')).code).toBe(0);
    const record = JSON.parse(fs.readFileSync(out, 'utf8').trim().split('\n')[0]!);
    expect(record.intervalBasis).toBe(builtInIntervalModel().attentionHeavy!.basis);
    expect(record.iterationTimeHighS).toBeCloseTo(record.iterationTimeS * heavy.highRatio, 12);
  });
});

describe('batch', () => {
  it('records carry the interval and the flag (NDJSON and CSV), from the profile when one is given', async () => {
    const out = path.join(tmp, 'results.ndjson');
    const csv = path.join(tmp, 'results.csv');
    const result = await run('batch', oneSite, '--out', out, '--csv', csv, '--workers', '1', '--time-limit', '5', '--quiet', '--no-charts');
    expect(result.code).toBe(0);
    const record = JSON.parse(fs.readFileSync(out, 'utf8').trim().split('\n')[0]!);
    const model = builtInIntervalModel();
    expect(record.iterationTimeLowS).toBeCloseTo(record.iterationTimeS * model.time.lowRatio, 12);
    expect(record.iterationTimeHighS).toBeCloseTo(record.iterationTimeS * model.time.highRatio, 12);
    expect(record.intervalLevel).toBe(0.9);
    expect(record.mayNotFit).toBe(false);
    const [header, row] = fs.readFileSync(csv, 'utf8').trim().split('\r\n').map((line) => line.split(','));
    expect(Number(row![header!.indexOf('iterationTimeHighS')])).toBeCloseTo(record.iterationTimeHighS, 9);
    expect(row![header!.indexOf('mayNotFit')]).toBe('false');
    expect(result.out).toMatch(/\d\.\d{4}-\d\.\d{4}, 90%/);

    const wide = profileFile('batch-wide.json', [0.09, -0.06, 0.03, -0.12, 0.06]);
    const out2 = path.join(tmp, 'results-profile.ndjson');
    expect((await run('batch', oneSite, '--out', out2, '--workers', '1', '--time-limit', '5', '--quiet', '--no-charts', '--calibration', wide)).code).toBe(0);
    const withProfile = JSON.parse(fs.readFileSync(out2, 'utf8').trim().split('\n')[0]!);
    const profileModel = profileIntervalModel(JSON.parse(fs.readFileSync(wide, 'utf8')));
    expect(withProfile.iterationTimeHighS).toBeCloseTo(withProfile.iterationTimeS * profileModel.time.highRatio, 12);
    expect(profileModel.time.highRatio).not.toBeCloseTo(model.time.highRatio, 3);
  });
});
