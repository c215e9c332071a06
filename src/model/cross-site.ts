/**
 * Traffic on cross-site links: which links a pipeline's stage boundaries and a stage's
 * data-parallel ring cross, and how long a load takes on a shared link (docs/cost-model.md §4).
 */
import { linkBytesPerS, settingsForLink, type LinkSettings } from './network';
import type { PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';

/** Load accumulated on one link, per direction. */
export interface LinkLoad {
  bytes: number;
  /** GPU pairs sending at once (sets how many flows share the link). */
  gpuPairs: number;
}

export const emptyLoads = (scenario: Scenario): LinkLoad[] => scenario.links.map(() => ({ bytes: 0, gpuPairs: 0 }));

/** Adds `bytes` sent by `gpuPairs` pairs from site `from` to site `to` to every link on the route. */
export function addRouteLoad(scenario: Scenario, loads: LinkLoad[], from: number, to: number, bytes: number, gpuPairs: number): void {
  for (const link of scenario.routes[from]![to]!) {
    loads[link]!.bytes += bytes;
    loads[link]!.gpuPairs += gpuPairs;
  }
}

/** One-way latency of the route between two sites, seconds. */
export function routeLatencyS(scenario: Scenario, from: number, to: number): number {
  let total = 0;
  for (const link of scenario.routes[from]![to]!) total += scenario.links[link]!.rttS / 2;
  return total;
}

/** Settings in force on each link under `plan`. */
export function linkSettings(scenario: Scenario, plan: PlanSpec): LinkSettings[] {
  const names = scenario.sites.map((site) => site.name);
  return scenario.links.map((link) => settingsForLink(link, names, plan.network));
}

/** Seconds each link needs to carry its load, per direction. */
export function linkBusyS(scenario: Scenario, settings: readonly LinkSettings[], loads: readonly LinkLoad[]): number[] {
  return scenario.links.map((link, i) => {
    const load = loads[i]!;
    return load.bytes === 0 ? 0 : load.bytes / linkBytesPerS(link, settings[i]!, load.gpuPairs);
  });
}

/** Site indices in the order a ring visits them, and the hops (from, to) of that ring. */
export function ringHops(sites: readonly number[]): { readonly from: number; readonly to: number }[] {
  if (sites.length < 2) return [];
  return sites.map((from, i) => ({ from, to: sites[(i + 1) % sites.length]! }));
}
