/**
 * Reads the files of `scaleacross calibrate`: the measured runs (a JSON array, `{ runs: [...] }`
 * or NDJSON), with their scenario and plan files resolved relative to the runs file, and
 * calibration profiles. Errors name the file and the JSON path (`runs[2].measured.iterationTimeS`).
 */
import * as fs from 'fs';
import * as path from 'path';
import {
  calibrationLinkSchema, calibrationProfileSchema, calibrationRunSchema, type CalibrationLinkSpec, type CalibrationProfile, type CalibrationRunSpec,
} from '../model/calibration-profile-schema';
import { ScenarioValidationError, issuesFromZod, type InputIssue } from '../model/validation-error';
import { parseJsonText, readJsonFile, readPlanFile } from './files';

/** A scenario or plan as found: its JSON and where it came from (a file, or the run inline). */
export interface ResolvedJson {
  readonly value: unknown;
  /** File it was read from; undefined when inline. */
  readonly file?: string;
}

export type RunsFileEntry =
  | { readonly kind: 'run'; readonly path: string; readonly spec: CalibrationRunSpec; readonly scenario: ResolvedJson; readonly plan: ResolvedJson }
  | { readonly kind: 'link'; readonly path: string; readonly spec: CalibrationLinkSpec; readonly scenario?: ResolvedJson };

/**
 * Reads a runs file. A file that cannot be read or parsed throws; problems with single entries
 * are returned (one per path) with the entries that passed, so that the caller can report them
 * together with its own checks of those entries.
 */
export function readCalibrationRuns(file: string): { entries: RunsFileEntry[]; issues: InputIssue[] } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScenarioValidationError([{ path: '', message: code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'unknown error'})` }], file);
  }
  const values = parseRunsText(text, file);
  const issues: InputIssue[] = [];
  const entries: RunsFileEntry[] = [];
  const base = path.dirname(file);
  const resolve = (ref: unknown, at: string, plan: boolean): ResolvedJson | undefined => {
    if (typeof ref !== 'string') return { value: ref };
    const target = path.resolve(base, ref);
    try {
      return { value: plan ? readPlanFile(target).plan : readJsonFile(target), file: path.relative(process.cwd(), target) || target };
    } catch (error) {
      if (!(error instanceof ScenarioValidationError)) throw error;
      issues.push(...error.issues.map((issue) => ({ path: at, message: `${ref}: ${issue.path === '' ? '' : `${issue.path}: `}${issue.message}` })));
      return undefined;
    }
  };
  values.forEach((value, i) => {
    const at = `runs[${i}]`;
    const isLink = value !== null && typeof value === 'object' && !Array.isArray(value) && 'link' in value;
    if (isLink) {
      const parsed = calibrationLinkSchema.safeParse(value, { reportInput: true });
      if (!parsed.success) { issues.push(...issuesFromZod(parsed.error, at)); return; }
      const scenario = parsed.data.scenario === undefined ? undefined : resolve(parsed.data.scenario, `${at}.scenario`, false);
      if (parsed.data.scenario !== undefined && !scenario) return;
      entries.push({ kind: 'link', path: at, spec: parsed.data, scenario });
      return;
    }
    const parsed = calibrationRunSchema.safeParse(value, { reportInput: true });
    if (!parsed.success) { issues.push(...issuesFromZod(parsed.error, at)); return; }
    const scenario = resolve(parsed.data.scenario, `${at}.scenario`, false);
    const plan = resolve(parsed.data.plan, `${at}.plan`, true);
    if (scenario && plan) entries.push({ kind: 'run', path: at, spec: parsed.data, scenario, plan });
  });
  return { entries, issues };
}

/** A JSON array, an object with a `runs` array, or NDJSON (one entry per non-empty line). */
function parseRunsText(text: string, file: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === '') throw new ScenarioValidationError([{ path: '', message: 'is empty: expected a JSON array of runs or NDJSON' }], file);
  if (trimmed.startsWith('[')) return parseJsonText(text, file) as unknown[];
  const lines = text.split('\n').map((line, i) => ({ line: line.trim(), number: i + 1 })).filter((l) => l.line !== '');
  if (lines.length === 1 || !lines.every((l) => l.line.startsWith('{') && l.line.endsWith('}'))) {
    const value = parseJsonText(text, file);
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'runs' in value) {
      const { runs, ...rest } = value as { runs: unknown };
      const unknownKeys = Object.keys(rest).filter((k) => k !== '$schema' && k !== 'note');
      if (unknownKeys.length > 0) throw new ScenarioValidationError([{ path: unknownKeys[0]!, message: `unknown key (expected runs, note, $schema)` }], file);
      if (!Array.isArray(runs)) throw new ScenarioValidationError([{ path: 'runs', message: 'must be an array of runs' }], file);
      return runs;
    }
    return [value];
  }
  return lines.map((l) => parseJsonText(l.line, `${file}: line ${l.number}`));
}

/** Reads and validates a calibration profile. */
export function readCalibrationProfile(file: string): CalibrationProfile {
  const parsed = calibrationProfileSchema.safeParse(readJsonFile(file), { reportInput: true });
  if (!parsed.success) throw new ScenarioValidationError(issuesFromZod(parsed.error), file);
  return parsed.data;
}
