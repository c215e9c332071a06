/**
 * `scaleacross calibrate` and `--calibration`: the fit recovers a constant the synthetic runs were
 * made with, refuses bad runs with the JSON path, and a profile moves `evaluate`'s prediction.
 */
import Ajv2020 from 'ajv/dist/2020';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { withFactors } from '../src/calibration/user-fit';
import { run } from './helpers/run-cli';
import { readJsonFile } from '../src/io/files';
import { calibrationProfileSchema } from '../src/model/calibration-profile-schema';
import { CALIBRATION } from '../src/model/calibration-constants';
import { evaluate } from '../src/model/evaluate';
import { parseScenario } from '../src/model/scenario';
import { jsonSchemas } from '../src/model/json-schemas';
import { fixturePath } from './helpers/fixtures';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-calibrate-'));
const rel = (file: string): string => path.relative(tmp, file);

/** Small jobs from fixtures/: one site, two sites, MoE, three heterogeneous sites, Llama 3 8B on 256 GPUs. */
const JOBS = [
  { scenario: 'small/one-site.json', plan: 'calibration-runs/plans/one-site.plan.json', metric: 'iterationTimeS' },
  { scenario: 'small/two-sites.json', plan: 'calibration-runs/plans/two-sites.plan.json', metric: 'tokensPerSecondPerGpu' },
  { scenario: 'small/moe-two-sites.json', plan: 'calibration-runs/plans/moe-two-sites.plan.json', metric: 'iterationTimeS' },
  { scenario: 'small/three-heterogeneous.json', plan: 'calibration-runs/plans/three-heterogeneous.plan.json', metric: 'mfu' },
  { scenario: 'llama3-8b-one-site.json', plan: 'plans/llama3-8b-one-site.plan.json', metric: 'iterationTimeS' },
] as const;

const TRUE_MATMUL = 0.65;

/** Runs "measured" on a synthetic cluster: the model itself with matmulPeakEfficiency 0.65 instead of the committed value. */
function syntheticRuns(jobs: readonly (typeof JOBS)[number][]): unknown[] {
  return withFactors({ matmulPeakEfficiency: TRUE_MATMUL }, () => jobs.map((job) => {
    const scenario = parseScenario(readJsonFile(fixturePath(job.scenario)));
    const predicted = evaluate(scenario, readJsonFile(fixturePath(job.plan))).predicted;
    return { scenario: rel(fixturePath(job.scenario)), plan: rel(fixturePath(job.plan)), measured: { [job.metric]: predicted[job.metric] } };
  }));
}

const writeRuns = (name: string, runs: unknown): string => {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, typeof runs === 'string' ? runs : JSON.stringify(runs, null, 2));
  return file;
};

