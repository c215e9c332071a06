/**
 * The placement MIP's hosting and cross-site sync rows (docs/formulation.md §3, F7-F10e): which
 * sites host each stage class (F7), whether it spans sites (F8), ring membership (F9), the
 * cross-site phase's bytes over bandwidth C (F10) with each site's share of a ring (F10d) and,
 * with three or more sites, each link direction's load as the cost model routes the ring (F10e),
 * and its hop latencies Λ (F10b).
 */
import type { ConfigCoefficients } from './coefficients';
import { choicesPlacing, replicasSiteCanHold, type Columns } from './placement-mip-replicas';
import type { Scenario } from '../model/scenario';
import { routeLatencyS } from '../model/cross-site';
import { popcount, ringLoadTable } from './ring-pattern-tables';

/** F7-F9: hosts[class,site] (binary), spans[class] (binary) and in_ring[class,site]. */
export function addHostingRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, classes: readonly number[][]) {
  const { b, choices } = cols;
  const siteCount = scenario.sites.length;
  const spans: number[] = [];
  const participates: number[][] = [];
  const hostedByClass: number[][] = [];
  classes.forEach((cls, ci) => {
    const hosted = scenario.sites.map((site) => {
      const h = b.addColumn(`hosts[class${ci},${site.name}]`, 0, 1, { integer: true });
      const placing = choicesPlacing(choices, cls, site.index);
      const terms: (readonly [number, number])[] = [[h, Math.max(1, replicasSiteCanHold(c, placing, site))], ...placing.map((ch) => [ch.replicasColumn, -1] as const)];
      b.addRow(`hosting[class${ci},${site.name}]`, terms, 0, Infinity);
      return h;
    });
    const span = b.addColumn(`spans[class${ci}]`, 0, 1, { integer: true });
    for (let s = 0; s < siteCount; s++) for (let t = s + 1; t < siteCount; t++) {
      b.addRow(`spanning[class${ci},${s},${t}]`, [[span, 1], [hosted[s]!, -1], [hosted[t]!, -1]], -1, Infinity);
    }
    spans.push(span);
    hostedByClass.push(hosted);
    participates.push(hosted.map((h, s) => {
      const q = b.addColumn(`in_ring[class${ci},${scenario.sites[s]!.name}]`, 0, 1);
      b.addRow(`ring_member[class${ci},${scenario.sites[s]!.name}]`, [[q, 1], [h, -1], [span, -1]], -1, Infinity);
      return q;
    }));
  });
  return { spans, participates, hosted: hostedByClass };
}

/**
 * F10: C >= each site's outgoing cross-site gradient bytes over the bandwidth of all its links,
 * and >= each class's bytes over the site's fastest single link, seconds.
 */
export function addCrossSiteSyncRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, classes: readonly number[][], participates: readonly number[][], hosted: readonly (readonly number[])[]) {
  const { b } = cols;
  const incident = c.siteIncidentBytesPerS;
  const totalCross = c.crossGradientBytes.reduce((a, x) => a + x, 0);
  const narrowest = Math.min(...incident.filter((bw) => bw > 0));
  if (!Number.isFinite(narrowest)) return undefined;
  const routed = routedRingTerms(cols, scenario, c, classes);
  // The most any row below asks of C: a ring over k sites sends 2(k - 1)/k < 2 times the bytes
  // (F10 rows), one class's bytes over a site's widest link (one-link rows), and every class's
  // most loaded hosting on a link direction (F10e).
  const slowestWidest = Math.min(...c.siteWidestLinkBytesPerS.filter((bw) => bw > 0));
  const maxS = Math.max((2 * totalCross) / narrowest, totalCross / slowestWidest, routed?.maxS ?? 0);
  const column = b.addColumn('cross_site_sync_s', 0, maxS);
  if (routed) addRoutedRingRows(cols, routed, hosted, column);
  const share = ringShareColumns(cols, scenario, participates, hosted);
  scenario.sites.forEach((site, s) => {
    if (incident[s] === 0) return;
    const terms: (readonly [number, number])[] = [[column, 1]];
    classes.forEach((cls, ci) => {
      const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
      terms.push([share[ci]![s]!, -bytes / incident[s]!]);
    });
    b.addRow(`cross_site_sync[${site.name}]`, terms, 0, Infinity);
    // Each class's ring hop out of the site travels one route, whose first link is one of the site's links.
    const widest = c.siteWidestLinkBytesPerS[s]!;
    classes.forEach((cls, ci) => {
      const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
      // (With the ring share here too, measured: HiGHS found the 4-site 405B row's good placements far later.)
      b.addRow(`cross_site_sync_one_link[class${ci},${site.name}]`, [[column, 1], [participates[ci]![s]!, -bytes / widest]], 0, Infinity);
    });
  });
  return { column, maxS };
}

