/**
 * The sweep: one link's bandwidth or one site's GPU count across a range, planned point by point
 * in a worker of its own; iteration time plotted, and each point where the best plan changes shape
 * marked.
 */
import { el } from './dom';
import type { FromWorker, SweepPoint } from './protocol';

type Spec = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- edited JSON

/** Seconds each sweep point may plan for. */
const POINT_TIME_LIMIT_S = 3;
const POINTS = 7;

let sweepWorker: Worker | undefined;

/** The numbers a sweep can vary: each link's bandwidth and each site's GPU count. */
function targets(spec: Spec): { readonly path: string; readonly label: string; readonly value: number }[] {
  const list = (value: unknown): Spec[] => (Array.isArray(value) ? value : []);
  const links = list(spec?.cluster?.links).map((l: Spec, i: number) => ({ path: `cluster.links[${i}].bandwidthGbps`, label: `link ${Array.isArray(l?.between) ? l.between.join('-') : i}: Gb/s`, value: Number(l?.bandwidthGbps) }));
  const sites = list(spec?.cluster?.sites).map((s: Spec, i: number) => ({ path: `cluster.sites[${i}].gpus`, label: `site ${s?.name}: GPUs`, value: Number(s?.gpus) }));
  return [...links, ...sites].filter((t) => Number.isFinite(t.value) && t.value > 0);
}

/** Values from `value / 8` to `value * 8` (bandwidth: geometric; GPUs: whole numbers, rounded to nodes of 8). */
function range(path: string, value: number): number[] {
  const values = Array.from({ length: POINTS }, (_, k) => value * 2 ** (k - (POINTS - 1) / 2));
  return path.endsWith('.gpus') ? [...new Set(values.map((v) => Math.max(8, Math.round(v / 8) * 8)))] : values.map((v) => +v.toPrecision(4));
}

/** An SVG of iteration time against the swept value (log x), shape changes marked. */
function chart(points: readonly SweepPoint[], label: string): string {
  const planned = points.filter((p) => p.iterationTimeS !== undefined);
  const W = 600, H = 220, L = 60, R = 40, T = 12, B = 40;
  if (planned.length === 0) return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><text x="${L}" y="${H / 2}">no plan at any point yet</text></svg>`;
  const xs = points.map((p) => Math.log(p.value));
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const ys = planned.map((p) => p.iterationTimeS!);
  // The axis spans the times swept (not from zero), so that small differences show.
  const lo = Math.min(...ys), hi = Math.max(...ys);
  const pad = Math.max((hi - lo) * 0.1, hi * 0.005);
  const y0 = lo - pad, y1 = hi + pad;
  const x = (v: number) => L + (x1 === x0 ? 0.5 : (Math.log(v) - x0) / (x1 - x0)) * (W - L - R);
  const y = (s: number) => T + (1 - (s - y0) / (y1 - y0)) * (H - T - B);
  const path = planned.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.value).toFixed(1)},${y(p.iterationTimeS!).toFixed(1)}`).join(' ');
  const marks = planned.map((p, i) => {
    const changed = i > 0 && p.shape !== planned[i - 1]!.shape;
    return `<circle cx="${x(p.value).toFixed(1)}" cy="${y(p.iterationTimeS!).toFixed(1)}" r="${changed ? 6 : 3.5}" fill="${changed ? '#e15759' : '#4e79a7'}"><title>${p.value}: ${p.iterationTimeS!.toFixed(3)} s, ${escape(p.shape ?? '')}</title></circle>`;
  }).join('');
  const ticks = points.map((p) => `<text x="${x(p.value).toFixed(1)}" y="${H - B + 16}" text-anchor="middle" class="small">${p.value.toLocaleString('en-US')}</text>`).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="iteration time across the sweep">
<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#888"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#888"/>
<text x="${L - 6}" y="${y(hi) + 4}" text-anchor="end" class="small">${hi.toFixed(3)} s</text><text x="${L - 6}" y="${y(lo) + 4}" text-anchor="end" class="small">${lo.toFixed(3)} s</text>
${ticks}<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle">${escape(label)}</text>
<path d="${path}" fill="none" stroke="#4e79a7" stroke-width="2"/>${marks}</svg>`;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Sets up the sweep control in `root`; returns the function that refreshes its choices after the scenario changes. */
export function startSweep(root: HTMLElement, currentSpec: () => Spec, highsModule: () => Promise<WebAssembly.Module>, calibrationProfile: (spec: Spec) => unknown): () => void {
  const select = el('select', { 'data-testid': 'sweep-target' });
  const button = el('button', { type: 'button', 'data-testid': 'sweep-run' }, 'sweep');
  const plot = el('div', { class: 'drawing' });
  const list = el('ol', { class: 'sweep-points' });
  // The choices follow the scenario; the one chosen stays chosen while it exists.
  const refresh = () => {
    const chosen = select.value;
    const options = targets(currentSpec());
    select.replaceChildren(...options.map((t) => el('option', { value: t.path }, `${t.label} (now ${t.value.toLocaleString('en-US')})`)));
    if (options.some((t) => t.path === chosen)) select.value = chosen;
  };
  refresh();
  button.addEventListener('click', () => {
    refresh();
    const spec = currentSpec();
    const target = targets(spec).find((t) => t.path === select.value) ?? targets(spec)[0];
    if (!target) return;
    sweepWorker?.terminate();
    const worker = new Worker('worker.js');
    sweepWorker = worker;
    const points: SweepPoint[] = [];
    list.replaceChildren();
    plot.innerHTML = chart(points, target.label);
    worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const message = event.data;
      if (message.type !== 'sweep-point') return;
      points.push(message.point);
      const previous = points.filter((p) => p.shape !== undefined).slice(-2);
      const changed = message.point.shape !== undefined && previous.length === 2 && previous[0]!.shape !== previous[1]!.shape;
      list.append(el('li', { class: changed ? 'changed' : '' }, `${message.point.value.toLocaleString('en-US')}: `,
        message.point.iterationTimeS === undefined ? `no plan (${message.point.issue ?? 'none found'})` : `${message.point.iterationTimeS.toFixed(3)} s, ${message.point.shape}${changed ? ' (new shape)' : ''}`));
      plot.innerHTML = chart(points, target.label);
      if (message.done) worker.terminate();
    };
    void highsModule().then((module) => worker.postMessage({ type: 'sweep', spec, highsModule: module, path: target.path, values: range(target.path, target.value), timeLimitS: POINT_TIME_LIMIT_S, calibrationProfile: calibrationProfile(spec) }));
  });
  root.append(el('p', {}, 'Vary ', select, ' from 1/8 to 8 times its value: ', button), plot, list);
  return refresh;
}
