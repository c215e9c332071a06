/**
 * The report's GPU-budget frontier (`report --pareto`, docs/formulation.md §10): an inline SVG
 * chart of the fastest plan's iteration time and the proven lower bound against the GPU budget
 * (log2 scale), with a table of the points beside it. Pure: frontier points in, HTML out.
 */
import type { FrontierPoint } from '../solve/pareto';
import { usd } from './cost-section';
import { escapeHtml, formatSeconds, px } from './html-escape';

const WIDTH = 540;
const HEIGHT = 360;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 56 };
const PLAN_COLOR = '#4e79a7';
const BOUND_COLOR = '#f28e2b';
const NO_PLAN_COLOR = '#e15759';
/** Closest two x labels may sit, in pixels; closer labels are left out (their ticks stay). */
const MIN_LABEL_SPACING_PX = 44;

const count = (n: number): string => n.toLocaleString('en-US');
const axisNumber = (x: number): string => String(Number(x.toPrecision(4)));

/** Round tick values from 0 to at least `max`. */
function linearTicks(max: number, target = 5): number[] {
  const raw = max / target;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let i = 0; ticks.length === 0 || ticks[ticks.length - 1]! < max; i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

/** 1, 2, 5 x 10^k from at most `min` to at least `max`. */
function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let k = Math.floor(Math.log10(min)); ticks.length === 0 || ticks[ticks.length - 1]! < max; k++) {
    for (const m of [1, 2, 5]) ticks.push(Number((m * 10 ** k).toPrecision(12)));
  }
  const first = ticks.findIndex((t, i) => ticks[i + 1]! > min);
  const last = ticks.findIndex((t) => t >= max);
  return ticks.slice(first, last + 1);
}

/** The y axis: linear from 0, or logarithmic when the times span 10x or more (a small budget is far slower). */
function timeAxis(values: readonly number[]): { readonly ticks: readonly number[]; readonly log: boolean; readonly fraction: (s: number) => number } {
  const min = Math.min(...values);
  const max = Math.max(...values);
  if (values.length > 0 && min > 0 && max / min >= 10) {
    const ticks = logTicks(min, max);
    const [lo, hi] = [Math.log(ticks[0]!), Math.log(ticks[ticks.length - 1]!)];
    return { ticks, log: true, fraction: (s) => (Math.log(s) - lo) / (hi - lo) };
  }
  const ticks = linearTicks(max > 0 ? max * 1.05 : 1);
  const top = ticks[ticks.length - 1]!;
  return { ticks, log: false, fraction: (s) => s / top };
}

