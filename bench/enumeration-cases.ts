/**
 * Scenarios and comparison helpers for the enumeration work: the frozen reference
 * (bench/reference, the code before the perf work) against the current code. Used by
 * bench/enumeration-speed.ts (timing) and test/candidates-equivalence.test.ts (identity).
 */
import * as fs from 'fs';
import * as path from 'path';
import { capacityLowerBound } from '../src/formulation/capacity-bound';
import { outerLowerBound } from '../src/formulation/closed-form-bounds';
import type { ConfigCoefficients } from '../src/formulation/coefficients';
import type { SpaceRestriction } from '../src/formulation/search-space';
import { readJsonFile } from '../src/io/files';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { enumerateCandidates, type Candidate as CurrentCandidate } from '../src/solve/candidates';

/** What both implementations' candidates have (the reference has no span floor). */
type Candidate = Omit<CurrentCandidate, 'pipelineFloorS'>;
import { ROWS, scenarioFor } from './plan-scaling-scenarios';
import * as reference from './reference/candidates';
import * as referenceBounds from './reference/coefficients';

export interface EnumerationCase {
  readonly name: string;
  readonly scenario: Scenario;
}

/** The repository root (works from bench/ under ts-jest and from dist/bench/ when built). */
function repositoryRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'fixtures', 'small'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no fixtures/ above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

/** Scenario fixtures of one folder, by file name. */
function fixtureCases(folder: string): EnumerationCase[] {
  const dir = path.join(repositoryRoot(), 'fixtures', folder);
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => {
    const name = path.join(folder, f).replace(/\.json$/, '');
    return { name, scenario: parseScenario(readJsonFile(path.join(dir, f)), name) };
  });
}

/** fixtures/*.json, fixtures/small/*.json and fixtures/infeasible/*.json. */
export const fixtureEnumerationCases = (): EnumerationCase[] => [...fixtureCases('.'), ...fixtureCases('small'), ...fixtureCases('infeasible')];

/** The generated scenarios of bench/plan-scaling.ts (2 to 8 sites); `sites` keeps only rows with those site counts. */
export const planScalingCases = (sites?: readonly number[]): EnumerationCase[] => ROWS
  .filter((row) => !sites || sites.includes(row.sites.length))
  .map((row) => ({ name: `plan-scaling ${row.model} ${row.sites.length}-site`, scenario: scenarioFor(row) }));

/**
 * The 240 scenarios of bench/batch-scaling.ts's sweep: the small one-site fixture without its
 * `search` block (the default plan space) over GPU type x GPU count x global batch x layers.
 */
export function batchSweepScenarios(): Scenario[] {
  const base = readJsonFile(path.join(repositoryRoot(), 'fixtures', 'small', 'one-site.json')) as Record<string, unknown>;
  delete base['search'];
  delete base['$schema'];
  const scenarios: Scenario[] = [];
  for (const gpuType of ['H100-SXM', 'A100-80GB', 'H200', 'B200', 'H800']) {
    for (const gpus of [8, 16, 24, 32, 48, 64]) {
      for (const globalBatchSeqs of [8, 16, 32, 64]) {
        for (const layers of [8, 16]) {
          const spec = JSON.parse(JSON.stringify(base)) as { model: { layers: number }; training: { globalBatchSeqs: number }; cluster: { sites: { gpuType: string; gpus: number }[] } };
          spec.model.layers = layers;
          spec.training.globalBatchSeqs = globalBatchSeqs;
          spec.cluster.sites[0]!.gpuType = gpuType;
          spec.cluster.sites[0]!.gpus = gpus;
          scenarios.push(parseScenario(spec, `batch-sweep ${gpuType} ${gpus} GPUs, batch ${globalBatchSeqs}, ${layers} layers`));
        }
      }
    }
  }
  return scenarios;
}

/** What must not change: the candidate list in order, and each candidate's refined bounds. */
export interface EnumerationResult {
  readonly candidates: readonly Candidate[];
  /** [outerLowerBound, capacityLowerBound] of the candidates at `refinedIndices`. */
  readonly refined: readonly (readonly [number, number])[];
  readonly coefficients: readonly ConfigCoefficients[];
  /** Wall time of the enumeration, and of the refined bounds (coefficients included), ms. */
  readonly enumerateMs: number;
  readonly refineMs: number;
}

export type Implementation = 'reference' | 'current';

/**
 * Enumerates the candidates and computes the refined bounds of the candidates at `refinedIndices`
 * (indices into the candidate list) with one implementation.
 */
export function runEnumeration(impl: Implementation, scenario: Scenario, restriction: SpaceRestriction, refinedIndices: (count: number) => readonly number[], keepCoefficients = false): EnumerationResult {
  const started = process.hrtime.bigint();
  const candidates: readonly Candidate[] = impl === 'reference' ? reference.enumerateCandidates(scenario, restriction) : enumerateCandidates(scenario, restriction);
  const enumerated = process.hrtime.bigint();
  const siteGpus = scenario.sites.map((s) => s.gpus);
  const outer = impl === 'reference' ? referenceBounds.outerLowerBound : outerLowerBound;
  const capacity = impl === 'reference' ? referenceBounds.capacityLowerBound : capacityLowerBound;
  const refined: [number, number][] = [];
  const coefficients: ConfigCoefficients[] = [];
  for (const i of refinedIndices(candidates.length)) {
    const candidate = candidates[i]!;
    const c = candidate.coefficients();
    refined.push([outer(c, candidate.quickBoundS), capacity(c, siteGpus)]);
    if (keepCoefficients) coefficients.push(c);
  }
  const refinedAt = process.hrtime.bigint();
  return { candidates, refined, coefficients, enumerateMs: Number(enumerated - started) / 1e6, refineMs: Number(refinedAt - enumerated) / 1e6 };
}