/** Columns of F10e beyond which its rows are left out (classes x spanning site subsets). */
const ROUTED_RING_SUBSET_BUDGET = 256;
/**
 * (Layout, microbatch) choices beyond which F10e is left out: on the 4-site DeepSeek-V3 bench row
 * the rows made its 264-choice MIPs return far fewer placements within their time (6-7 of 8
 * answers without one, against 2-3 of 7), and the plan those placements lead to was lost (gap
 * 4.74% -> 6.30-8.04%; 4.93% with this limit). The random scenarios' F10e gains come from MIPs of
 * at most 154 choices.
 */
const ROUTED_RING_MAX_CHOICES = 200;

/** F10e's data: per class, the spanning site subsets it can be hosted by, and their loads per link direction in seconds. */
interface RoutedRingTerms {
  /** For each class, its subsets (bit masks) with each direction's seconds when exactly those sites host it. */
  readonly subsets: readonly (readonly { readonly mask: number; readonly directionS: Float64Array }[])[];
  readonly directions: number;
  readonly maxS: number;
}

/**
 * F10e's coefficients: a class hosted by exactly the sites H (two or more) rings its gradients over
 * them in index order on the cost model's routes (ringLoadTable: bytes per class byte on each link
 * direction), so each direction carries bytes_class x load_H[d], at best at the link's usable
 * bandwidth. Only subsets every site of which some choice lets host the class; undefined with fewer
 * than three sites (two sites: F10 is already exact), past the budget or on a MIP of more than
 * ROUTED_RING_MAX_CHOICES choices.
 */
function routedRingTerms(cols: Columns, scenario: Scenario, c: ConfigCoefficients, classes: readonly number[][]): RoutedRingTerms | undefined {
  const siteCount = scenario.sites.length;
  if (siteCount < 3 || cols.choices.length > ROUTED_RING_MAX_CHOICES) return undefined;
  const canHost = classes.map((cls) => scenario.sites.reduce((mask, site) => (choicesPlacing(cols.choices, cls, site.index).length > 0 ? mask | (1 << site.index) : mask), 0));
  const spanning = canHost.map((mask) => {
    const masks: number[] = [];
    for (let h = mask; h > 0; h = (h - 1) & mask) if (popcount(h) >= 2) masks.push(h);
    return masks;
  });
  if (spanning.reduce((sum, masks) => sum + masks.length, 0) > ROUTED_RING_SUBSET_BUDGET) return undefined;
  const table = ringLoadTable(scenario, siteCount);
  const directions = 2 * scenario.links.length;
  const perDirectionMaxS = new Float64Array(directions);
  const subsets = classes.map((cls, ci) => {
    const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
    const classMaxS = new Float64Array(directions);
    const entries = spanning[ci]!.map((mask) => {
      const load = table.perDirection[mask]!;
      const directionS = Float64Array.from(load, (perByte, d) => (perByte * bytes) / c.linkBytesPerS[d >> 1]!);
      directionS.forEach((t, d) => { classMaxS[d] = Math.max(classMaxS[d]!, t); });
      return { mask, directionS };
    });
    classMaxS.forEach((t, d) => { perDirectionMaxS[d]! += t; });
    return entries;
  });
  return { subsets, directions, maxS: Math.max(0, ...perDirectionMaxS) };
}

/**
 * F10e: x[class,H] >= sum_{s in H} hosts[class,s] - sum_{s not in H} hosts[class,s] - (|H| - 1), which
 * is 1 when H is exactly the class's hosting and at most 0 otherwise (x in [0, 1], pushed down by
 * every row it is in), and for each link direction d, C >= sum over classes and H of
 * x[class,H] x bytes_class x load_H[d] / bandwidth: the cost model's busiest direction of the
 * cross-site phase, where F10 spreads a site's bytes over all of its links.
 */
function addRoutedRingRows(cols: Columns, routed: RoutedRingTerms, hosted: readonly (readonly number[])[], column: number): void {
  const { b } = cols;
  const byDirection: (readonly [number, number])[][] = Array.from({ length: routed.directions }, () => []);
  routed.subsets.forEach((entries, ci) => {
    const h = hosted[ci]!;
    for (const { mask, directionS } of entries) {
      if (!directionS.some((t) => t > 0)) continue;
      const x = b.addColumn(`hosted_exactly[class${ci},${mask}]`, 0, 1);
      b.addRow(`hosted_exactly_link[class${ci},${mask}]`, [[x, 1], ...h.map((col, s) => [col, mask & (1 << s) ? -1 : 1] as const)], 1 - popcount(mask), Infinity);
      directionS.forEach((t, d) => { if (t > 0) byDirection[d]!.push([x, -t]); });
    }
  });
  byDirection.forEach((terms, d) => {
    if (terms.length > 0) b.addRow(`cross_site_sync_routed[link${d >> 1},${d & 1 ? 'b->a' : 'a->b'}]`, [[column, 1], ...terms], 0, Infinity);
  });
}