/** The chart: x the GPU budget on a log2 scale, y the iteration time in seconds (see timeAxis). */
export function frontierChartSvg(points: readonly FrontierPoint[]): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const budgets = points.map((p) => p.gpus);
  const minLog2 = Math.log2(Math.min(...budgets));
  const maxLog2 = Math.log2(Math.max(...budgets));
  // A little room either side so the end points sit off the axes.
  const padLog2 = Math.max(0.25, (maxLog2 - minLog2) * 0.04);
  const xOf = (gpus: number): number => MARGIN.left + ((Math.log2(gpus) - minLog2 + padLog2) / (maxLog2 - minLog2 + 2 * padLog2)) * plotW;
  const finite = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x);
  const axis = timeAxis([...points.map((p) => p.iterationTimeS).filter(finite), ...points.map((p) => p.lowerBoundS).filter((s) => finite(s) && s > 0)]);
  const yTicks = axis.ticks;
  const yOf = (s: number): number => MARGIN.top + plotH - axis.fraction(s) * plotH;
  // A zero bound has no place on a log axis.
  const drawable = (s: number | undefined): s is number => finite(s) && (s > 0 || !axis.log);
  const bottom = MARGIN.top + plotH;

  const out: string[] = [];
  // Grid, y ticks and axes.
  for (const t of yTicks) {
    const y = px(yOf(t));
    out.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + plotW}" y2="${y}" stroke="#e6e6e6"/>`);
    out.push(`<text class="small" x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${axisNumber(t)}</text>`);
  }
  let lastLabelX = -Infinity;
  for (const gpus of budgets) {
    const x = xOf(gpus);
    out.push(`<line x1="${px(x)}" y1="${bottom}" x2="${px(x)}" y2="${bottom + 5}" stroke="#222"/>`);
    if (x - lastLabelX >= MIN_LABEL_SPACING_PX) {
      out.push(`<text class="small" x="${px(x)}" y="${bottom + 18}" text-anchor="middle">${count(gpus)}</text>`);
      lastLabelX = x;
    }
  }
  out.push(`<line x1="${MARGIN.left}" y1="${bottom}" x2="${MARGIN.left + plotW}" y2="${bottom}" stroke="#222"/>`);
  out.push(`<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${bottom}" stroke="#222"/>`);
  out.push(`<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 14}" text-anchor="middle">GPUs at most (log2 scale)</text>`);
  out.push(`<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">iteration time (s${axis.log ? ', log scale' : ''})</text>`);

  // The plan's line, then the bound's dashes over it (where the gap is small the two meet).
  const line = (values: readonly { gpus: number; s: number | undefined }[], attributes: string): void => {
    let run: string[] = [];
    const flush = (): void => {
      if (run.length > 1) out.push(`<polyline fill="none" ${attributes} points="${run.join(' ')}"/>`);
      run = [];
    };
    for (const v of values) {
      if (!drawable(v.s)) { flush(); continue; }
      run.push(`${px(xOf(v.gpus))},${px(yOf(v.s))}`);
    }
    flush();
  };
  line(points.map((p) => ({ gpus: p.gpus, s: p.iterationTimeS })), `stroke="${PLAN_COLOR}" stroke-width="2"`);
  line(points.map((p) => ({ gpus: p.gpus, s: p.lowerBoundS })), `stroke="${BOUND_COLOR}" stroke-width="1.5" stroke-dasharray="5 4"`);
  for (const p of points) {
    const x = px(xOf(p.gpus));
    if (finite(p.iterationTimeS)) {
      out.push(`<circle class="frontier-plan" data-gpus="${p.gpus}" data-iteration-s="${p.iterationTimeS}" cx="${x}" cy="${px(yOf(p.iterationTimeS))}" r="4" fill="${PLAN_COLOR}"><title>${escapeHtml(`at most ${count(p.gpus)} GPUs: ${formatSeconds(p.iterationTimeS)} on ${count(p.gpusUsed ?? p.gpus)} GPUs (${p.status})`)}</title></circle>`);
    } else {
      // No plan within this budget: a cross on the x axis.
      out.push(`<path class="frontier-no-plan" data-gpus="${p.gpus}" d="M${px(xOf(p.gpus) - 5)},${bottom - 5} L${px(xOf(p.gpus) + 5)},${bottom + 5} M${px(xOf(p.gpus) - 5)},${bottom + 5} L${px(xOf(p.gpus) + 5)},${bottom - 5}" stroke="${NO_PLAN_COLOR}" stroke-width="2"><title>${escapeHtml(`at most ${count(p.gpus)} GPUs: ${p.status}; ${p.reasons.join('; ')}`)}</title></path>`);
    }
  }
  // The bound's hollow squares over the plan's dots: where the gap is small they ring them.
  for (const p of points) {
    if (!drawable(p.lowerBoundS)) continue;
    out.push(`<rect class="frontier-bound" data-gpus="${p.gpus}" data-bound-s="${p.lowerBoundS}" x="${px(xOf(p.gpus) - 5)}" y="${px(yOf(p.lowerBoundS) - 5)}" width="10" height="10" fill="none" stroke="${BOUND_COLOR}" stroke-width="1.5"><title>${escapeHtml(`at most ${count(p.gpus)} GPUs: every plan takes at least ${formatSeconds(p.lowerBoundS)}`)}</title></rect>`);
  }
  // Legend, top right inside the plot (the frontier falls to the right, so that corner is empty).
  const lx = MARGIN.left + plotW - 190;
  const ly = MARGIN.top + 10;
  out.push(`<rect x="${lx - 8}" y="${ly - 10}" width="196" height="${points.some((p) => !finite(p.iterationTimeS)) ? 62 : 44}" fill="#fff" stroke="#ddd"/>`);
  out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 22}" y2="${ly}" stroke="${PLAN_COLOR}" stroke-width="2"/><circle cx="${lx + 11}" cy="${ly}" r="4" fill="${PLAN_COLOR}"/><text x="${lx + 30}" y="${ly}" dominant-baseline="middle">fastest plan found</text>`);
  out.push(`<line x1="${lx}" y1="${ly + 18}" x2="${lx + 22}" y2="${ly + 18}" stroke="${BOUND_COLOR}" stroke-width="1.5" stroke-dasharray="5 4"/><rect x="${lx + 6}" y="${ly + 13}" width="10" height="10" fill="none" stroke="${BOUND_COLOR}" stroke-width="1.5"/><text x="${lx + 30}" y="${ly + 18}" dominant-baseline="middle">proven lower bound</text>`);
  if (points.some((p) => !finite(p.iterationTimeS))) {
    out.push(`<path d="M${lx + 6},${ly + 31} L${lx + 16},${ly + 41} M${lx + 6},${ly + 41} L${lx + 16},${ly + 31}" stroke="${NO_PLAN_COLOR}" stroke-width="2"/><text x="${lx + 30}" y="${ly + 36}" dominant-baseline="middle">no plan within the budget</text>`);
  }
  return `<svg id="frontier-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" data-points="${points.length}">${out.join('')}</svg>`;
}

