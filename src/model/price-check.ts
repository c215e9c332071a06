/** The cross-field rule of prices in a scenario spec (docs/cost-model.md §8), as path-named issues. */
import type { ScenarioSpec } from './scenario-schema';
import type { InputIssue } from './validation-error';

/** Prices need every site's GPU-hour price: a site or link priced alone is an input error, named by path. */
export function checkPrices(spec: ScenarioSpec, issues: InputIssue[]): void {
  const sites = spec.cluster.sites;
  const priced = sites.findIndex((site) => site.gpuHourUsd !== undefined);
  const unpriced = sites.findIndex((site) => site.gpuHourUsd === undefined);
  if (priced >= 0 && unpriced >= 0) {
    issues.push({ path: `cluster.sites[${unpriced}].gpuHourUsd`, message: `is required when another site has a price (cluster.sites[${priced}].gpuHourUsd): give every site's price, or none` });
    return;
  }
  const egress = spec.cluster.links.findIndex((link) => link.egressUsdPerGB !== undefined);
  if (priced < 0 && egress >= 0) {
    issues.push({ path: 'cluster.sites[0].gpuHourUsd', message: `is required when a link has an egress price (cluster.links[${egress}].egressUsdPerGB): give every site's price` });
  }
}
