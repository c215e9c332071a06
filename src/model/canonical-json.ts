/**
 * Canonical JSON (keys sorted at every depth, no whitespace) and the content hashes built on
 * it: a scenario's id and the key of its solve (batch), and spec comparisons (diagnosis).
 */
import { createHash } from 'crypto';

/** JSON text with object keys sorted at every depth; `undefined` members are dropped, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** First 16 hex digits of the sha256 of a text. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function withoutKeys(spec: unknown, keys: readonly string[]): unknown {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return spec;
  const copy: Record<string, unknown> = { ...(spec as Record<string, unknown>) };
  for (const key of keys) delete copy[key];
  return copy;
}

/**
 * The stable id of a scenario: hash of its canonical JSON without the editor-only `$schema`
 * key. The same content gives the same id whichever file or sweep it came from.
 */
export function scenarioId(spec: unknown): string {
  return shortHash(canonicalJson(withoutKeys(spec, ['$schema'])));
}

/**
 * The key of a scenario's solve: as the id, but without the scenario `name` as well, which
 * does not change the plan. Scenarios with equal keys are solved once.
 */
export function solveKey(spec: unknown): string {
  return shortHash(canonicalJson(withoutKeys(spec, ['$schema', 'name'])));
}
