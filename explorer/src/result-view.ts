/** Renders a plan (numbers, drawings, network settings, downloads) or a diagnosis into the page. */
import { BREAKDOWN_PARTS } from '../../src/report/breakdown-chart';
import { download, el, svgBox } from './dom';
import type { DiagnosisView, FixView, PlanView } from './protocol';

const seconds = (s: number) => `${s.toFixed(3)} s`;

function table(rows: readonly (readonly (string | Node)[])[], header?: readonly string[], id?: string): HTMLTableElement {
  return el('table', { id },
    ...(header ? [el('tr', {}, ...header.map((h) => el('th', {}, h)))] : []),
    ...rows.map((cells) => el('tr', {}, ...cells.map((c, i) => (header || i > 0 ? el('td', {}, c) : el('th', {}, c))))));
}

function breakdownTable(view: PlanView): HTMLTableElement {
  const bars = view.bars;
  const rows = BREAKDOWN_PARTS.map((part) => [part.label, ...bars.map((b) => (b.breakdown ? seconds(b.breakdown[part.key]) : '-'))]);
  rows.push(['iteration', ...bars.map((b) => (b.iterationTimeS === undefined ? 'no plan fits' : seconds(b.iterationTimeS)))]);
  rows.push(['ours is faster by', ...bars.map((b, i) => (i === 0 || b.iterationTimeS === undefined ? '' : `${(b.iterationTimeS / view.iterationTimeS).toFixed(2)}x`))]);
  return table(rows, ['part', ...bars.map((b) => b.name)], 'breakdown-table');
}

function downloads(view: PlanView, name: string): HTMLElement {
  const button = (label: string, testid: string, file: string, text: () => string, type?: string) => {
    const b = el('button', { type: 'button', 'data-testid': testid }, label);
    b.addEventListener('click', () => download(file, text(), type));
    return b;
  };
  return el('p', { class: 'downloads' },
    button('plan JSON', 'download-plan', `${name}.plan.json`, () => `${JSON.stringify(view.planJson, null, 2)}\n`),
    button('Megatron-LM arguments', 'download-megatron', `${name}.megatron.txt`, () => view.exports.megatron, 'text/plain'),
    button('torchtitan config', 'download-torchtitan', `${name}.torchtitan.toml`, () => view.exports.torchtitan, 'text/plain'));
}

/** The plan's numbers in the status bar's hooks (iteration time, gap, bound). */
export function showNumbers(root: HTMLElement, values: { readonly iterationTimeS?: number; readonly boundS?: number; readonly gap?: number }): void {
  const set = (testid: string, text: string, data?: number) => {
    const node = root.querySelector<HTMLElement>(`[data-testid="${testid}"]`)!;
    node.textContent = text;
    if (data === undefined) delete node.dataset['value'];
    else node.dataset['value'] = String(data);
  };
  set('iteration-time', values.iterationTimeS === undefined ? '-' : values.iterationTimeS.toFixed(4), values.iterationTimeS);
  set('bound', values.boundS === undefined ? '-' : values.boundS.toFixed(4), values.boundS);
  set('gap', values.gap === undefined || !Number.isFinite(values.gap) ? '-' : `${(100 * values.gap).toFixed(2)}%`, values.gap);
}

export function renderPlan(root: HTMLElement, view: PlanView, name: string): void {
  const parts: HTMLElement[] = [
    el('section', {}, el('h2', {}, 'Plan'), table(view.summary.map((r) => [r.label, r.value]), undefined, 'plan-summary'), downloads(view, name)),
    el('section', {}, el('h2', {}, 'Iteration time beside the baselines'),
      el('p', { class: 'note' }, 'Bars: the critical path of each plan, split by cause. Baselines: DP across sites with whole replicas per site (production), and pipeline stages split across sites (pp-across), both with default network settings.'),
      svgBox(view.breakdownSvg, 'drawing fit'), breakdownTable(view)),
    el('section', {}, el('h2', {}, 'Pipeline timeline (one iteration)'),
      view.timelineSvg ? svgBox(view.timelineSvg, 'drawing fit') : el('p', { class: 'note' }, view.timelineNote ?? 'no timeline')),
    el('section', {}, el('h2', {}, 'Site map'), svgBox(view.siteMapSvg, 'drawing fit'),
      view.links.length > 0 ? table(view.links.map((l) => [l.label, l.gbps.toLocaleString('en-US'), l.rttMs.toFixed(2), `${(100 * l.utilization).toFixed(1)}%`]), ['link', 'Gb/s', 'RTT ms', 'utilisation'], 'link-table') : ''),
    el('section', {}, el('h2', {}, 'Network settings'),
      view.network.length > 0 ? table(view.network.map((n) => [n.between, n.settings]), ['link', 'settings'], 'network-table') : el('p', { class: 'note' }, 'One site: no cross-site link to set.')),
    el('section', {}, el('details', {}, el('summary', {}, 'Plan JSON (as plan --json prints it)'), el('pre', { 'data-testid': 'plan-json' }, JSON.stringify(view.planJson, null, 2)))),
  ];
  root.replaceChildren(...parts);
}

/** No plan: the conflicting requirements, each verified fix with a button that applies it. */
export function renderDiagnosis(root: HTMLElement, view: DiagnosisView, apply: (fix: FixView) => void): void {
  const title = view.status === 'infeasible' ? 'Why no plan fits' : 'No plan found';
  const several = view.conflictSets > 1;
  const items = view.conflicts.map((c) => el('li', { class: 'conflict' },
    several && c.set > 0 ? `conflict ${c.set}, ` : '', el('strong', {}, c.constraint), `: ${c.detail}`,
    c.fixes.length === 0 ? el('p', { class: 'note' }, 'no change to this requirement alone makes a plan fit') : el('ul', {}, ...c.fixes.map((fix) => {
      const button = el('button', { type: 'button', 'data-testid': 'apply-fix', 'data-path': fix.path }, 'apply');
      button.addEventListener('click', () => apply(fix));
      return el('li', { class: 'fix' }, button, ` ${fix.change} (verified: a plan then takes ${seconds(fix.verifiedIterationTimeS)})`);
    }))));
  const intro = several
    ? `${view.conflictSets} independent conflicts: a plan fits once one requirement of each is relaxed. Each fix below was verified with the other conflicts' requirements dropped, so applied alone it leaves them; "together" applies the smallest fix of each, verified.`
    : view.conflicts.length > 0 ? 'Relaxing any one of these requirements as shown makes a plan fit (each fix verified by a re-solve).' : '';
  root.replaceChildren(el('section', { id: 'diagnosis' }, el('h2', {}, title), intro ? el('p', {}, intro) : '',
    items.length > 0 ? el('ul', {}, ...items) : '',
    view.reasons.length > 0 ? el('details', {}, el('summary', {}, "The planner's reasons"), el('ul', {}, ...view.reasons.map((r) => el('li', {}, r)))) : ''));
}
