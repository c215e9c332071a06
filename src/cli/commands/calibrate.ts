/** `scaleacross calibrate <runs.json> --out profile.json [--json]`: fits the cost model's factors to measured runs. */
import * as path from 'path';
import { profileIntervalModel } from '../../calibration/apply-profile';
import { ATTENTION_HEAVY_SHARE, type IntervalModel, type IntervalRatios } from '../../model/prediction-interval';
import { buildUserRuns } from '../../calibration/user-runs';
import { calibrateToRuns, MIN_RUNS, USER_FACTORS, type UserCalibration } from '../../calibration/user-fit';
import { writeTextFile } from '../../io/files';
import { readCalibrationRuns } from '../../io/calibration-files';
import type { CalibrationProfile } from '../../model/calibration-profile-schema';
import { ScenarioValidationError } from '../../model/validation-error';
import { EXIT, UsageError, type Output } from '../exit-codes';

export interface CalibrateArgs {
  readonly runs: string;
  readonly out: string;
  readonly json: boolean;
  /** Weight of the prior (default 1). */
  readonly priorWeight?: number;
  /** Fit only these factors. */
  readonly factors?: readonly string[];
}

export function runCalibrate(args: CalibrateArgs, output: Output): number {
  const known = USER_FACTORS.map((p) => p.key as string);
  const unknown = (args.factors ?? []).filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new UsageError(`--factors: unknown factor${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')} (known: ${known.join(', ')})`);
  const file = readCalibrationRuns(args.runs);
  const { runs, links } = buildUserRuns(file.entries, args.runs, file.issues);
  if (runs.length < MIN_RUNS && !(runs.length === 0 && links.length > 0)) {
    const message = runs.length === 0
      ? 'no measured runs and no link measurements: nothing to fit'
      : `${runs.length} measured run${runs.length === 1 ? '' : 's'}: calibrate needs at least ${MIN_RUNS} to fit the compute factors and check each by leaving it out (link measurements alone may be given without runs)`;
    throw new ScenarioValidationError([{ path: '', message }], args.runs);
  }
  const fit = calibrateToRuns(runs, links, { priorWeight: args.priorWeight, factors: args.factors });
  const unidentified = (args.factors ?? []).filter((name) => !fit.profile.factors[name]!.identified);
  if (unidentified.length > 0) {
    throw new ScenarioValidationError([{ path: '', message: `too few runs to fit what was asked: no run${links.length > 0 ? ' or link measurement' : ''} is sensitive to ${unidentified.join(', ')} (a 10% change moves no prediction by 0.1%); add runs that exercise ${unidentified.length > 1 ? 'them' : 'it'} or leave ${unidentified.length > 1 ? 'them' : 'it'} out of --factors` }], args.runs);
  }
  if (!Object.values(fit.profile.factors).some((f) => f.identified)) {
    throw new ScenarioValidationError([{ path: '', message: 'the runs are not sensitive to any factor (every prediction stays the same when a factor moves 10%): nothing can be fitted' }], args.runs);
  }
  const outDir = path.dirname(path.resolve(args.out));
  const profile: CalibrationProfile = {
    $schema: 'https://scaleacross.dev/schemas/calibration-profile.schema.json',
    ...fit.profile,
    created: new Date().toISOString(),
    runsFile: path.relative(outDir, path.resolve(args.runs)).split(path.sep).join('/'),
  };
  writeTextFile(args.out, `${JSON.stringify(profile, null, 2)}\n`);
  if (args.json) output.out(JSON.stringify({ out: args.out, ...profile }, null, 2));
  else output.out(formatCalibration(fit, args.out));
  return EXIT.ok;
}

