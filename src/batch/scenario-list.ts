/**
 * The scenarios of a batch: scenario files and expanded sweeps in the order given, each with
 * its content id, deduplicated by id (the first source wins, later ones are listed in
 * `alsoFrom`), numbered by ordinal, and a batch key that identifies the whole list. An input
 * that cannot be a scenario (malformed JSON, an invalid sweep, a sweep whose base cannot be read
 * or whose axis paths do not fit it, a point of a sweep whose paths do not fit) is one entry
 * carrying its error (`invalid`), keyed by what was read, so that fixing it gives a new id.
 */
import type { SweepSpec } from '../model/sweep-schema';
import { canonicalJson, scenarioId, shortHash, solveKey } from '../model/canonical-json';
import { ScenarioValidationError, formatIssuesOneLine } from '../model/validation-error';
import { expandSweep } from './sweep';

/** What the batch was given, already read (src/io/batch-inputs.ts reads it). */
export type BatchInput =
  | { readonly kind: 'scenario'; readonly file: string; readonly spec: unknown }
  | { readonly kind: 'sweep'; readonly file: string; readonly sweep: SweepSpec; readonly base: unknown; readonly baseSource: string }
  /**
   * A file that could not be read as a scenario or a sweep: `error` is one line naming the file
   * and the JSON path; `fingerprint` is what was read (the text, or why nothing could be), the
   * content its id is derived from.
   */
  | { readonly kind: 'invalid'; readonly file: string; readonly error: string; readonly fingerprint: string };

/** Where a scenario came from: a file, or one point of a sweep with its axis values. */
export type ScenarioSource =
  | { readonly kind: 'file'; readonly file: string }
  | {
    readonly kind: 'sweep';
    readonly file: string;
    readonly sweep: string;
    readonly pointIndex: number;
    /** Axis path -> value (objects such as a model shown by name). */
    readonly axes: Readonly<Record<string, string | number | boolean>>;
  };

export interface BatchScenario {
  readonly id: string;
  readonly solveKey: string;
  /** 0-based position in the whole (unsharded) batch. */
  readonly ordinal: number;
  readonly spec: unknown;
  /** `name` of the spec when it is a string. */
  readonly name: string | null;
  readonly source: ScenarioSource;
  /** Other sources with the same content (solved once, reported under the first). */
  readonly alsoFrom: readonly ScenarioSource[];
  /** Set when the input could not even be made into a scenario (`spec` is null): its one-line error. */
  readonly invalid?: string;
}

export interface SweepInfo {
  readonly name: string;
  readonly file: string;
  readonly axes: readonly string[];
}

export interface ScenarioList {
  readonly scenarios: readonly BatchScenario[];
  /** Hash of the sorted ids: equal for every shard of the same batch. */
  readonly batchKey: string;
  readonly sweeps: readonly SweepInfo[];
}

export function buildScenarioList(inputs: readonly BatchInput[]): ScenarioList {
  const byId = new Map<string, { id: string; spec: unknown; source: ScenarioSource; alsoFrom: ScenarioSource[]; invalid?: string }>();
  const sweeps: SweepInfo[] = [];
  const add = (spec: unknown, source: ScenarioSource): void => {
    const id = scenarioId(spec);
    const existing = byId.get(id);
    if (existing) existing.alsoFrom.push(source);
    else byId.set(id, { id, spec, source, alsoFrom: [] });
  };
  /** An input that is no scenario: keyed by what was read (a different namespace from scenario ids: never equal to one). */
  const addInvalid = (fingerprint: string, error: string, source: ScenarioSource): void => {
    const id = scenarioId({ invalidInput: fingerprint });
    const existing = byId.get(id);
    if (existing) existing.alsoFrom.push(source);
    else byId.set(id, { id, spec: null, source, alsoFrom: [], invalid: error });
  };
  for (const input of inputs) {
    if (input.kind === 'scenario') {
      add(input.spec, { kind: 'file', file: input.file });
      continue;
    }
    if (input.kind === 'invalid') {
      addInvalid(input.fingerprint, input.error, { kind: 'file', file: input.file });
      continue;
    }
    let expanded;
    try {
      expanded = expandSweep(input.sweep, input.base, input.file, input.baseSource);
    } catch (error) {
      if (!(error instanceof ScenarioValidationError)) throw error;
      // A path that fits no point (an axis) or a sweep over too many points: one record for the sweep.
      addInvalid(`sweep\n${canonicalJson({ sweep: input.sweep, base: input.base })}`, formatIssuesOneLine(error.issues, error.source ?? input.file), { kind: 'file', file: input.file });
      continue;
    }
    sweeps.push({ name: expanded.name, file: input.file, axes: expanded.axes });
    for (const generated of expanded.scenarios) {
      const axes: Record<string, string | number | boolean> = {};
      for (const value of generated.point) axes[value.path] = value.label;
      const source: ScenarioSource = { kind: 'sweep', file: input.file, sweep: expanded.name, pointIndex: generated.pointIndex, axes };
      if (generated.invalid === undefined) add(generated.spec, source);
      else addInvalid(`sweep point\n${canonicalJson({ base: input.base, point: input.sweep.points?.[generated.pointIndex] ?? null })}`, `${input.file}: ${generated.invalid}`, source);
    }
  }
  const scenarios = [...byId.values()].map((entry, ordinal): BatchScenario => {
    const name = (entry.spec as { name?: unknown } | null)?.name;
    const { invalid, ...rest } = entry;
    return { ...rest, ordinal, solveKey: invalid === undefined ? solveKey(entry.spec) : entry.id, name: typeof name === 'string' ? name : null, ...(invalid !== undefined ? { invalid } : {}) };
  });
  const batchKey = shortHash(scenarios.map((s) => s.id).sort().join('\n'));
  return { scenarios, batchKey, sweeps };
}

/** Where a scenario came from for an error line: the file, or `file: point 3 (axis=value, ...)`. */
export function sourceForMessages(source: ScenarioSource): string {
  if (source.kind === 'file') return source.file;
  const axes = Object.entries(source.axes).map(([path, value]) => `${path}=${value}`).join(', ');
  return `${source.file}: point ${source.pointIndex}${axes === '' ? '' : ` (${axes})`}`;
}

/** A short human label: the file, or `sweep name [axis=value, ...]`. */
export function describeSource(source: ScenarioSource): string {
  if (source.kind === 'file') return source.file;
  const axes = Object.entries(source.axes).map(([path, value]) => `${path}=${value}`).join(', ');
  return `${source.sweep} [${axes}]`;
}
