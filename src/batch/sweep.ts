/**
 * Expands a sweep (a base scenario plus spec paths to vary) into scenarios: the cartesian
 * product of `axes` (first axis varying slowest) or the explicit `points`. Pure: the base
 * scenario comes in already read. A path that does not fit the base scenario, or names a key
 * the scenario spec does not have, is a {@link ScenarioValidationError} naming the sweep file
 * and the axis (for `points`, a point with such a path is returned with its error instead, and
 * the other points are expanded); a generated scenario that is invalid for other reasons is
 * not an error here (the batch records it as `invalid`).
 */
import { scenarioSchema } from '../model/scenario-schema';
import { sweepSchema, type SweepSpec } from '../model/sweep-schema';
import { ScenarioValidationError, formatIssuesOneLine, formatPath, issuesFromZod, type InputIssue } from '../model/validation-error';
import { formatSegments, parseSpecPath, setAtPath, type PathSegment } from './spec-path';

/** One axis value of a generated scenario. */
export interface AxisValue {
  readonly path: string;
  /** Position of the value in the axis list (axes) or of the point (points). */
  readonly index: number;
  /** Numbers, strings and booleans as given; an object is shown by its `name`, else `#index`. */
  readonly label: string | number | boolean;
}

export interface GeneratedScenario {
  readonly spec: unknown;
  /** 0-based position of the point in the expansion. */
  readonly pointIndex: number;
  readonly point: readonly AxisValue[];
  /** Why the point could not be generated (a path that does not fit the base scenario; `points` only): `spec` is null then. */
  readonly invalid?: string;
}

export interface ExpandedSweep {
  readonly name: string;
  /** Axis paths in declaration order (for points: every path set by any point, first-seen order). */
  readonly axes: readonly string[];
  readonly scenarios: readonly GeneratedScenario[];
}

/** Upper limit on the scenarios one sweep may generate (a guard against a typo like 10^9 points). */
export const MAX_SWEEP_POINTS = 1_000_000;

/** Validates a parsed sweep file. */
export function parseSweep(input: unknown, source: string): SweepSpec {
  const parsed = sweepSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new ScenarioValidationError(issuesFromZod(parsed.error), source);
  const sweep = parsed.data;
  if ((sweep.axes === undefined) === (sweep.points === undefined)) {
    throw new ScenarioValidationError([{ path: '', message: 'a sweep needs exactly one of "axes" (cartesian product) or "points" (explicit list)' }], source);
  }
  if (sweep.axes && Object.keys(sweep.axes).length === 0) {
    throw new ScenarioValidationError([{ path: 'axes', message: 'needs at least one axis' }], source);
  }
  return sweep;
}

export function labelOf(value: unknown, index: number): string | number | boolean {
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { name?: unknown }).name === 'string') {
    return (value as { name: string }).name;
  }
  return `#${index}`;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * Expands a validated sweep over its base scenario (`base` is the parsed base JSON; `baseSource`
 * names it in messages).
 */