const median = (xs: number[]): number => {
  const s = [...xs].map(Math.abs).sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface ProfileJson {
  factors: Record<string, { value: number; prior: number; identified: boolean; uncertainty: number | null }>;
  runs: { errorBefore: number; errorAfter: number; leaveOneOutError: number | null }[];
}

describe('scaleacross calibrate on synthetic runs', () => {
  const runsFile = writeRuns('synthetic.json', syntheticRuns(JOBS));
  const profileFile = path.join(tmp, 'profile.json');
  let profile: ProfileJson;
  let text: string;

  beforeAll(async () => {
    const result = await run('calibrate', runsFile, '--out', profileFile, '--json');
    expect(result).toMatchObject({ code: 0, err: '' });
    profile = JSON.parse(result.out) as ProfileJson;
    text = (await run('calibrate', runsFile, '--out', path.join(tmp, 'profile-text.json'))).out;
  });

  it('moves matmulPeakEfficiency from its prior towards the true 0.65, inside its range, with an uncertainty', () => {
    const factor = profile.factors['matmulPeakEfficiency']!;
    expect(factor.prior).toBe(CALIBRATION.matmulPeakEfficiency);
    expect(factor.identified).toBe(true);
    // The prior (weight 1) holds part of the way back, and correlated factors (attention, memory-bound
    // kernels) take a share of the slowdown: at least 40% of the distance is recovered.
    expect(factor.value).toBeLessThan(factor.prior - 0.4 * (factor.prior - TRUE_MATMUL));
    expect(factor.value).toBeGreaterThanOrEqual(0.4);
    expect(factor.uncertainty).toBeGreaterThan(0);
    for (const f of Object.values(profile.factors)) if (!f.identified) expect(f.value).toBe(f.prior);
  });

  it('cuts the errors, before, after and left out', () => {
    const before = median(profile.runs.map((r) => r.errorBefore));
    const after = median(profile.runs.map((r) => r.errorAfter));
    const loo = median(profile.runs.map((r) => r.leaveOneOutError!));
    expect(before).toBeGreaterThan(0.03);
    expect(after).toBeLessThan(before / 2);
    expect(loo).toBeLessThan(before);
  });

  it('recovers 0.65 within 0.005 when asked for that factor alone with a weak prior (--factors, --prior-weight 0.05)', async () => {
    const result = await run('calibrate', runsFile, '--out', path.join(tmp, 'weak.json'), '--json', '--prior-weight', '0.05', '--factors', 'matmulPeakEfficiency');
    expect(result.code).toBe(0);
    const weak = JSON.parse(result.out) as ProfileJson;
    expect(Math.abs(weak.factors['matmulPeakEfficiency']!.value - TRUE_MATMUL)).toBeLessThan(0.005);
    expect(Object.entries(weak.factors).filter(([, f]) => f.identified).map(([name]) => name)).toEqual(['matmulPeakEfficiency']);
    expect(median(weak.runs.map((r) => r.errorAfter))).toBeLessThan(0.005);
  });

  it('all factors with a weak prior: errors after the fit below 1%', async () => {
    const result = await run('calibrate', runsFile, '--out', path.join(tmp, 'weak-all.json'), '--json', '--prior-weight', '0.05');
    expect(result.code).toBe(0);
    const weak = JSON.parse(result.out) as ProfileJson;
    expect(median(weak.runs.map((r) => r.errorAfter))).toBeLessThan(0.01);
    expect(Math.abs(weak.factors['matmulPeakEfficiency']!.value - TRUE_MATMUL)).toBeLessThan(Math.abs(profile.factors['matmulPeakEfficiency']!.value - TRUE_MATMUL));
  });

  it('a factor asked for that no run is sensitive to: exit 2 with the reason', async () => {
    const result = await run('calibrate', runsFile, '--out', path.join(tmp, 'never.json'), '--factors', 'fp8MatmulPeakEfficiency');
    expect(result.code).toBe(2);
    expect(result.err.trim()).toBe(`${runsFile}: too few runs to fit what was asked: no run is sensitive to fp8MatmulPeakEfficiency (a 10% change moves no prediction by 0.1%); add runs that exercise it or leave it out of --factors`);
  });

  it('reads the same runs as NDJSON and as { runs: [...] } with the same result', async () => {
    const runs = JSON.parse(fs.readFileSync(runsFile, 'utf8')) as unknown[];
    const ndjson = writeRuns('synthetic.ndjson', `${runs.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const wrapped = writeRuns('synthetic-wrapped.json', { note: 'synthetic', runs });
    for (const file of [ndjson, wrapped]) {
      const result = await run('calibrate', file, '--out', path.join(tmp, 'again.json'), '--json');
      expect(result.code).toBe(0);
      expect((JSON.parse(result.out) as ProfileJson).factors).toEqual(profile.factors);
    }
  });

  it('prints a table per run and per factor, and says which factors were not identified', () => {
    expect(text).toContain('before');
    expect(text).toContain('left out');
    expect(text).toMatch(/matmulPeakEfficiency\s+0\.720\s+0\.6\d\d/);
    // One set of runs in bf16 only: the fp8 GEMM efficiency cannot be identified.
    expect(text).toMatch(/fp8MatmulPeakEfficiency.*not identified/);
  });

  it('writes a profile that the zod schema and the generated JSON Schema accept', () => {
    const written = JSON.parse(fs.readFileSync(profileFile, 'utf8'));
    expect(calibrationProfileSchema.safeParse(written).success).toBe(true);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(jsonSchemas()['calibration-profile.schema.json']!);
    expect({ ok: validate(written), errors: validate.errors ?? null }).toEqual({ ok: true, errors: null });
    expect(written).toMatchObject({ version: 1, kind: 'scaleacross-calibration' });
  });

  it('a profile slows evaluate by about the factor it moved, and the output names it', async () => {
    const scenario = fixturePath('llama3-8b-one-site.json');
    const plan = fixturePath('plans/llama3-8b-one-site.plan.json');
    const plain = JSON.parse((await run('evaluate', scenario, '--plan', plan, '--json')).out);
    const calibrated = JSON.parse((await run('evaluate', scenario, '--plan', plan, '--json', '--calibration', profileFile)).out);
    expect(plain.calibration).toBeUndefined();
    expect(calibrated.calibration).toMatchObject({ profile: profileFile, from: 'option' });
    // Slower GEMMs: a longer iteration, closer to what the synthetic cluster "measured".
    expect(calibrated.predicted.iterationTimeS).toBeGreaterThan(plain.predicted.iterationTimeS * 1.02);
    const truth = withFactors({ matmulPeakEfficiency: TRUE_MATMUL }, () => evaluate(parseScenario(readJsonFile(scenario)), readJsonFile(plan)).predicted.iterationTimeS);
    expect(Math.abs(calibrated.predicted.iterationTimeS / truth - 1)).toBeLessThan(Math.abs(plain.predicted.iterationTimeS / truth - 1));
    const textOut = (await run('evaluate', scenario, '--plan', plan, '--calibration', profileFile)).out;
    expect(textOut).toContain(`Calibration: ${profileFile}`);
    expect(textOut).toContain('matmulPeakEfficiency');
    // The committed constants are restored after the command.
    expect(CALIBRATION.matmulPeakEfficiency).toBe(0.72);
  });

  it('plan, diagnose and report apply the profile and name it; plan\'s prediction is what evaluate gives its plan under the same profile', async () => {
    const scenario = fixturePath('small/one-site.json');
    const planned = await run('plan', scenario, '--json', '--time-limit', '2', '--quiet', '--calibration', profileFile);
    expect(planned.code).toBe(0);
    const result = JSON.parse(planned.out);
    expect(result.calibration).toMatchObject({ profile: profileFile, from: 'option' });
    const planFile = path.join(tmp, 'planned.json');
    fs.writeFileSync(planFile, JSON.stringify(result.plan));
    const evaluated = JSON.parse((await run('evaluate', scenario, '--plan', planFile, '--json', '--calibration', profileFile)).out);
    expect(evaluated.predicted.iterationTimeS).toBeCloseTo(result.predicted.iterationTimeS, 12);
    const plain = JSON.parse((await run('evaluate', scenario, '--plan', planFile, '--json')).out);
    expect(plain.predicted.iterationTimeS).toBeLessThan(result.predicted.iterationTimeS);
    expect((await run('plan', scenario, '--time-limit', '2', '--quiet', '--calibration', profileFile)).out).toContain(`Calibration: ${profileFile}`);
    expect((await run('diagnose', scenario, '--calibration', profileFile)).out).toContain(`Calibration: ${profileFile}`);
    const report = await run('report', scenario, '--plan', planFile, '--html', path.join(tmp, 'r.html'), '--calibration', profileFile);
    expect(report.out).toContain(`Calibration: ${profileFile}`);
    expect(fs.readFileSync(path.join(tmp, 'r.html'), 'utf8')).toContain(`<p class="calibration">Calibration: ${profileFile}`);
  });

  it('batch passes the profile to its worker threads: the same time as plan under the profile, the record names it, and a resume with other constants is refused', async () => {
    const scenario = fixturePath('small/one-site.json');
    const out = path.join(tmp, 'batch.ndjson');
    const batch = await run('batch', scenario, '--out', out, '--workers', '1', '--time-limit', '2', '--quiet', '--no-charts', '--calibration', profileFile);
    expect(batch.code).toBe(0);
    const record = JSON.parse(fs.readFileSync(out, 'utf8').trim());
    expect(record.calibration).toContain(profileFile);
    const planned = JSON.parse((await run('plan', scenario, '--json', '--time-limit', '2', '--quiet', '--calibration', profileFile)).out);
    expect(record.iterationTimeS).toBeCloseTo(planned.predicted.iterationTimeS, 9);
    const resumed = await run('batch', scenario, '--out', out, '--workers', '1', '--time-limit', '2', '--quiet', '--no-charts', '--resume');
    expect(resumed.code).toBe(2);
    expect(resumed.err).toContain('holds results computed with calibration');
  });

  it('a scenario may name the profile (relative to the scenario file); --calibration overrides it', async () => {
    const spec = readJsonFile(fixturePath('llama3-8b-one-site.json')) as Record<string, unknown>;
    const scenarioFile = path.join(tmp, 'with-profile.json');
    fs.writeFileSync(scenarioFile, JSON.stringify({ ...spec, $schema: undefined, calibration: 'profile.json' }));
    const plan = fixturePath('plans/llama3-8b-one-site.plan.json');
    const viaField = JSON.parse((await run('evaluate', scenarioFile, '--plan', plan, '--json')).out);
    const viaOption = JSON.parse((await run('evaluate', fixturePath('llama3-8b-one-site.json'), '--plan', plan, '--json', '--calibration', profileFile)).out);
    expect(viaField.calibration.from).toBe('scenario');
    expect(path.resolve(viaField.calibration.profile)).toBe(profileFile);
    expect(viaField.predicted.iterationTimeS).toBe(viaOption.predicted.iterationTimeS);
    const other = path.join(tmp, 'other-profile.json');
    expect((await run('calibrate', runsFile, '--out', other, '--factors', 'matmulPeakEfficiency', '--prior-weight', '0.05')).code).toBe(0);
    const overridden = JSON.parse((await run('evaluate', scenarioFile, '--plan', plan, '--json', '--calibration', other)).out);
    expect(overridden.calibration).toMatchObject({ profile: other, from: 'option' });
    expect(overridden.predicted.iterationTimeS).not.toBe(viaField.predicted.iterationTimeS);
    expect((await run('validate', scenarioFile)).out).toContain('Calibration profile: ');
    // A missing profile is an input error naming the scenario's field.
    const missing = path.join(tmp, 'missing-profile.json');
    fs.writeFileSync(missing, JSON.stringify({ ...spec, $schema: undefined, calibration: 'nope.json' }));
    const refused = await run('evaluate', missing, '--plan', plan);
    expect(refused.code).toBe(2);
    expect(refused.err.trim()).toBe(`${missing}: calibration: nope.json: no such file`);
  });
});

describe('scaleacross calibrate refuses what it cannot fit', () => {
  const runs = syntheticRuns(JOBS.slice(0, 3)) as { measured: Record<string, unknown> }[];

  it('too few runs: exit 2 with the reason', async () => {
    const file = writeRuns('two.json', runs.slice(0, 2));
    const result = await run('calibrate', file, '--out', path.join(tmp, 'never.json'));
    expect(result.code).toBe(2);
    expect(result.err.trim().split('\n')).toEqual([`${file}: 2 measured runs: calibrate needs at least 3 to fit the compute factors and check each by leaving it out (link measurements alone may be given without runs)`]);
    expect(fs.existsSync(path.join(tmp, 'never.json'))).toBe(false);
  });

  it.each([
    ['zero', 0, 'must be a finite positive number, got 0'],
    ['negative', -1.5, 'must be a finite positive number, got -1.5'],
    ['NaN (written as null by JSON)', null, 'must be a number, got null'],
    ['a string', 'fast', 'must be a number, got "fast"'],
  ])('%s as a measured figure: exit 2, one line naming the JSON path', async (_, value, message) => {
    const bad = runs.map((r, i) => (i === 1 ? { ...r, measured: { iterationTimeS: value } } : r));
    const file = writeRuns('bad-figure.json', bad);
    const result = await run('calibrate', file, '--out', path.join(tmp, 'never.json'));
    expect(result.code).toBe(2);
    expect(result.err.trim()).toBe(`${file}: runs[1].measured.iterationTimeS: ${message}`);
  });

  it('NaN in NDJSON is malformed JSON, named by line', async () => {
    const ndjson = runs.map((r) => JSON.stringify(r)).join('\n').replace(/"(iterationTimeS|tokensPerSecondPerGpu)":[0-9.e-]+/, '"$1":NaN');
    const file = writeRuns('nan.ndjson', ndjson);
    const result = await run('calibrate', file, '--out', path.join(tmp, 'never.json'));
    expect(result.code).toBe(2);
    expect(result.err.trim()).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 1: malformed JSON at line 1, column \\d+`));
  });

  it('two speed figures, an unknown site, a plan that does not fit the scenario: exit 2, each named', async () => {
    const twoFigures = { ...runs[0]!, measured: { iterationTimeS: 1, mfu: 0.4 } };
    const badPlan = { ...runs[1]!, plan: { tp: 3, pp: 1, dp: 1, microBatchSeqs: 1 } };
    const link = { link: ['dc', 'elsewhere'], measured: { busBandwidthGBps: 40, messageBytes: 268435456 } };
    const file = writeRuns('bad-mixed.json', [twoFigures, badPlan, runs[2], link]);
    const result = await run('calibrate', file, '--out', path.join(tmp, 'never.json'));
    expect(result.code).toBe(2);
    const lines = result.err.trim().split('\n');
    expect(lines[0]).toBe(`${file}: runs[0].measured: gives iterationTimeS and mfu: give exactly one of iterationTimeS, tokensPerSecondPerGpu, mfu`);
    expect(lines.some((l) => l.startsWith(`${file}: runs[1].plan.tp`))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain('undefined');
      expect(line).not.toMatch(/^\s+at /);
    }
  });

  it('a link between a site and one the scenarios do not have: exit 2 naming runs[i].link', async () => {
    const link = { link: ['dc', 'elsewhere'], measured: { busBandwidthGBps: 40, messageBytes: 268435456 } };
    const file = writeRuns('bad-link.json', [...syntheticRuns(JOBS.slice(0, 3)), link]);
    const result = await run('calibrate', file, '--out', path.join(tmp, 'never.json'));
    expect(result.code).toBe(2);
    expect(result.err.trim()).toMatch(new RegExp(`: runs\\[3\\]\\.link: no run's scenario has both sites 'dc' and 'elsewhere'`));
  });
});

