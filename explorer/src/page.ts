/**
 * The explorer page: the scenario editor, and a planning worker re-started on every edit (the
 * previous solve is cancelled by terminating its worker). HiGHS's WebAssembly is compiled once
 * here and handed to each worker.
 */
import { byId, download, el } from './dom';
import { renderEditor, showIssues } from './editor';
import { DEFAULT_FIXTURE, FIXTURES } from './fixtures';
import { parseJsonText } from '../../src/io/files';
import { ScenarioValidationError, formatIssues } from '../../src/model/validation-error';
import type { FixView, FromWorker } from './protocol';
import { renderDiagnosis, renderPlan, showNumbers } from './result-view';
import { startSweep } from './sweep';

/** The CLI's defaults for `plan`. */
const TIME_LIMIT_S = 10;
const GAP = 0.01;
/** Typing pauses this long before a re-plan starts. */
const EDIT_DEBOUNCE_MS = 200;

type Spec = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- edited JSON

const highsModule: Promise<WebAssembly.Module> = WebAssembly.compileStreaming(fetch('highs.wasm'))
  .catch(() => fetch('highs.wasm').then((r) => r.arrayBuffer()).then((bytes) => WebAssembly.compile(bytes)));

let spec: Spec = structuredClone(DEFAULT_FIXTURE.spec) as Spec;
let worker: Worker | undefined;
/** A worker started while the page was idle, its bundle already loaded: the next re-plan takes it. */
let spare: Worker | undefined;
let debounce: ReturnType<typeof setTimeout> | undefined;

const editor = byId('editor');
editor.addEventListener('submit', (event) => event.preventDefault());
const results = byId('results');
const status = byId('status-bar');
const otherIssues = byId('issues');

function setStatus(text: string, kind: 'busy' | 'ok' | 'bad'): void {
  const node = status.querySelector<HTMLElement>('[data-testid="status"]')!;
  node.textContent = text;
  node.className = `status ${kind}`;
}

function setDetail(text: string): void {
  status.querySelector<HTMLElement>('#status-detail')!.textContent = text;
}

/** Shows `next` in the editor and plans it. */
function load(next: Spec): void {
  clearTimeout(debounce);
  spec = next;
  renderEditor(editor, spec, editorCallbacks);
  replan();
}

/** Re-renders the editor, keeping the focus (and caret) in the field being typed in. */
function rerenderEditor(): void {
  const active = document.activeElement instanceof HTMLInputElement ? document.activeElement : undefined;
  const path = active?.dataset['path'];
  const caret = active?.type === 'text' ? active.selectionStart : null;
  renderEditor(editor, spec, editorCallbacks);
  const again = path === undefined ? null : editor.querySelector<HTMLInputElement>(`[data-path="${CSS.escape(path)}"]`);
  again?.focus();
  if (again && caret !== null && again.type === 'text') again.setSelectionRange(caret, caret);
}

const editorCallbacks = { current: () => spec, onEdit };

function onEdit(next: Spec): void {
  spec = next;
  clearTimeout(debounce);
  debounce = setTimeout(() => {
    // Re-rendered only for structural edits, so that the field being typed in keeps its focus.
    if (structureOf(next) !== structureOf(currentStructure)) rerenderEditor();
    currentStructure = next;
    replan();
  }, EDIT_DEBOUNCE_MS);
}

/** What decides the editor's fields: the model, the sites and their names, the links. */
let currentStructure: Spec = spec;
const structureOf = (s: Spec) => {
  const list = (value: unknown): Spec[] => (Array.isArray(value) ? value : []);
  return JSON.stringify([s?.model, list(s?.cluster?.sites).map((x: Spec) => [x?.name, x?.gpu !== undefined]), list(s?.cluster?.links).map((l: Spec) => l?.between)]);
};

/** What explore was given (its calibration profile applies while the spec names the same profile). */
let given: { readonly spec: Spec; readonly calibration?: { readonly file: string; readonly profile: unknown } } | undefined;

/** The profile to plan `s` with, and a note when the spec names one the page does not have. */
function calibrationFor(s: Spec): { readonly profile?: unknown; readonly note?: string } {
  const named = s?.calibration;
  if (typeof named !== 'string') return {};
  if (given?.calibration && named === given.spec?.calibration) return { profile: given.calibration.profile, note: `calibration profile ${given.calibration.file} applied` };
  return { note: `the scenario names calibration profile ${named}, which the page cannot read: predictions use the committed constants (open it with scaleacross explore to apply it)` };
}

/** Refreshes the sweep's choices (set once the sweep control exists). */
let refreshSweep: () => void = () => undefined;
/** Said after each plan: which calibration profile the predictions use, when the scenario names one. */
let calibrationNote: string | undefined;

function replan(): void {
  refreshSweep();
  worker?.terminate();
  const w = spare ?? new Worker('worker.js');
  spare = undefined;
  worker = w;
  currentStructure = spec;
  setStatus('planning', 'busy');
  setDetail('');
  showNumbers(status, {});
  w.onmessage = (event: MessageEvent<FromWorker>) => { if (w === worker) handle(event.data); };
  w.onerror = (event) => { if (w === worker) { event.preventDefault(); setStatus('error', 'bad'); setDetail(event.message); } };
  const planned = spec;
  const calibration = calibrationFor(planned);
  calibrationNote = calibration.note;
  void highsModule.then((module) => w.postMessage({ type: 'plan', spec: planned, highsModule: module, timeLimitS: TIME_LIMIT_S, gap: GAP, calibrationProfile: calibration.profile }));
}