const pct = (x: number | null): string => (x === null ? '-' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`);
const num = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(1) : Math.abs(x) >= 1 ? x.toFixed(3) : x.toPrecision(3));

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

/** What predictions under the profile carry: "Prediction interval (90%): iteration time x 0.934 to x 1.071 (...)". */
function intervalLine(model: IntervalModel): string {
  const ratios = (r: IntervalRatios) => `x ${r.lowRatio.toFixed(3)} to x ${r.highRatio.toFixed(3)} (${r.method === 'fixed-allowance' ? 'fixed allowance, no measured memory' : `${r.method}, ${r.n} residuals`})`;
  const time = model.attentionHeavy
    ? `iteration time ${ratios(model.time)} for jobs whose attention core is under ${Math.round(100 * ATTENTION_HEAVY_SHARE)}% of their model FLOPs, ${ratios(model.attentionHeavy.time)} for the others (from the ${model.attentionHeavy.basis})`
    : `iteration time ${ratios(model.time)}`;
  return `Prediction interval (${Math.round(100 * model.time.level)}%) under this profile: ${time}; memory ${ratios(model.memory)}; from the ${model.basis}.`;
}

export function formatCalibration(fit: UserCalibration, out: string): string {
  const { profile } = fit;
  const lines = [`Calibration profile written to ${out}: ${profile.fit.runs} run(s), ${profile.fit.links} link measurement(s)`, ''];
  if (profile.runs.length > 0) {
    const memory = profile.runs.some((r) => r.memoryGiBPerGpu);
    lines.push(...table(['run', 'metric', 'measured', 'before', 'after', 'left out', ...(memory ? ['memory'] : [])], profile.runs.map((r) => [
      r.source, r.metric, num(r.measured), pct(r.errorBefore), pct(r.errorAfter), pct(r.leaveOneOutError), ...(memory ? [r.memoryGiBPerGpu ? pct(r.memoryGiBPerGpu.error) : '-'] : []),
    ])));
    const abs = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null).map(Math.abs);
    const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = Math.floor(s.length / 2); return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; };
    const before = abs(profile.runs.map((r) => r.errorBefore));
    const after = abs(profile.runs.map((r) => r.errorAfter));
    const loo = abs(profile.runs.map((r) => r.leaveOneOutError));
    if (memory) lines.push('memory: error of the predicted peak memory per GPU (reported, not fitted: no factor moves it)');
    lines.push(`median |error|: before ${pct(med(before)).slice(1)}, after ${pct(med(after)).slice(1)}${loo.length ? `, left out ${pct(med(loo)).slice(1)}` : ''}`);
    for (const r of profile.runs) {
      if (!r.fits) lines.push(`note: ${r.source}: the plan ran but does not fit the memory model (compared all the same)`);
    }
    lines.push('');
  }
  if (profile.links.length > 0) {
    lines.push(...table(['link measurement', 'factor', 'nominal GB/s', 'measured GB/s', 'efficiency'], profile.links.map((l) => [
      l.source, l.factor, num(l.nominalGBps), num(l.busBandwidthGBps), l.measuredEfficiency.toFixed(3),
    ])));
    for (const l of profile.links) if (l.messageBytes < 64 * 2 ** 20) lines.push(`note: ${l.source}: ${l.messageBytes}-byte messages are latency-bound; the factor then absorbs latency (measure with 64 MiB or more)`);
    lines.push('');
  }
  const factorRows = Object.entries(profile.factors).map(([name, f]) => [
    name, num(f.prior), f.identified ? num(f.value) : '-', f.identified ? pct(f.value / f.prior - 1) : '',
    f.uncertainty === null ? '' : `±${num(f.uncertainty)}`, f.leaveOneOutSpread === null ? '' : `${(100 * f.leaveOneOutSpread).toFixed(1)}%`,
    f.identified ? 'fitted' : 'not identified',
  ]);
  lines.push(...table(['factor', 'prior', 'fitted', 'change', '±1 sd', 'LOO spread', ''], factorRows));
  lines.push('', `Residual spread assumed: ${(100 * profile.fit.residualSigma).toFixed(1)}% per run. One set of factors for the whole cluster. Apply with --calibration ${out}.`);
  lines.push(intervalLine(profileIntervalModel(profile)));
  return lines.join('\n');
}
