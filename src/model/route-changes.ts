/**
 * Which routes a changed scenario (sites or links removed) takes differently from the base one.
 * Routes are fewest-hop paths (src/model/scenario.ts), not the fastest: when a removed link was
 * the short way between two sites, their traffic takes a longer detour over other links, which
 * can be faster or slower than before. Where no route changes, a plan of the changed scenario is
 * timed the same in the base scenario (same sites, same links, same routes).
 */
import type { Scenario } from './scenario';

const routeText = (scenario: Scenario, from: number, to: number): string =>
  scenario.routes[from]![to]!.map((link) => scenario.links[link]!.label).join(', ');

/**
 * "a->c over a<->b, b<->c (was a<->c)" for each ordered pair of `changed`'s sites (of those named
 * in `among`, when given) routed differently from `base`; a pair whose reverse takes the same
 * links is listed once.
 */
export function changedRoutes(base: Scenario, changed: Scenario, among?: readonly string[]): string[] {
  const baseIndex = new Map(base.sites.map((site) => [site.name, site.index]));
  const sites = changed.sites.filter((site) => among === undefined || among.includes(site.name));
  const out: string[] = [];
  const seen = new Set<string>();
  for (const from of sites) {
    for (const to of sites) {
      if (from.index === to.index) continue;
      const links = [...changed.routes[from.index]![to.index]!].sort((x, y) => x - y).join(',');
      if (seen.has(`${to.index}>${from.index}:${links}`)) continue;
      seen.add(`${from.index}>${to.index}:${links}`);
      const now = routeText(changed, from.index, to.index);
      const was = routeText(base, baseIndex.get(from.name)!, baseIndex.get(to.name)!);
      if (now !== was) out.push(`${from.name}->${to.name} over ${now} (was ${was})`);
    }
  }
  return out;
}