function handle(message: FromWorker): void {
  switch (message.type) {
    case 'progress':
      showNumbers(status, { iterationTimeS: message.incumbentS, boundS: message.boundS, gap: message.gap });
      setDetail(`searching: best so far, ${message.elapsedS.toFixed(1)} s`);
      return;
    case 'invalid': {
      spare ??= new Worker('worker.js');
      setStatus('invalid', 'bad');
      setDetail('the scenario does not validate: see the fields marked');
      const rest = showIssues(editor, message.issues);
      otherIssues.replaceChildren(...message.issues.map((i) => el('li', { class: rest.includes(i) ? 'unplaced' : '' }, formatIssues([i]))));
      results.replaceChildren();
      return;
    }
    case 'diagnosing':
      setStatus('diagnosing', 'busy');
      setDetail('no plan fits: looking for the conflicting requirements and verified fixes');
      return;
    case 'result':
      spare ??= new Worker('worker.js');
      showIssues(editor, []);
      otherIssues.replaceChildren();
      if (message.plan) {
        const view = message.plan;
        setStatus(view.status, 'ok');
        showNumbers(status, { iterationTimeS: view.iterationTimeS, boundS: view.lowerBoundS, gap: view.gap });
        // performance.now() counts from the navigation's start: the first plan's time since the page began loading.
        document.body.dataset['firstPlanMs'] ??= String(Math.round(performance.now()));
        setDetail(`planned in ${view.elapsedS.toFixed(1)} s; first plan ${(Number(document.body.dataset['firstPlanMs']) / 1000).toFixed(1)} s after the page began loading${calibrationNote ? `; ${calibrationNote}` : ''}`);
        renderPlan(results, view, String(spec?.name ?? 'scenario'));
      } else if (message.diagnosis) {
        setStatus(message.diagnosis.status, 'bad');
        setDetail(`diagnosed in ${message.diagnosis.elapsedS.toFixed(1)} s`);
        renderDiagnosis(results, message.diagnosis, applyFix);
      }
      return;
    case 'error':
      setStatus('error', 'bad');
      setDetail(message.message);
      return;
    case 'sweep-point':
    case 'model':
      return;
  }
}

function applyFix(fix: FixView): void {
  loadOther(fix.spec as Spec, `${String((fix.spec as Spec)['name'] ?? 'scenario')} with a fix applied`);
}

/** Loads a scenario that is none of the select's fixtures (a file, a fix): the select says so. */
function loadOther(next: Spec, label: string): void {
  const select = byId<HTMLSelectElement>('fixture');
  let option = select.querySelector<HTMLOptionElement>('option[value="other"]');
  if (!option) select.prepend(option = el('option', { value: 'other' }));
  option.textContent = label;
  select.value = 'other';
  load(next);
}

/** A Hugging Face config.json, turned into the scenario's model in a worker (as `import-model`), replaces the model. */
function importModel(config: unknown, file: string): void {
  const importer = new Worker('worker.js');
  importer.onmessage = (event: MessageEvent<FromWorker>) => {
    importer.terminate();
    const message = event.data;
    if (message.type === 'model') {
      load({ ...structuredClone(spec), model: message.model });
    } else if (message.type === 'invalid') {
      setStatus('invalid', 'bad');
      setDetail(formatIssues(message.issues, file).replace(/\n/g, '; '));
    }
  };
  importer.postMessage({ type: 'import-model', config, name: file.replace(/\.json$/i, ''), source: file });
}

/** Reads a chosen file as JSON; a malformed file is reported in the status bar. */
function readJson(input: HTMLInputElement, use: (value: unknown, file: string) => void): void {
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (!file) return;
    void file.text().then((text) => {
      // Malformed JSON: the CLI's message (line and column); the scenario shown stays.
      let value: unknown;
      try {
        value = parseJsonText(text, file.name);
      } catch (error) {
        if (!(error instanceof ScenarioValidationError)) throw error;
        worker?.terminate();
        worker = undefined;
        setStatus('invalid', 'bad');
        setDetail(error.message);
        input.value = '';
        return;
      }
      use(value, file.name);
      input.value = '';
    });
  });
}

function setUpToolbar(injected: Spec | undefined): void {
  const select = byId<HTMLSelectElement>('fixture');
  if (injected) select.append(el('option', { value: 'given' }, `${String(injected['name'] ?? 'scenario')} (given to explore)`));
  for (const f of FIXTURES) select.append(el('option', { value: f.id }, f.id));
  select.value = injected ? 'given' : DEFAULT_FIXTURE.id;
  select.addEventListener('change', () => {
    const fixture = FIXTURES.find((f) => f.id === select.value);
    const chosen = fixture ? fixture.spec : select.value === 'given' ? injected : undefined;
    if (chosen !== undefined) load(structuredClone(chosen) as Spec);
  });
  readJson(byId<HTMLInputElement>('load-scenario'), (value, file) => loadOther(value as Spec, file));
  readJson(byId<HTMLInputElement>('import-hf'), (config, file) => importModel(config, file));
  byId('save-scenario').addEventListener('click', () => download(`${String(spec?.name ?? 'scenario')}.json`, `${JSON.stringify(spec, null, 2)}\n`));
  refreshSweep = startSweep(byId('sweep'), () => spec, () => highsModule, (s) => calibrationFor(s).profile);
}

/** What `scaleacross explore` put into the page: the scenario, and the calibration profile it names. */
interface Initial {
  readonly spec: Spec;
  readonly calibration?: { readonly file: string; readonly profile: unknown };
}

function initialFromServer(): Initial | undefined {
  const value = JSON.parse(document.getElementById('initial')?.textContent ?? 'null') as Initial | null;
  return value !== null && typeof value === 'object' && value.spec !== undefined ? value : undefined;
}

const initial = initialFromServer();
given = initial;
setUpToolbar(initial?.spec);
load(structuredClone(initial?.spec ?? DEFAULT_FIXTURE.spec) as Spec);
