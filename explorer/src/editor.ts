/**
 * The scenario editor: model, training, sites and links as form fields, each bound to a JSON path
 * of the spec. Every edit calls `onEdit` with the new spec; validation issues are shown next to the
 * field at their path.
 */
import { parseSpecPath, setAtPath } from '../../src/batch/spec-path';
import { GPU_TYPE_NAMES } from '../../src/model/gpu-catalog';
import type { InputIssue } from '../../src/model/validation-error';
import { MODEL_CATALOG } from './catalog';
import { el } from './dom';

type Spec = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an edited spec is any JSON until it validates.

export interface EditorCallbacks {
  /** The spec as it is now: every edit starts from it (fields are not re-rendered on each edit). */
  readonly current: () => Spec;
  /** The spec after an edit (a fresh object). */
  readonly onEdit: (spec: Spec) => void;
}

/** A number field: '' removes the key (the schema says whether it may be absent). */
function numberField(spec: Spec, path: string, label: string, callbacks: EditorCallbacks, attributes: Record<string, string> = {}): HTMLElement {
  const value = readPath(spec, path);
  const input = el('input', { type: 'number', 'data-path': path, value: value === undefined ? '' : String(value), step: 'any', ...attributes });
  input.addEventListener('input', () => edit(path, input.value.trim() === '' ? undefined : Number(input.value), callbacks));
  return field(path, label, input);
}

function textField(spec: Spec, path: string, label: string, callbacks: EditorCallbacks, onChange?: (next: Spec, old: string, value: string) => void): HTMLElement {
  const old = String(readPath(spec, path) ?? '');
  const input = el('input', { type: 'text', 'data-path': path, value: old });
  input.addEventListener('input', () => {
    const next = structuredClone(callbacks.current());
    setAtPath(next, parseSpecPath(path)!, input.value);
    onChange?.(next, old, input.value);
    callbacks.onEdit(next);
  });
  return field(path, label, input);
}

/** A select of `options`; a field the scenario leaves out shows `absentAs` (the schema's default) when given. */
function selectField(spec: Spec, path: string, label: string, options: readonly string[], callbacks: EditorCallbacks, absentAs?: string): HTMLElement {
  const value = String(readPath(spec, path) ?? absentAs ?? '');
  const select = el('select', { 'data-path': path }, ...[...new Set([...options, ...(value === '' ? [] : [value])])].map((o) => el('option', { value: o }, o)));
  select.value = value;
  select.addEventListener('change', () => edit(path, select.value, callbacks));
  return field(path, label, select);
}

/** A labelled field with the place for its validation message. */
function field(path: string, label: string, control: HTMLElement): HTMLElement {
  return el('label', { class: 'field' }, el('span', { class: 'label' }, label), control, el('span', { class: 'field-error', 'data-error-for': path }));
}

function readPath(spec: Spec, path: string): unknown {
  let current: unknown = spec;
  for (const segment of parseSpecPath(path) ?? []) current = current !== null && typeof current === 'object' ? (current as Record<string | number, unknown>)[segment] : undefined;
  return current;
}

function edit(path: string, value: unknown, callbacks: EditorCallbacks): void {
  const next = structuredClone(callbacks.current());
  const segments = parseSpecPath(path)!;
  if (value === undefined) {
    const parent = readPath(next, segments.slice(0, -1).map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('').replace(/^\./, '')) as Record<string | number, unknown> | undefined;
    if (parent && typeof parent === 'object') delete parent[segments[segments.length - 1]!];
  } else {
    setAtPath(next, segments, value);
  }
  callbacks.onEdit(next);
}

