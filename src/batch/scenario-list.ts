/**
 * The scenarios of a batch: scenario files and expanded sweeps in the order given, each with
 * its content id, deduplicated by id (the first source wins, later ones are listed in
 * `alsoFrom`), numbered by ordinal, and a batch key that identifies the whole list.
 */
import type { SweepSpec } from '../model/sweep-schema';
import { scenarioId, shortHash, solveKey } from '../model/canonical-json';
import { expandSweep } from './sweep';

/** What the batch was given, already read (src/io/batch-inputs.ts reads it). */
export type BatchInput =
  | { readonly kind: 'scenario'; readonly file: string; readonly spec: unknown }
  | { readonly kind: 'sweep'; readonly file: string; readonly sweep: SweepSpec; readonly base: unknown; readonly baseSource: string };

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
  const byId = new Map<string, { id: string; spec: unknown; source: ScenarioSource; alsoFrom: ScenarioSource[] }>();
  const sweeps: SweepInfo[] = [];
  const add = (spec: unknown, source: ScenarioSource): void => {
    const id = scenarioId(spec);
    const existing = byId.get(id);
    if (existing) existing.alsoFrom.push(source);
    else byId.set(id, { id, spec, source, alsoFrom: [] });
  };
  for (const input of inputs) {
    if (input.kind === 'scenario') {
      add(input.spec, { kind: 'file', file: input.file });
      continue;
    }
    const expanded = expandSweep(input.sweep, input.base, input.file, input.baseSource);
    sweeps.push({ name: expanded.name, file: input.file, axes: expanded.axes });
    for (const generated of expanded.scenarios) {
      const axes: Record<string, string | number | boolean> = {};
      for (const value of generated.point) axes[value.path] = value.label;
      add(generated.spec, { kind: 'sweep', file: input.file, sweep: expanded.name, pointIndex: generated.pointIndex, axes });
    }
  }
  const scenarios = [...byId.values()].map((entry, ordinal): BatchScenario => {
    const name = (entry.spec as { name?: unknown } | null)?.name;
    return { ...entry, ordinal, solveKey: solveKey(entry.spec), name: typeof name === 'string' ? name : null };
  });
  const batchKey = shortHash(scenarios.map((s) => s.id).sort().join('\n'));
  return { scenarios, batchKey, sweeps };
}

/** A short human label: the file, or `sweep name [axis=value, ...]`. */
export function describeSource(source: ScenarioSource): string {
  if (source.kind === 'file') return source.file;
  const axes = Object.entries(source.axes).map(([path, value]) => `${path}=${value}`).join(', ');
  return `${source.sweep} [${axes}]`;
}
