/**
 * Pure edits of a scenario spec for what-if questions: remove a site or a link, keep only some
 * sites, forbid idle GPUs, and user edits written `path=value` (set) or `path=*k` (scale), e.g.
 * `cluster.links[0].bandwidthGbps=*0.5`. Every function returns a new spec and changes nothing
 * it is given; the result is validated by parseScenario like any scenario.
 */
import { DEFAULT_SEARCH, type ScenarioSpec, type SiteSpec } from './scenario-schema';

/** A parsed user edit: set `path` to `value`, or multiply the number at `path` by `factor`. */
export type SpecEdit =
  | { readonly text: string; readonly path: readonly PathSegment[]; readonly op: 'set'; readonly value: unknown }
  | { readonly text: string; readonly path: readonly PathSegment[]; readonly op: 'scale'; readonly factor: number };

/** A key of an object, an array index, or `[name]`: the element of an array whose `name` is that. */
export type PathSegment = { readonly key: string } | { readonly index: number } | { readonly named: string };

/** The spec without site `siteIndex` and without every link that touches it. */
export function removeSite(spec: ScenarioSpec, siteIndex: number): ScenarioSpec {
  const name = spec.cluster.sites[siteIndex]!.name;
  return keepSites(spec, spec.cluster.sites.filter((_, i) => i !== siteIndex).map((s) => s.name), `without ${name}`);
}

/** The spec without link `linkIndex` (its sites stay, possibly no longer connected: see {@link connectedSiteGroups}). */
export function removeLink(spec: ScenarioSpec, linkIndex: number): ScenarioSpec {
  const link = spec.cluster.links[linkIndex]!;
  const links = spec.cluster.links.filter((_, i) => i !== linkIndex);
  return { ...spec, name: `${spec.name} without ${link.between.join('<->')}`, cluster: { ...spec.cluster, links } };
}

/** The spec with only the named sites (in their order) and the links between two of them; `suffix` is added to the name. */
export function keepSites(spec: ScenarioSpec, names: readonly string[], suffix?: string): ScenarioSpec {
  const kept = new Set(names);
  const sites: SiteSpec[] = spec.cluster.sites.filter((s) => kept.has(s.name));
  const links = spec.cluster.links.filter((l) => kept.has(l.between[0]) && kept.has(l.between[1]));
  return { ...spec, name: suffix === undefined ? spec.name : `${spec.name} ${suffix}`, cluster: { ...spec.cluster, sites, links } };
}

/** Site names in groups joined by links (each group in site order; groups ordered by their first site). */
export function connectedSiteGroups(spec: ScenarioSpec): string[][] {
  const names = spec.cluster.sites.map((s) => s.name);
  const group = new Map(names.map((n, i) => [n, i]));
  const find = (n: string): number => {
    let g = group.get(n)!;
    while (group.get(names[g]!)! !== g) g = group.get(names[g]!)!;
    return g;
  };
  for (const link of spec.cluster.links) {
    if (!group.has(link.between[0]) || !group.has(link.between[1])) continue;
    const a = find(link.between[0]);
    const b = find(link.between[1]);
    if (a !== b) group.set(names[Math.max(a, b)]!, Math.min(a, b));
  }
  const groups = new Map<number, string[]>();
  for (const n of names) {
    const g = find(n);
    groups.set(g, [...(groups.get(g) ?? []), n]);
  }
  return [...groups.values()];
}

/** The spec with `search.allowIdleGpus` set to false: only plans that use every GPU of every site. */
export function forbidIdleGpus(spec: ScenarioSpec): ScenarioSpec {
  const search = spec.search ?? DEFAULT_SEARCH;
  return { ...spec, search: { ...search, allowIdleGpus: false } };
}

const SEGMENT = /^(?:\.?([A-Za-z_$][\w$]*)|\[(\d+)\]|\[([^\]]+)\])/;

/**
 * Parses `path=value` or `path=*k`. Value: a JSON literal (number, true, "text", ...) or, when
 * it is not JSON, the bare text as a string. Returns the problem as a message when it does not parse.
 */
export function parseSpecEdit(text: string): SpecEdit | { readonly error: string } {
  const eq = text.indexOf('=');
  if (eq < 0) return { error: 'expected path=value or path=*factor, e.g. cluster.links[0].bandwidthGbps=*0.5' };
  const pathText = text.slice(0, eq).trim();
  const valueText = text.slice(eq + 1).trim();
  const path: PathSegment[] = [];
  for (let rest = pathText; rest !== '';) {
    const m = SEGMENT.exec(rest);
    if (!m || (path.length === 0 && m[1] === undefined)) return { error: `cannot read the path '${pathText}' at '${rest}' (write keys with dots and [index] or [name])` };
    path.push(m[1] !== undefined ? { key: m[1] } : m[2] !== undefined ? { index: Number(m[2]) } : { named: m[3]! });
    rest = rest.slice(m[0].length);
  }
  if (path.length === 0) return { error: 'names no path before =' };
  if (valueText === '') return { error: 'has no value after =' };
  if (valueText.startsWith('*')) {
    const factor = Number(valueText.slice(1));
    if (valueText.slice(1).trim() === '' || !Number.isFinite(factor)) return { error: `'${valueText}' is not a scale factor (write *0.5)` };
    return { text, path, op: 'scale', factor };
  }
  let value: unknown = valueText;
  try { value = JSON.parse(valueText); } catch { /* a bare word is a string */ }
  return { text, path, op: 'set', value };
}

const describe = (path: readonly PathSegment[]): string =>
  path.map((s, i) => ('key' in s ? `${i === 0 ? '' : '.'}${s.key}` : 'index' in s ? `[${s.index}]` : `[${s.named}]`)).join('');

/** Applies a parsed edit; returns the new spec, or the problem (naming the path) when the path or value does not fit the spec. */
export function applySpecEdit(spec: ScenarioSpec, edit: SpecEdit): ScenarioSpec | { readonly error: string } {
  const result = editAt(spec, edit.path, 0, edit);
  return result instanceof EditProblem ? { error: result.message } : (result as ScenarioSpec);
}

/** Why an edit does not apply (a value, not thrown). */
class EditProblem {
  constructor(readonly message: string) {}
}

function editAt(node: unknown, path: readonly PathSegment[], at: number, edit: SpecEdit): unknown {
  const where = describe(path.slice(0, at + 1));
  const segment = path[at]!;
  const last = at === path.length - 1;
  const leaf = (old: unknown): unknown => {
    if (edit.op === 'set') return edit.value;
    if (typeof old !== 'number') return new EditProblem(`${where}: ${old === undefined ? 'is not set' : 'is not a number'}, so it cannot be scaled`);
    return old * edit.factor;
  };
  if ('key' in segment) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return new EditProblem(`${where}: no such field (its parent is not an object)`);
    const record = node as Record<string, unknown>;
    if (!last && !(segment.key in record)) return new EditProblem(`${where}: no such field`);
    const next = last ? leaf(record[segment.key]) : editAt(record[segment.key], path, at + 1, edit);
    return next instanceof EditProblem ? next : { ...record, [segment.key]: next };
  }
  if (!Array.isArray(node)) return new EditProblem(`${where}: not a list`);
  const index = 'index' in segment ? segment.index : node.findIndex((e) => e !== null && typeof e === 'object' && (e as { name?: unknown }).name === segment.named);
  if (index < 0 || index >= node.length) return new EditProblem(`${where}: no such element (the list has ${node.length})`);
  const next = last ? leaf(node[index]) : editAt(node[index], path, at + 1, edit);
  return next instanceof EditProblem ? next : node.map((e, i) => (i === index ? next : e));
}
