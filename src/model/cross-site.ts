/**
 * Traffic on cross-site links: which links a pipeline's stage boundaries and a stage's
 * data-parallel ring cross, and how long a load takes on a shared link (docs/cost-model.md §4).
 */
import { linkBytesPerS, settingsForLink, type LinkSettings } from './network';
import type { PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';

/** Load accumulated on one full-duplex link, each direction on its own (A and B are the link's ends). */
export interface LinkLoad {
  aToB: number;
  bToA: number;
  /** GPU pairs sending at once in each direction (sets how many flows share it). */
  pairsAToB: number;
  pairsBToA: number;
}

export const emptyLoads = (scenario: Scenario): LinkLoad[] => scenario.links.map(() => ({ aToB: 0, bToA: 0, pairsAToB: 0, pairsBToA: 0 }));

/** Bytes of the busier direction. */
export const busierDirectionBytes = (load: LinkLoad): number => Math.max(load.aToB, load.bToA);

/**
 * Adds `bytes` sent by `gpuPairs` pairs from site `from` to site `to` to every link on the route,
 * in the direction travelled; `bothWays` also adds the same in reverse (a pipeline boundary sends
 * activations one way and their gradients back).
 */
export function addRouteLoad(scenario: Scenario, loads: LinkLoad[], from: number, to: number, bytes: number, gpuPairs: number, bothWays = false): void {
  let at = from;
  for (const index of scenario.routes[from]![to]!) {
    const link = scenario.links[index]!;
    const load = loads[index]!;
    const forward = link.siteA === at;
    if (forward || bothWays) { load.aToB += bytes; load.pairsAToB += gpuPairs; }
    if (!forward || bothWays) { load.bToA += bytes; load.pairsBToA += gpuPairs; }
    at = forward ? link.siteB : link.siteA;
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

/** Seconds each link needs to carry its load: its busier direction. */
export function linkBusyS(scenario: Scenario, settings: readonly LinkSettings[], loads: readonly LinkLoad[]): number[] {
  return scenario.links.map((link, i) => {
    const load = loads[i]!;
    const one = (bytes: number, pairs: number) => (bytes === 0 ? 0 : bytes / linkBytesPerS(link, settings[i]!, pairs));
    return Math.max(one(load.aToB, load.pairsAToB), one(load.bToA, load.pairsBToA));
  });
}

/** Site indices in the order a ring visits them, and the hops (from, to) of that ring. */
export function ringHops(sites: readonly number[]): { readonly from: number; readonly to: number }[] {
  if (sites.length < 2) return [];
  return sites.map((from, i) => ({ from, to: sites[(i + 1) % sites.length]! }));
}