describe('fixtures/calibration-runs/example-runs.json', () => {
  const exampleProfile = path.join(tmp, 'example-profile.json');

  it('is valid against the runs schema and calibrates: the link measurement sets the scale-out efficiency towards 0.75', async () => {
    const runsFile = fixturePath('calibration-runs/example-runs.json');
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(jsonSchemas()['calibration-runs.schema.json']!);
    expect(validate(readJsonFile(runsFile))).toBe(true);
    const result = await run('calibrate', runsFile, '--out', exampleProfile, '--json');
    expect(result.code).toBe(0);
    const profile = JSON.parse(result.out) as ProfileJson & { links: { measuredEfficiency: number }[] };
    expect(profile.links[0]!.measuredEfficiency).toBeCloseTo(0.75, 3);
    const scaleOut = profile.factors['scaleOutBusEfficiency']!;
    expect(scaleOut.value).toBeLessThan(scaleOut.prior);
    expect(scaleOut.value).toBeGreaterThanOrEqual(0.75);
  });

  it('a profile with a factor outside its range is refused by evaluate (exit 2, path named)', async () => {
    const good = JSON.parse(fs.readFileSync(exampleProfile, 'utf8'));
    good.factors.matmulPeakEfficiency.value = 1.5;
    const file = path.join(tmp, 'out-of-range.json');
    fs.writeFileSync(file, JSON.stringify(good));
    const result = await run('evaluate', fixturePath('llama3-8b-one-site.json'), '--plan', fixturePath('plans/llama3-8b-one-site.plan.json'), '--calibration', file);
    expect(result.code).toBe(2);
    expect(result.err.trim()).toBe(`${file}: factors.matmulPeakEfficiency.value: must be within its range [0.4, 0.95], got 1.5`);
  });
});