/**
 * F10d: the bytes a site sends in a hierarchical cross-site ring over k sites are 2(k - 1)/k times
 * a stage's gradient shard (1 at k = 2, 4/3 at 3, 3/2 at 4, ...): concave in k, so on [2, S] it is
 * at least the chord 1 + f (k - 2), f = (2(S - 1)/S - 1)/(S - 2). share[class,s] >= in_ring[class,s],
 * and >= 1 + f (sum_u hosts[class,u] - 2) - (1 + f (S - 2)) (1 - in_ring[class,s]). With two
 * sites share = in_ring.
 */
function ringShareColumns(cols: Columns, scenario: Scenario, participates: readonly number[][], hosted: readonly (readonly number[])[]): number[][] {
  const { b } = cols;
  const n = scenario.sites.length;
  if (n < 3) return participates.map((q) => [...q]);
  const f = ((2 * (n - 1)) / n - 1) / (n - 2);
  const bigM = 1 + f * (n - 2);
  return participates.map((q, ci) => q.map((inRing, s) => {
    const w = b.addColumn(`ring_share[class${ci},${scenario.sites[s]!.name}]`, 0, 2);
    b.addRow(`ring_share_member[class${ci},${scenario.sites[s]!.name}]`, [[w, 1], [inRing, -1]], 0, Infinity);
    // w >= 1 - 2f + f sum h - M + M q
    b.addRow(`ring_share_sites[class${ci},${scenario.sites[s]!.name}]`, [[w, 1], ...hosted[ci]!.map((h) => [h, -f] as const), [inRing, -bigM]], 1 - 2 * f - bigM, Infinity);
    return w;
  }));
}

/** The cross-site phase's columns: C (bytes over bandwidth, F10) and Λ (ring hop latencies, F10b). */
export interface CrossSiteColumns {
  readonly column: number;
  readonly maxS: number;
  readonly latencyColumn: number;
  readonly latencyMaxS: number;
}

/**
 * F10b: Λ, the cross-site ring's latency term 2 (k - 1) x (its longest hop) in the cost model,
 * where k is the number of sites a stage spans. Every hop takes at least the shortest link's
 * latency: Λ >= 2 λmin (sum_s hosts[class,s] - 1). The ring visits its sites in index order and
 * closes with a hop from the last back to the first: when sites s < t both host a class, that hop
 * joins some a <= s to some b >= t, so it takes at least R(s,t) = min route latency over such
 * (a, b): Λ >= 2 R(s,t) (sum_u hosts[class,u] - 1) - M (2 - hosts[class,s] - hosts[class,t]).
 */
export function addCrossSiteLatencyRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, hosted: readonly (readonly number[])[]): { latencyColumn: number; latencyMaxS: number } {
  const { b } = cols;
  const siteCount = scenario.sites.length;
  const closing = (s: number, t: number): number => {
    let least = Infinity;
    for (let a = 0; a <= s; a++) for (let z = t; z < siteCount; z++) least = Math.min(least, routeLatencyS(scenario, z, a));
    return least;
  };
  let longest = 0;
  for (let s = 0; s < siteCount; s++) for (let t = 0; t < siteCount; t++) if (s !== t) longest = Math.max(longest, routeLatencyS(scenario, s, t));
  const latencyMaxS = 2 * (siteCount - 1) * longest;
  const latencyColumn = b.addColumn('cross_site_latency_s', 0, latencyMaxS);
  hosted.forEach((h, ci) => {
    const sitesHosting = h.map((col) => [col, -2 * c.minLinkLatencyS] as const);
    b.addRow(`cross_site_latency[class${ci}]`, [[latencyColumn, 1], ...sitesHosting], -2 * c.minLinkLatencyS, Infinity);
    for (let s = 0; s < siteCount; s++) for (let t = s + 1; t < siteCount; t++) {
      const r = closing(s, t);
      if (!(r > c.minLinkLatencyS)) continue; // the row above already says as much
      const bigM = 2 * r * (siteCount - 1);
      b.addRow(`cross_site_latency_closing[class${ci},${s},${t}]`,
        [[latencyColumn, 1], ...h.map((col, u) => [col, -2 * r + (u === s || u === t ? -bigM : 0)] as const)], -2 * r - 2 * bigM, Infinity);
    }
  });
  return { latencyColumn, latencyMaxS };
}
