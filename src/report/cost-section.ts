/**
 * The report's cost section (docs/cost-model.md §8), for a priced scenario: the GPUs paid for per
 * site at their prices, the egress of each link in each direction, and the run's days and dollars.
 */
import { linkBytesPerIteration } from '../model/link-traffic';
import { gpusPaidPerSite, idleGpusReleased, planCost, pricesOf } from '../model/prices';
import { escapeHtml } from './html-escape';
import type { ReportData } from './report-data';

/** `$1,234`, `$12.35`, `$0.0123`. */
export const usd = (x: number): string => (x >= 100 ? `$${Math.round(x).toLocaleString('en-US')}` : x >= 1 ? `$${x.toFixed(2)}` : `$${x.toPrecision(3)}`);
const gb = (bytes: number): string => (bytes / 1e9).toFixed(1);

/** The section's HTML, or '' when the scenario has no prices or there is no plan. */
export function costSection(data: ReportData): string {
  const prices = pricesOf(data.scenario);
  if (!prices || !data.layout || !data.evaluation) return '';
  const { scenario, layout, evaluation } = data;
  const cost = planCost(scenario, layout, evaluation)!;
  const paid = gpusPaidPerSite(scenario, evaluation.predicted.sites.map((s) => s.gpusUsed));
  const siteRows = scenario.sites.map((site, s) => `<tr><td>${escapeHtml(site.name)}</td><td class="num">${paid[s]!.toLocaleString('en-US')}</td><td class="num">${usd(prices.gpuHourUsd[s]!)}</td><td class="num">${usd(paid[s]! * prices.gpuHourUsd[s]!)}</td></tr>`);
  const bytes = linkBytesPerIteration(scenario, layout);
  const linkRows = scenario.links.map((link, i) => {
    const [a, b] = [scenario.sites[link.siteA]!.name, scenario.sites[link.siteB]!.name];
    const traffic = bytes[i]!;
    const egress = ((traffic.aToBBytes + traffic.bToABytes) / 1e9) * prices.egressUsdPerGB[i]!;
    return `<tr><td>${escapeHtml(`${a} -> ${b}`)}</td><td class="num">${gb(traffic.aToBBytes)}</td><td>${escapeHtml(`${b} -> ${a}`)}</td><td class="num">${gb(traffic.bToABytes)}</td><td class="num">${usd(prices.egressUsdPerGB[i]!)}</td><td class="num">${usd(egress)}</td></tr>`;
  });
  const run = cost.iterations === null
    ? '<p class="note">Give training.totalTokens for the days and dollars of the whole run.</p>'
    : `<p id="training-run" data-training-days="${cost.trainingDays}" data-training-usd="${cost.trainingUsd}">The run: ${cost.iterations.toLocaleString('en-US')} iterations, <strong>${cost.trainingDays!.toFixed(1)} days</strong> and <strong>${usd(cost.trainingUsd!)}</strong>, of which egress ${usd(cost.egressUsd!)}.</p>`;
  const convention = idleGpusReleased(scenario) ? 'GPUs the plan leaves idle are released and not paid for' : 'search.allowIdleGpus is false: every GPU is paid for';
  return `<section id="cost"><h2>Cost</h2><p id="cost-summary" data-usd-per-hour="${cost.usdPerHour}" data-usd-per-iteration="${cost.usdPerIteration}">${usd(cost.usdPerHour)} per hour for ${cost.gpusPaid.toLocaleString('en-US')} GPUs (${convention}); ${usd(cost.usdPerIteration)} per iteration, of which egress ${usd(cost.egressUsdPerIteration)}.</p>${run}`
    + `<div class="tables"><table id="cost-sites"><tr><th>site</th><th>GPUs paid</th><th>$ per GPU-hour</th><th>$ per hour</th></tr>${siteRows.join('')}</table>`
    + (linkRows.length > 0 ? `<table id="cost-links"><tr><th>direction</th><th>GB per iteration</th><th>direction</th><th>GB per iteration</th><th>$ per GB</th><th>egress $ per iteration</th></tr>${linkRows.join('')}</table>` : '')
    + '</div></section>';
}
