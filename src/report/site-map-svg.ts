/**
 * The site map: sites as boxes with their GPU counts and what each hosts (stages, replicas),
 * links as edges labelled with bandwidth, RTT and predicted utilisation.
 */
import type { Prediction } from '../model/evaluate';
import type { Scenario } from '../model/scenario';
import { bytesPerSToGbps } from '../model/units';
import { escapeHtml, formatPercent, px } from './html-escape';
import { hostedSummary } from './site-summary';

export function siteMapSvg(scenario: Scenario, predicted: Prediction | undefined): string {
  const n = scenario.sites.length;
  const boxWidth = 240;
  const boxHeight = 96;
  const width = 960;
  // Up to three sites in a row; more on an ellipse.
  const row = n <= 3;
  const height = row ? 300 : 560;
  const centers = scenario.sites.map((_, i) => {
    if (row) return { x: n === 1 ? width / 2 : 150 + (i * (width - 300)) / (n - 1), y: 150 };
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return { x: width / 2 + 340 * Math.cos(angle), y: height / 2 + 200 * Math.sin(angle) };
  });
  const links = scenario.links.map((link, i) => {
    const a = centers[link.siteA]!;
    const b = centers[link.siteB]!;
    // Bend edges between sites that are not neighbours in a row, so they do not run through a box.
    const bend = row && Math.abs(link.siteA - link.siteB) > 1 ? 110 : 0;
    const mx = (a.x + b.x) / 2;
    const my = (a.y + b.y) / 2 - bend * 2;
    const labelY = bend > 0 ? (a.y + b.y) / 2 - bend - 8 : my - 8;
    const usage = predicted?.links[i];
    const utilisation = usage ? formatPercent(usage.utilization) : 'n/a';
    const gbps = bytesPerSToGbps(link.bandwidthBytesPerS);
    const rttMs = link.rttS * 1000;
    const strokeWidth = 2 + Math.min(10, 10 * (usage?.utilization ?? 0));
    const label = `${gbps.toLocaleString('en-US', { maximumFractionDigits: 1 })} Gb/s · RTT ${rttMs.toFixed(2)} ms · ${utilisation} busy`;
    return `<g class="link" data-link="${escapeHtml(link.label)}" data-bandwidth-gbps="${gbps}" data-rtt-ms="${rttMs}" data-utilization="${usage ? usage.utilization.toFixed(4) : ''}">`
      + `<path d="M ${px(a.x)} ${px(a.y)} Q ${px(mx)} ${px(my)} ${px(b.x)} ${px(b.y)}" fill="none" stroke="#e15759" stroke-width="${px(strokeWidth)}" stroke-opacity="0.75"/>`
      + `<text class="link-label" x="${px((a.x + b.x) / 2)}" y="${px(labelY)}" text-anchor="middle">${escapeHtml(label)}</text>`
      + `<title>${escapeHtml(`${link.label}: ${label}`)}</title></g>`;
  });
  const boxes = scenario.sites.map((site, i) => {
    const c = centers[i]!;
    const usage = predicted?.sites[i];
    const used = usage ? `${usage.gpusUsed.toLocaleString('en-US')} used, ${usage.gpusIdle.toLocaleString('en-US')} idle` : '';
    const hosted = usage ? hostedSummary(usage) : '';
    const x = c.x - boxWidth / 2;
    const y = c.y - boxHeight / 2;
    return `<g class="site" data-site="${escapeHtml(site.name)}" data-gpus="${site.gpus}" data-gpus-used="${usage?.gpusUsed ?? 0}" data-stages-hosted="${usage?.stages.length ?? 0}">`
      + `<rect x="${px(x)}" y="${px(y)}" width="${boxWidth}" height="${boxHeight}" rx="10" fill="#f4f7fb" stroke="#4e79a7" stroke-width="2"/>`
      + `<text x="${px(c.x)}" y="${px(y + 22)}" text-anchor="middle" font-weight="bold">${escapeHtml(site.name)}</text>`
      + `<text x="${px(c.x)}" y="${px(y + 42)}" text-anchor="middle">${escapeHtml(`${site.gpus.toLocaleString('en-US')} x ${site.gpu.name}`)}</text>`
      + `<text x="${px(c.x)}" y="${px(y + 62)}" text-anchor="middle" class="small">${escapeHtml(used)}</text>`
      + `<text x="${px(c.x)}" y="${px(y + 82)}" text-anchor="middle" class="small">${escapeHtml(hosted)}</text></g>`;
  });
  return `<svg id="site-map" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-sites="${n}" data-links="${scenario.links.length}">${links.join('')}${boxes.join('')}</svg>`;
}
