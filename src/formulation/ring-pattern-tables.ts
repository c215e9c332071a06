/**
 * Tables of the ring-pattern bound (docs/formulation.md §4, step 3(d); ring-pattern-bound.ts):
 * per site subset, the link load and the longest hop of a ring over it; and the fewest replicas
 * the busiest site of a hosting holds (eq. 4.1).
 */
import { addRouteLoad, emptyLoads, ringHops, routeLatencyS } from '../model/cross-site';
import type { Scenario } from '../model/scenario';

export interface RingLoadTable {
  /** For each nonempty site subset (bitmask), bytes per class byte on each link direction (2 per link). */
  readonly perDirection: readonly (Float64Array | undefined)[];
  /** Its largest hop latency, s. */
  readonly hopLatencyS: readonly number[];
}

/**
 * Per site subset, the load a ring over it puts on each link direction per byte of the class, and
 * its longest hop: the cost model's own ring order and routing (ringHops, addRouteLoad).
 */
export function ringLoadTable(scenario: Scenario, siteCount: number): RingLoadTable {
  const perDirection: (Float64Array | undefined)[] = [undefined];
  const hopLatencyS: number[] = [0];
  for (let mask = 1; mask < 1 << siteCount; mask++) {
    const sites = [...Array(siteCount).keys()].filter((s) => mask & (1 << s));
    const loads = emptyLoads(scenario);
    let latency = 0;
    for (const hop of ringHops(sites)) {
      addRouteLoad(scenario, loads, hop.from, hop.to, (2 * (sites.length - 1)) / sites.length, 0);
      latency = Math.max(latency, routeLatencyS(scenario, hop.from, hop.to));
    }
    perDirection.push(Float64Array.from(loads.flatMap((load) => [load.aToB, load.bToA])));
    hopLatencyS.push(latency);
  }
  return { perDirection, hopLatencyS };
}

/**
 * Eq. 4.3: the least L such that some split of dp replicas of a class over exactly the sites in
 * `hosting` (at least one each) puts at most L on every site, each site s holding at most
 * floor(G_s / gpusPerReplica) (a replica's share of the class uses that many of its GPUs): the
 * least L with sum over s in hosting of min(cap_s, L) >= dp. Every such split has a site with at
 * least L replicas, and that site's cap is at least L. Infinity when the sites cannot hold dp.
 */
export function busiestSiteReplicas(dp: number, siteGpus: readonly number[], gpusPerReplica: number, hosting: number): number {
  const caps = siteGpus.flatMap((gpus, s) => (hosting & (1 << s) ? [Math.floor(gpus / gpusPerReplica)] : [])).sort((a, b) => a - b);
  // Each site of the hosting holds at least one replica.
  if (caps.length > dp || caps[0]! < 1) return Infinity;
  let below = 0;
  for (let t = 0; t < caps.length; t++) {
    // The t smallest sites full, the rest at most caps[t] each.
    const rest = caps.length - t;
    if (below + rest * caps[t]! >= dp) return Math.max(1, Math.ceil((dp - below) / rest));
    below += caps[t]!;
  }
  return Infinity;
}

export function popcount(mask: number): number {
  let count = 0;
  for (let m = mask; m > 0; m &= m - 1) count++;
  return count;
}
