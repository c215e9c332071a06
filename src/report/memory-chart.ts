/** Memory per GPU at each site against the site's GPU capacity. */
import type { SiteUsage } from '../model/evaluate';
import { escapeHtml, px } from './html-escape';

export function memoryChartSvg(sites: readonly SiteUsage[]): string {
  const width = 960;
  const labelWidth = 150;
  const barHeight = 22;
  const gap = 14;
  const plotWidth = width - labelWidth - 290;
  const maxGiB = Math.max(1, ...sites.map((s) => Math.max(s.memoryInterval.highGiB, s.memoryCapacityGiB)));
  const height = sites.length * (barHeight + gap) + 10;
  const rows = sites.map((site, i) => {
    const y = i * (barHeight + gap);
    const used = (site.memoryGiBPerGpu / maxGiB) * plotWidth;
    const capacity = (site.memoryCapacityGiB / maxGiB) * plotWidth;
    const over = site.memoryGiBPerGpu > site.memoryCapacityGiB;
    const label = site.gpusUsed === 0 ? 'idle' : `${site.memoryGiBPerGpu.toFixed(1)} of ${site.memoryCapacityGiB} GiB (${site.gpuType})${site.mayNotFit ? ', may not fit' : ''}`;
    const low = (site.memoryInterval.lowGiB / maxGiB) * plotWidth;
    const high = (site.memoryInterval.highGiB / maxGiB) * plotWidth;
    const whisker = site.gpusUsed === 0 ? '' : `<line class="memory-interval" x1="${px(labelWidth + low)}" x2="${px(labelWidth + high)}" y1="${y + barHeight / 2}" y2="${y + barHeight / 2}" stroke="#666" stroke-width="2"/>`;
    return `<g class="memory-site" data-site="${escapeHtml(site.site)}" data-used-gib="${site.memoryGiBPerGpu.toFixed(2)}" data-capacity-gib="${site.memoryCapacityGiB}" data-may-not-fit="${site.mayNotFit}">`
      + `<text x="${labelWidth - 8}" y="${y + barHeight / 2 + 5}" text-anchor="end">${escapeHtml(site.site)}</text>`
      + `<rect class="memory-capacity" x="${labelWidth}" y="${y}" width="${px(capacity)}" height="${barHeight}" fill="#eee" stroke="#888"/>`
      + `<rect class="memory-used" x="${labelWidth}" y="${y + 3}" width="${px(used)}" height="${barHeight - 6}" fill="${over ? '#e15759' : '#4e79a7'}"/>`
      + whisker
      + `<line x1="${px(labelWidth + capacity)}" x2="${px(labelWidth + capacity)}" y1="${y - 3}" y2="${y + barHeight + 3}" stroke="#000" stroke-width="2"/>`
      + `<text x="${px(labelWidth + Math.max(used, capacity, site.gpusUsed === 0 ? 0 : high) + 8)}" y="${y + barHeight / 2 + 5}">${escapeHtml(label)}</text></g>`;
  });
  return `<svg id="memory-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-sites="${sites.length}">${rows.join('')}</svg>`;
}