/** Every index, or `limit` indices spread evenly over the list (always the first ones included). */
export const spreadIndices = (limit: number) => (count: number): number[] => {
  if (count <= limit) return Array.from({ length: count }, (_, i) => i);
  const first = Math.min(count, Math.floor(limit / 2));
  const rest = limit - first;
  const picked = new Set(Array.from({ length: first }, (_, i) => i));
  for (let i = 0; i < rest; i++) picked.add(first + Math.floor((i * (count - first)) / rest));
  return [...picked].sort((a, b) => a - b);
};

/** Numbers equal bit for bit, or within `relative` (1e-12 by default) of each other. */
export const sameNumber = (a: number, b: number, relative = 1e-12): boolean =>
  Object.is(a, b) || (Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= relative * Math.max(Math.abs(a), Math.abs(b)));

/** Differences between two enumerations (empty when they agree), at most `limit` of them. */
export function enumerationDifferences(expected: EnumerationResult, actual: EnumerationResult, limit = 10): string[] {
  const out: string[] = [];
  const push = (message: string) => { if (out.length < limit) out.push(message); };
  if (expected.candidates.length !== actual.candidates.length) push(`candidate count ${expected.candidates.length} vs ${actual.candidates.length}`);
  const n = Math.min(expected.candidates.length, actual.candidates.length);
  for (let i = 0; i < n && out.length < limit; i++) {
    const e = expected.candidates[i]!;
    const a = actual.candidates[i]!;
    if (JSON.stringify(e.config) !== JSON.stringify(a.config) || e.dp !== a.dp) push(`#${i}: ${JSON.stringify(e.config)} dp ${e.dp} vs ${JSON.stringify(a.config)} dp ${a.dp}`);
    if (!Object.is(e.quickBoundS, a.quickBoundS)) push(`#${i}: quickBoundS ${e.quickBoundS} vs ${a.quickBoundS}`);
    if (!Object.is(e.memoryNeedGiB, a.memoryNeedGiB)) push(`#${i}: memoryNeedGiB ${e.memoryNeedGiB} vs ${a.memoryNeedGiB}`);
  }
  if (expected.refined.length !== actual.refined.length) push(`refined count ${expected.refined.length} vs ${actual.refined.length}`);
  expected.refined.forEach(([outer, capacity], i) => {
    const [outerA, capacityA] = actual.refined[i] ?? [NaN, NaN];
    if (!sameNumber(outer, outerA)) push(`refined #${i}: outerLowerBound ${outer} vs ${outerA}`);
    if (!sameNumber(capacity, capacityA)) push(`refined #${i}: capacityLowerBound ${capacity} vs ${capacityA}`);
  });
  expected.coefficients.forEach((c, i) => {
    const difference = coefficientDifference(c, actual.coefficients[i]!);
    if (difference) push(`coefficients #${i}: ${difference}`);
  });
  return out;
}

/**
 * The first difference between two candidates' coefficients (what the placement MIP is built
 * from), or undefined: every data field compared as JSON (Maps as entry lists, numbers bit for
 * bit through their shortest round-trip text), and `ringS` sampled.
 */
export function coefficientDifference(expected: ConfigCoefficients, actual: ConfigCoefficients): string | undefined {
  const text = (c: ConfigCoefficients) => JSON.stringify(c, (key, value: unknown) => {
    // The reference predates eq. 5.8's round-trip profile (test/timeline-agreement.test.ts checks it).
    if (key === 'roundTrip') return undefined;
    if (value instanceof Map) return [...(value as Map<unknown, unknown>).entries()];
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    if (typeof value === 'function') return undefined;
    return value;
  });
  const e = text(expected);
  const a = text(actual);
  if (e !== a) {
    let at = 0;
    while (at < e.length && e[at] === a[at]) at++;
    return `differ at ${e.slice(Math.max(0, at - 80), at + 40)} vs ${a.slice(Math.max(0, at - 80), at + 40)}`;
  }
  for (let stage = 0; stage < expected.stages.length; stage++) {
    for (let site = 0; site < expected.podGpus.length; site++) {
      for (const replicas of [1, 2, Math.max(1, expected.dp)]) {
        for (const spansPods of [false, true]) {
          const re = expected.ringS(stage, site, replicas, spansPods);
          const ra = actual.ringS(stage, site, replicas, spansPods);
          if (!Object.is(re, ra)) return `ringS(${stage}, ${site}, ${replicas}, ${spansPods}) ${re} vs ${ra}`;
        }
      }
    }
  }
  return undefined;
}