function modelSection(spec: Spec, callbacks: EditorCallbacks): HTMLElement {
  const current = spec['model']?.name as string | undefined;
  const select = el('select', { 'data-path': 'model', 'data-testid': 'model-select' },
    ...MODEL_CATALOG.map((m) => el('option', { value: m.name }, m.name)),
    ...(current && !MODEL_CATALOG.some((m) => m.name === current) ? [el('option', { value: current }, `${current} (this scenario's)`)] : []));
  if (current) select.value = current;
  select.addEventListener('change', () => {
    const model = MODEL_CATALOG.find((m) => m.name === select.value);
    if (model) callbacks.onEdit({ ...structuredClone(callbacks.current()), model: structuredClone(model) });
  });
  const m = spec['model'] ?? {};
  const shape = m.layers ? `${m.layers} layers, hidden ${m.hidden}, FFN ${m.ffnHidden}, ${m.heads} heads${m.moe ? `, ${m.moe.experts} experts (top-${m.moe.topK})` : ''}` : '';
  return el('fieldset', {}, el('legend', {}, 'Model'), field('model', 'model', select), el('p', { class: 'note' }, shape));
}

function trainingSection(spec: Spec, callbacks: EditorCallbacks): HTMLElement {
  return el('fieldset', {}, el('legend', {}, 'Training'),
    numberField(spec, 'training.globalBatchSeqs', 'global batch (sequences)', callbacks, { min: '1', step: '1' }),
    numberField(spec, 'training.seqLen', 'sequence length (tokens)', callbacks, { min: '1', step: '1' }),
    selectField(spec, 'training.precision', 'precision', ['bf16', 'fp8'], callbacks, 'bf16'),
    selectField(spec, 'training.gradientDtype', 'gradient buffer', ['fp32', 'bf16'], callbacks, 'fp32'),
    selectField(spec, 'training.optimizerMomentsDtype', 'Adam moments (ZeRO >= 1)', ['fp32', 'bf16'], callbacks, 'fp32'),
    selectField(spec, 'training.masterWeights', 'master weights (ZeRO >= 1)', ['fp32', 'remainders', 'none'], callbacks, 'fp32'));
}

function sitesSection(spec: Spec, callbacks: EditorCallbacks): HTMLElement {
  const sites: Spec[] = Array.isArray(spec['cluster']?.sites) ? spec['cluster'].sites : [];
  const renameInLinks = (next: Spec, old: string, value: string) => {
    for (const link of Array.isArray(next['cluster']?.links) ? next['cluster'].links : []) if (Array.isArray(link?.between)) link.between = link.between.map((n: string) => (n === old ? value : n));
  };
  const rows = sites.map((site, i) => el('div', { class: 'row' },
    textField(spec, `cluster.sites[${i}].name`, 'name', callbacks, renameInLinks),
    site?.gpu !== undefined && site?.gpuType === undefined
      ? el('span', { class: 'field' }, el('span', { class: 'label' }, 'GPU'), el('span', {}, `${site.gpu?.name ?? 'custom'} (custom)`))
      : selectField(spec, `cluster.sites[${i}].gpuType`, 'GPU type', GPU_TYPE_NAMES, callbacks),
    numberField(spec, `cluster.sites[${i}].gpus`, 'GPUs', callbacks, { min: '1', step: '1', 'data-testid': `site-gpus-${i}` }),
    numberField(spec, `cluster.sites[${i}].gpusPerNode`, 'per node', callbacks, { min: '1', step: '1' }),
    numberField(spec, `cluster.sites[${i}].memoryReserveGiB`, 'GiB reserved per GPU', callbacks, { min: '0' }),
    removeButton(() => {
      const next = structuredClone(callbacks.current());
      const [removed] = next['cluster'].sites.splice(i, 1);
      next['cluster'].links = (next['cluster'].links ?? []).filter((l: Spec) => !l?.between?.includes(removed?.name));
      callbacks.onEdit(next);
    })));
  const add = el('button', { type: 'button' }, 'add site');
  add.disabled = !Array.isArray(spec['cluster']?.sites);
  add.addEventListener('click', () => {
    const next = structuredClone(callbacks.current());
    const names = new Set(sites.map((s) => s.name));
    let n = sites.length + 1;
    while (names.has(`site-${n}`)) n++;
    next['cluster'].sites.push({ name: `site-${n}`, gpuType: 'H100-SXM', gpus: 1024, gpusPerNode: 8 });
    callbacks.onEdit(next);
  });
  return el('fieldset', {}, el('legend', {}, 'Sites'), ...rows, add);
}

