/**
 * Self-contained SVG line charts of a sweep: iteration time against one swept axis, one line
 * per combination of the other axes, scenarios without a plan (infeasible, unknown, failed)
 * marked with a red cross on the x axis. Numeric axes are placed by value (log scale when
 * they span 10x or more), others as categories in sweep order.
 */
import type { BatchRecord } from './record';

const WIDTH = 760;
const HEIGHT = 440;
const MARGIN = { left: 72, right: 220, top: 44, bottom: 64 };
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#d62728'];
const MAX_LEGEND = 12;

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

type AxisValue = string | number | boolean;

function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let i = 0; ticks.length === 0 || ticks[ticks.length - 1]! < max; i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

const formatNumber = (x: number): string => (Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(1) : String(Number(x.toPrecision(4))));

/** The chart of `records` (one sweep's) against `axis`; `title` heads it. */
export function sweepChartSvg(records: readonly BatchRecord[], axis: string, title: string): string {
  const points = records
    .filter((r) => r.source.kind === 'sweep' && axis in r.source.axes)
    .map((r) => {
      const axes = (r.source as Extract<BatchRecord['source'], { kind: 'sweep' }>).axes;
      const others = Object.entries(axes).filter(([path]) => path !== axis).map(([path, v]) => `${path}=${v}`).join(', ');
      return { x: axes[axis]!, y: r.iterationTimeS, series: others, order: (r.source as { pointIndex: number }).pointIndex, status: r.status };
    })
    .sort((a, b) => a.order - b.order);

  const xs: AxisValue[] = [];
  for (const p of points) if (!xs.includes(p.x)) xs.push(p.x);
  const numeric = xs.length > 0 && xs.every((x) => typeof x === 'number');
  const numbers = numeric ? (xs as number[]) : [];
  const minX = numeric ? Math.min(...numbers) : 0;
  const maxX = numeric ? Math.max(...numbers) : 0;
  const log = numeric && minX > 0 && maxX / minX >= 10;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const xOf = (x: AxisValue): number => {
    if (!numeric) return MARGIN.left + (xs.length === 1 ? plotW / 2 : (plotW * xs.indexOf(x)) / (xs.length - 1));
    if (maxX === minX) return MARGIN.left + plotW / 2;
    const t = log ? (Math.log(x as number) - Math.log(minX)) / (Math.log(maxX) - Math.log(minX)) : ((x as number) - minX) / (maxX - minX);
    return MARGIN.left + t * plotW;
  };
  const maxY = Math.max(0, ...points.map((p) => p.y ?? 0));
  const yTicks = niceTicks(maxY > 0 ? maxY * 1.05 : 1);
  const topY = yTicks[yTicks.length - 1]!;
  const yOf = (y: number): number => MARGIN.top + plotH - (y / topY) * plotH;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`);
  out.push(`<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`);
  // Axes, grid and ticks.
  out.push(`<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="black"/>`);
  out.push(`<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="black"/>`);
  for (const t of yTicks) {
    const y = yOf(t).toFixed(1);
    out.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + plotW}" y2="${y}" stroke="#e0e0e0"/>`);
    out.push(`<text x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${formatNumber(t)}</text>`);
  }
  for (const x of xs) {
    const px = xOf(x).toFixed(1);
    out.push(`<line x1="${px}" y1="${MARGIN.top + plotH}" x2="${px}" y2="${MARGIN.top + plotH + 5}" stroke="black"/>`);
    out.push(`<text x="${px}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${escapeXml(typeof x === 'number' ? formatNumber(x) : String(x))}</text>`);
  }
  out.push(`<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 16}" text-anchor="middle">${escapeXml(axis)}${log ? ' (log scale)' : ''}</text>`);
  out.push(`<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">iteration time (s)</text>`);

  // One polyline per series (combination of the other axes), broken where a point has no plan.
  const seriesNames: string[] = [];
  for (const p of points) if (!seriesNames.includes(p.series)) seriesNames.push(p.series);
  seriesNames.forEach((name, i) => {
    const color = COLORS[i % COLORS.length]!;
    const mine = points.filter((p) => p.series === name).sort((a, b) => xOf(a.x) - xOf(b.x));
    let run: string[] = [];
    const flush = (): void => {
      if (run.length > 1) out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${run.join(' ')}"/>`);
      run = [];
    };
    for (const p of mine) {
      if (p.y === null) {
        flush();
        continue;
      }
      const px = xOf(p.x).toFixed(1);
      const py = yOf(p.y).toFixed(1);
      run.push(`${px},${py}`);
      out.push(`<circle cx="${px}" cy="${py}" r="3" fill="${color}"><title>${escapeXml(`${axis}=${p.x}${name ? `, ${name}` : ''}: ${p.y.toFixed(4)} s (${p.status})`)}</title></circle>`);
    }
    flush();
    if (i < MAX_LEGEND) {
      const ly = MARGIN.top + 8 + i * 18;
      out.push(`<line x1="${WIDTH - MARGIN.right + 14}" y1="${ly}" x2="${WIDTH - MARGIN.right + 34}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
      out.push(`<text x="${WIDTH - MARGIN.right + 40}" y="${ly}" dominant-baseline="middle">${escapeXml(name === '' ? 'all' : name.length > 28 ? `${name.slice(0, 27)}...` : name)}</text>`);
    }
  });
  if (seriesNames.length > MAX_LEGEND) {
    out.push(`<text x="${WIDTH - MARGIN.right + 14}" y="${MARGIN.top + 8 + MAX_LEGEND * 18}">+ ${seriesNames.length - MAX_LEGEND} more</text>`);
  }
  // Scenarios without a plan: a red cross on the x axis.
  const noPlan = points.filter((p) => p.y === null);
  for (const p of noPlan) {
    const px = xOf(p.x);
    const py = MARGIN.top + plotH;
    out.push(`<path d="M${(px - 5).toFixed(1)},${py - 5} L${(px + 5).toFixed(1)},${py + 5} M${(px - 5).toFixed(1)},${py + 5} L${(px + 5).toFixed(1)},${py - 5}" stroke="#d62728" stroke-width="2"><title>${escapeXml(`${axis}=${p.x}${p.series ? `, ${p.series}` : ''}: ${p.status}`)}</title></path>`);
  }
  if (noPlan.length > 0) {
    const ly = HEIGHT - MARGIN.bottom + 10;
    out.push(`<path d="M${WIDTH - MARGIN.right + 19},${ly - 5} L${WIDTH - MARGIN.right + 29},${ly + 5} M${WIDTH - MARGIN.right + 19},${ly + 5} L${WIDTH - MARGIN.right + 29},${ly - 5}" stroke="#d62728" stroke-width="2"/>`);
    out.push(`<text x="${WIDTH - MARGIN.right + 40}" y="${ly}" dominant-baseline="middle">no plan (${noPlan.length})</text>`);
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** A file-name-safe form of an axis path: `cluster.links[0].bandwidthGbps` -> `cluster.links-0.bandwidthGbps`. */
export function axisSlug(text: string): string {
  return text.replace(/\[(\d+)\]/g, '-$1').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'axis';
}
