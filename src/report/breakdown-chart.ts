/** The iteration-time breakdown as horizontal stacked bars: our plan beside each baseline. */
import type { Breakdown } from '../model/critical-group';
import { escapeHtml, formatSeconds, px } from './html-escape';

export interface BreakdownBar {
  readonly name: string;
  readonly iterationTimeS?: number;
  /** Undefined when the bar's plan is unknown (no plan fits its space). */
  readonly breakdown?: Breakdown;
}

export const BREAKDOWN_PARTS: readonly { readonly key: keyof Breakdown; readonly label: string; readonly color: string }[] = [
  { key: 'computeS', label: 'compute', color: '#4e79a7' },
  { key: 'tpExposedS', label: 'tensor-parallel comm', color: '#f28e2b' },
  { key: 'cpExposedS', label: 'context-parallel comm', color: '#edc948' },
  { key: 'epExposedS', label: 'expert all-to-all', color: '#b07aa1' },
  { key: 'ppExposedS', label: 'pipeline sends in-site', color: '#76b7b2' },
  { key: 'dpExposedS', label: 'gradient sync in-site', color: '#59a14f' },
  { key: 'bubbleS', label: 'pipeline bubble', color: '#bab0ac' },
  { key: 'crossSiteS', label: 'cross-site links', color: '#e15759' },
  { key: 'optimizerS', label: 'optimizer step', color: '#9c755f' },
];

export function breakdownChartSvg(bars: readonly BreakdownBar[]): string {
  const width = 960;
  const labelWidth = 150;
  const barHeight = 26;
  const gap = 12;
  const plotWidth = width - labelWidth - 120;
  const maxS = Math.max(1e-12, ...bars.map((b) => b.iterationTimeS ?? 0));
  const legendTop = bars.length * (barHeight + gap) + 10;
  const height = legendTop + 24 * Math.ceil(BREAKDOWN_PARTS.length / 4) + 10;
  const rows = bars.map((bar, i) => {
    const y = i * (barHeight + gap);
    const parts: string[] = [];
    if (bar.breakdown) {
      let x = labelWidth;
      for (const part of BREAKDOWN_PARTS) {
        const value = bar.breakdown[part.key];
        if (value <= 0) continue;
        const w = (value / maxS) * plotWidth;
        parts.push(`<rect class="segment" data-part="${part.key}" x="${px(x)}" y="${y}" width="${px(w)}" height="${barHeight}" fill="${part.color}"><title>${escapeHtml(`${bar.name}: ${part.label} ${formatSeconds(value)}`)}</title></rect>`);
        x += w;
      }
    } else if (bar.iterationTimeS !== undefined) {
      parts.push(`<rect class="segment" data-part="total" x="${labelWidth}" y="${y}" width="${px((bar.iterationTimeS / maxS) * plotWidth)}" height="${barHeight}" fill="#999"/>`);
    }
    const time = bar.iterationTimeS === undefined ? 'no plan fits' : formatSeconds(bar.iterationTimeS);
    const end = bar.iterationTimeS === undefined ? labelWidth : labelWidth + (bar.iterationTimeS / maxS) * plotWidth;
    return `<g class="bar" data-name="${escapeHtml(bar.name)}"><text x="${labelWidth - 8}" y="${y + barHeight / 2 + 5}" text-anchor="end">${escapeHtml(bar.name)}</text>${parts.join('')}<text x="${px(end + 6)}" y="${y + barHeight / 2 + 5}">${escapeHtml(time)}</text></g>`;
  });
  const legend = BREAKDOWN_PARTS.map((part, i) => {
    const x = labelWidth + (i % 4) * 190;
    const y = legendTop + Math.floor(i / 4) * 24;
    return `<g class="legend-item"><rect x="${x}" y="${y}" width="14" height="14" fill="${part.color}"/><text x="${x + 20}" y="${y + 12}">${escapeHtml(part.label)}</text></g>`;
  });
  return `<svg id="breakdown-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-bars="${bars.length}">${rows.join('')}${legend.join('')}</svg>`;
}
