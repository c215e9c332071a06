/**
 * Site permutations under which the cost model times every plan the same (docs/formulation.md
 * §9): the exhaustive reference evaluates one placement of each orbit and counts the orbit.
 *
 * A permutation sigma of the sites (with the induced map of links) is kept when
 * 1. every site s and sigma(s) are alike in everything the cost model reads of a site: GPU spec,
 *    GPU count, GPUs per node, scale-up domain, pod size and oversubscription (only the name and
 *    the index differ);
 * 2. links map onto links: the link between a and b goes to the (only) link between sigma(a) and
 *    sigma(b), with the same bandwidth, round-trip time and loss rate;
 * 3. routes are equivariant: routes[sigma a][sigma b] is the image of routes[a][b], link by link
 *    (checked, not assumed: the fewest-hop routes break ties by link index);
 * 4. every data-parallel ring keeps its direction: the cost model rings a stage's gradients over
 *    its sites in ascending index order (cross-site.ts, ringHops), and a hop from site s carries
 *    s's replicas as GPU pairs, so a ring travelled the other way can load a link differently.
 *    For every set S of three or more sites, sigma must map the cyclic order of S (ascending) onto
 *    the cyclic order of sigma(S) (ascending), up to rotation. (Two-site rings are the same both
 *    ways: hops a->b and b->a.)
 *
 * Then for a plan P and its image sigma(P) (every stage of every replica group moved from s to
 * sigma(s), each link's settings moved to its image): every stage time, memory and in-site ring
 * reads only the site's own fields (1); every pipeline crossing and ring hop sends the same bytes
 * with the same GPU pairs over the image route (2-4), in the same direction relative to the image
 * link's ends or, for a two-site ring, with the two directions exchanged, and a link's busy time is
 * the larger of its two directions, each on the same capacity (cross-site.ts, linkBusyS); latency
 * sums are equal (2, 3). So every group's end time is equal, and with it the iteration time, up
 * to floating-point summation order (groups are listed in another order). The allowed network
 * settings of a link depend on the scenario and on the link's loss rate only (equal by 2), so the
 * network settings of P and of sigma(P) correspond one to one: the least time over network
 * settings is equal too. The permutations kept form a group: each condition is preserved by
 * composition and inversion.
 */
import type { Framework } from '../model/framework-capabilities';
import type { Scenario, Site } from '../model/scenario';

/** A permutation of the sites and the permutation of links it induces. */
export interface SitePermutation {
  /** sites[s] = sigma(s). */
  readonly sites: readonly number[];
  /** links[i] = the link between sigma(a) and sigma(b) for link i between a and b. */
  readonly links: readonly number[];
}

/** Sites beyond this count get no symmetry search (n! permutations). */
const MAX_SITES_FOR_SYMMETRY = 6;

/**
 * The symmetries a placement walk may use (exhaustive-placements.ts): the cost model's, or, in a
 * framework's space, the identity alone: there a placement is kept only if its ranks put no two
 * sites on one node, which depends on the order of groups in the plan, not only on the placement.
 */
export function placementWalkSymmetries(scenario: Scenario, framework: Framework | undefined): SitePermutation[] {
  const all = costModelSiteSymmetries(scenario);
  return framework === undefined ? all : all.slice(0, 1);
}

/** The cost model's site symmetries of a scenario, the identity first. */
export function costModelSiteSymmetries(scenario: Scenario): SitePermutation[] {
  const n = scenario.sites.length;
  const identity: SitePermutation = { sites: scenario.sites.map((_, s) => s), links: scenario.links.map((_, i) => i) };
  if (n < 2 || n > MAX_SITES_FOR_SYMMETRY) return [identity];
  const linkBetween = new Map<string, number>();
  for (const link of scenario.links) {
    const key = pairKey(link.siteA, link.siteB);
    // Two links between the same sites: no symmetry claimed (a link map would be ambiguous).
    if (linkBetween.has(key)) return [identity];
    linkBetween.set(key, link.index);
  }
  const signatures = scenario.sites.map(siteSignature);
  const kept: SitePermutation[] = [identity];
  for (const sigma of permutations(n)) {
    if (sigma.every((t, s) => t === s)) continue;
    const mapped = asSymmetry(scenario, sigma, signatures, linkBetween);
    if (mapped) kept.push(mapped);
  }
  return kept;
}

function asSymmetry(scenario: Scenario, sigma: readonly number[], signatures: readonly string[], linkBetween: ReadonlyMap<string, number>): SitePermutation | undefined {
  // 1. Alike sites.
  if (!sigma.every((t, s) => signatures[t] === signatures[s])) return undefined;
  // 2. Links onto alike links.
  const links: number[] = [];
  for (const link of scenario.links) {
    const image = linkBetween.get(pairKey(sigma[link.siteA]!, sigma[link.siteB]!));
    if (image === undefined) return undefined;
    const other = scenario.links[image]!;
    if (other.bandwidthBytesPerS !== link.bandwidthBytesPerS || other.rttS !== link.rttS || other.lossRate !== link.lossRate) return undefined;
    links.push(image);
  }
  // 3. Equivariant routes.
  const n = sigma.length;
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) {
      const route = scenario.routes[a]![b]!;
      const image = scenario.routes[sigma[a]!]![sigma[b]!]!;
      if (route.length !== image.length || route.some((l, i) => links[l] !== image[i])) return undefined;
    }
  }
  // 4. Rings over three or more sites keep their direction.
  for (let mask = 0; mask < 1 << n; mask++) {
    const set = [...Array(n).keys()].filter((s) => mask & (1 << s));
    if (set.length < 3) continue;
    const mappedCycle = set.map((s) => sigma[s]!);
    const sortedImage = [...mappedCycle].sort((x, y) => x - y);
    if (!sameCycle(mappedCycle, sortedImage)) return undefined;
  }
  return { sites: sigma, links };
}

/** Whether two sequences are the same cyclic order (one a rotation of the other). */
function sameCycle(a: readonly number[], b: readonly number[]): boolean {
  const start = b.indexOf(a[0]!);
  return start >= 0 && a.every((x, i) => b[(start + i) % b.length] === x);
}

/** Everything the cost model reads of a site but its name and index. */
function siteSignature(site: Site): string {
  const { index: _index, name: _name, ...rest } = site;
  return JSON.stringify(sortKeys(rest));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}

const pairKey = (a: number, b: number): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

function* permutations(n: number): Generator<number[]> {
  const p = [...Array(n).keys()];
  const c = Array<number>(n).fill(0);
  yield [...p];
  let i = 0;
  while (i < n) { // Heap's algorithm
    if (c[i]! < i) {
      const j = i % 2 === 0 ? 0 : c[i]!;
      [p[j], p[i]] = [p[i]!, p[j]!];
      yield [...p];
      c[i]!++;
      i = 0;
    } else {
      c[i] = 0;
      i++;
    }
  }
}