function linksSection(spec: Spec, callbacks: EditorCallbacks): HTMLElement {
  const links: Spec[] = Array.isArray(spec['cluster']?.links) ? spec['cluster'].links : [];
  const siteNames: string[] = (Array.isArray(spec['cluster']?.sites) ? spec['cluster'].sites : []).map((s: Spec) => String(s?.name));
  const rows = links.map((_link, i) => el('div', { class: 'row' },
    selectField(spec, `cluster.links[${i}].between[0]`, 'from', siteNames, callbacks),
    selectField(spec, `cluster.links[${i}].between[1]`, 'to', siteNames, callbacks),
    numberField(spec, `cluster.links[${i}].bandwidthGbps`, 'Gb/s', callbacks, { min: '0', 'data-testid': `link-bandwidth-${i}` }),
    numberField(spec, `cluster.links[${i}].rttMs`, 'RTT ms', callbacks, { min: '0' }),
    numberField(spec, `cluster.links[${i}].distanceKm`, 'or km', callbacks, { min: '0' }),
    numberField(spec, `cluster.links[${i}].lossRate`, 'loss', callbacks, { min: '0', max: '0.5' }),
    removeButton(() => {
      const next = structuredClone(callbacks.current());
      next['cluster'].links.splice(i, 1);
      callbacks.onEdit(next);
    })));
  const add = el('button', { type: 'button' }, 'add link');
  add.disabled = siteNames.length < 2 || !(spec['cluster']?.links === undefined || Array.isArray(spec['cluster'].links));
  add.addEventListener('click', () => {
    const next = structuredClone(callbacks.current());
    next['cluster'].links = [...(next['cluster'].links ?? []), { between: [siteNames[0], siteNames[1]], bandwidthGbps: 12800, rttMs: 1, lossRate: 0 }];
    callbacks.onEdit(next);
  });
  return el('fieldset', {}, el('legend', {}, 'Links'), ...rows, add);
}

function removeButton(onClick: () => void): HTMLElement {
  const button = el('button', { type: 'button', class: 'remove', title: 'remove' }, 'remove');
  button.addEventListener('click', onClick);
  return button;
}

/** Replaces the editor's content with fields for `spec`. */
export function renderEditor(root: HTMLElement, spec: Spec, callbacks: EditorCallbacks): void {
  // Not a scenario at all: the validation messages under the editor say what it is.
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    root.replaceChildren(el('p', { class: 'note' }, 'This is not a scenario object: load or choose another.'));
    return;
  }
  root.replaceChildren(modelSection(spec, callbacks), trainingSection(spec, callbacks), sitesSection(spec, callbacks), linksSection(spec, callbacks));
}

/**
 * Shows each issue next to the field at its path (or the nearest enclosing field); returns the
 * issues no field shows, for the list under the editor.
 */
export function showIssues(root: HTMLElement, issues: readonly InputIssue[]): InputIssue[] {
  for (const slot of root.querySelectorAll<HTMLElement>('.field-error')) slot.textContent = '';
  root.querySelectorAll('.invalid').forEach((e) => e.classList.remove('invalid'));
  const unplaced: InputIssue[] = [];
  for (const issue of issues) {
    let path = issue.path;
    let slot: HTMLElement | null = null;
    while (path !== '' && !(slot = root.querySelector<HTMLElement>(`[data-error-for="${CSS.escape(path)}"]`))) path = path.replace(/(\.[^.[\]]+|\[\d+\])$/, '') === path ? '' : path.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
    if (!slot) { unplaced.push(issue); continue; }
    slot.textContent = slot.textContent ? `${slot.textContent}; ${issue.message}` : issue.path === path ? issue.message : `${issue.path}: ${issue.message}`;
    slot.parentElement?.classList.add('invalid');
  }
  return unplaced;
}