function frontierTable(points: readonly FrontierPoint[]): string {
  const priced = points.some((p) => p.usdPerHour !== undefined);
  const cell = (text: string): string => `<td class="num" style="white-space: nowrap">${text}</td>`;
  const rows = points.map((p) => {
    const time = p.iterationTimeS === undefined ? '-' : p.iterationTimeS.toFixed(3);
    const bound = Number.isFinite(p.lowerBoundS) ? p.lowerBoundS.toFixed(3) : 'none fits';
    const gap = p.gap === undefined ? '-' : `${(100 * p.gap).toFixed(2)}%`;
    return `<tr class="frontier-point" data-gpus="${p.gpus}">${cell(count(p.gpus))}${cell(p.gpusUsed === undefined ? '-' : count(p.gpusUsed))}${priced ? cell(p.usdPerHour === undefined ? '-' : usd(p.usdPerHour)) : ''}${cell(time)}${cell(bound)}${cell(gap)}</tr>`;
  });
  return `<table id="frontier-table"><tr><th>GPUs at most</th><th>used</th>${priced ? '<th>$ per hour</th>' : ''}<th>iteration s</th><th>bound s</th><th>gap</th></tr>${rows.join('')}</table>`;
}

/** The section's HTML, or '' without points. */
export function frontierSection(points: readonly FrontierPoint[] | undefined): string {
  if (!points || points.length === 0) return '';
  const speedups: string[] = [];
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1]!, points[i]!];
    if (a.iterationTimeS !== undefined && b.iterationTimeS !== undefined) speedups.push(`${count(a.gpus)} → ${count(b.gpus)} ${(a.iterationTimeS / b.iterationTimeS).toFixed(2)}x`);
  }
  const intro = 'For each GPU budget, the fastest plan using at most that many GPUs (line) and a proven lower bound on every plan that does (dashed). Each budget starts from the smaller one\'s plan, so more GPUs are never slower; a budget\'s bound holds for every smaller budget too.';
  return `<section id="frontier"><h2>GPU-budget frontier</h2><p>${escapeHtml(intro)}</p><div class="tables" style="align-items: flex-start">${frontierChartSvg(points)}${frontierTable(points)}</div>`
    + (speedups.length > 0 ? `<p id="frontier-speedups">Speedup per step: ${escapeHtml(speedups.join(', '))}.</p>` : '')
    + '</section>';
}