export function expandSweep(sweep: SweepSpec, base: unknown, source: string, baseSource: string): ExpandedSweep {
  if (base === null || typeof base !== 'object' || Array.isArray(base)) {
    throw new ScenarioValidationError([{ path: '', message: 'the base scenario must be a JSON object' }], baseSource);
  }
  const issues: InputIssue[] = [];
  const parsedPaths = new Map<string, PathSegment[]>();
  const pathProblems = new Map<string, string>();
  const checkPath = (path: string, where: string, sample: unknown, into: InputIssue[]): void => {
    if (parsedPaths.has(path)) return;
    let message = pathProblems.get(path);
    if (message === undefined) {
      const segments = parseSpecPath(path);
      message = !segments ? `"${path}" is not a spec path (expected keys and [index], e.g. cluster.links[0].bandwidthGbps)` : checkAxisPath(base, segments, sample);
      if (message === undefined) {
        parsedPaths.set(path, segments!);
        return;
      }
      pathProblems.set(path, message);
    }
    into.push({ path: where, message });
  };
  // Per point (points only): the issues of each point; a point with any is not generated.
  const pointIssues: InputIssue[][] = [];
  if (sweep.axes) {
    for (const [path, values] of Object.entries(sweep.axes)) checkPath(path, `axes[${JSON.stringify(path)}]`, values[0], issues);
  } else {
    sweep.points!.forEach((point, i) => {
      const mine: InputIssue[] = [];
      if (Object.keys(point).length === 0) mine.push({ path: `points[${i}]`, message: 'sets no path' });
      for (const [path, value] of Object.entries(point)) checkPath(path, `points[${i}][${JSON.stringify(path)}]`, value, mine);
      pointIssues.push(mine);
    });
  }
  if (issues.length > 0) throw new ScenarioValidationError(issues, source);

  const make = (assignments: readonly { path: string; value: unknown; index: number }[], pointIndex: number): GeneratedScenario => {
    const spec = clone(base);
    for (const a of assignments) setAtPath(spec, parsedPaths.get(a.path)!, clone(a.value));
    return { spec, pointIndex, point: assignments.map((a) => ({ path: a.path, index: a.index, label: labelOf(a.value, a.index) })) };
  };

  if (sweep.points) {
    const axes = [...new Set(sweep.points.flatMap((p) => Object.keys(p)))];
    const scenarios = sweep.points.map((point, i): GeneratedScenario => {
      const assignments = Object.entries(point).map(([path, value]) => ({ path, value, index: i }));
      if (pointIssues[i]!.length === 0) return make(assignments, i);
      const labels = assignments.map((a) => ({ path: a.path, index: a.index, label: labelOf(a.value, a.index) }));
      return { spec: null, pointIndex: i, point: labels, invalid: formatIssuesOneLine(pointIssues[i]!) };
    });
    return { name: sweep.sweep, axes, scenarios };
  }
  const axes = Object.entries(sweep.axes!);
  const count = axes.reduce((n, [, values]) => n * values.length, 1);
  if (count > MAX_SWEEP_POINTS) {
    throw new ScenarioValidationError([{ path: 'axes', message: `generates ${count} scenarios, more than the limit of ${MAX_SWEEP_POINTS}` }], source);
  }
  const scenarios: GeneratedScenario[] = [];
  for (let n = 0; n < count; n++) {
    // Mixed-radix digits of n, last axis fastest.
    let rest = n;
    const indices = new Array<number>(axes.length);
    for (let a = axes.length - 1; a >= 0; a--) {
      const size = axes[a]![1].length;
      indices[a] = rest % size;
      rest = Math.floor(rest / size);
    }
    scenarios.push(make(axes.map(([path, values], a) => ({ path, value: values[indices[a]!], index: indices[a]! })), n));
  }
  return { name: sweep.sweep, axes: axes.map(([path]) => path), scenarios };
}

/**
 * Checks a path against the base scenario: containers exist, indices in range, and the last
 * key is one the scenario spec knows (setting `sample` there must not give an unknown-key issue).
 */
function checkAxisPath(base: unknown, segments: readonly PathSegment[], sample: unknown): string | undefined {
  const trial = clone(base);
  const message = setAtPath(trial, segments, clone(sample));
  if (message) return message;
  const last = segments[segments.length - 1];
  if (typeof last !== 'string') return undefined;
  const parentPath = formatSegments(segments.slice(0, -1));
  const parsed = scenarioSchema.safeParse(trial);
  if (parsed.success) return undefined;
  const unknown = parsed.error.issues.some((issue) => issue.code === 'unrecognized_keys' && formatPath(issue.path) === parentPath && issue.keys.includes(last));
  return unknown ? `"${last}" is not a key of ${parentPath === '' ? 'a scenario' : parentPath} in the scenario spec` : undefined;
}
