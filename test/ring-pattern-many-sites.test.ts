/**
 * The ring-pattern bound on more than five sites (docs/formulation.md §4, step 3(d)) and the
 * busiest-site replica count its in-site rings use (eq. 4.1). Six or more sites are beyond the
 * exhaustive reference, so each claimed bound is checked against real plans of its candidate:
 * the greedy placement and its cost-model polish, timed by the closed form (at most the cost
 * model's time), must never be faster than the bound.
 */
import { planOfGroups } from '../src/formulation/coefficients';
import { ringPatternLowerBound } from '../src/formulation/ring-pattern-bound';
import { busiestSiteReplicas } from '../src/formulation/ring-pattern-tables';
import { FULL_SPACE } from '../src/formulation/search-space';
import { evaluateLayout } from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import { greedyPlacement } from '../src/solve/heuristic';
import { polishPlacement } from '../src/solve/placement-polish';
import { realisticScenario } from '../bench/realistic-scenarios';

/** The least over every split of dp replicas onto exactly the sites of `hosting` (each at most its cap, at least 1) of the busiest site's count, by enumeration. */
function busiestByEnumeration(dp: number, caps: readonly number[]): number {
  let least = Infinity;
  const split = (s: number, left: number, most: number): void => {
    if (s === caps.length) { if (left === 0) least = Math.min(least, most); return; }
    for (let n = 1; n <= Math.min(caps[s]!, left); n++) split(s + 1, left - n, Math.max(most, n));
  };
  split(0, dp, 0);
  return least;
}

describe('busiest-site replica count (eq. 4.1)', () => {
  it('equals the least busiest count over every split that fits the sites', () => {
    let cases = 0;
    for (let seed = 1; cases < 400; seed++) {
      const siteGpus = [0, 1, 2, 3].map((s) => ((seed * (s + 3) * 7919) % 23) + 1);
      const gpusPerReplica = 1 + (seed % 3);
      const hosting = 1 + (seed % 15);
      const dp = 1 + ((seed * 31) % 24);
      const caps = siteGpus.flatMap((g, s) => (hosting & (1 << s) ? [Math.floor(g / gpusPerReplica)] : []));
      expect(busiestSiteReplicas(dp, siteGpus, gpusPerReplica, hosting)).toBe(busiestByEnumeration(dp, caps));
      cases++;
    }
  });

  it('is ceil(dp / sites) when every site can take that many, more when small sites cap their share', () => {
    expect(busiestSiteReplicas(8, [16, 16, 16, 16], 2, 0b1111)).toBe(2);
    // 8,192 replicas of 2 GPUs on 4,096 and 12,288 GPUs: the large site holds 6,144.
    expect(busiestSiteReplicas(8192, [4096, 12288], 2, 0b11)).toBe(6144);
    expect(busiestSiteReplicas(9, [4, 4], 1, 0b11)).toBe(Infinity);
  });
});

/** The first `count` candidates of `scenario` with a greedy plan: those whose ring-pattern bound is claimed, checked against their plans. */
function checkAgainstPlans(scenario: Scenario, count: number): { checked: number; lifted: number } {
  const siteGpus = scenario.sites.map((s) => s.gpus);
  let checked = 0;
  let lifted = 0;
  for (const candidate of enumerateCandidates(scenario, FULL_SPACE).filter((c) => Number.isFinite(c.quickBoundS)).slice(0, count)) {
    const c = candidate.coefficients();
    const groups = greedyPlacement(scenario, c);
    if (!groups) continue;
    const bound = ringPatternLowerBound(scenario, c, siteGpus, candidate.quickBoundS);
    if (bound === -Infinity) continue; // not claimed: its node budget ran out
    expect(bound).toBeGreaterThanOrEqual(candidate.quickBoundS);
    if (bound === Infinity) continue;
    const plans = [planOfGroups(c, scenario, groups)];
    const polished = polishPlacement(scenario, c, groups, 60);
    if (polished) plans.push(polished.plan);
    for (const plan of plans) {
      const evaluation = evaluateLayout(scenario, layOutPlan(scenario, plan), 'closed-form');
      if (!evaluation.fitsResources) continue;
      expect(bound).toBeLessThanOrEqual(evaluation.predicted.iterationTimeS * (1 + 1e-9));
    }
    if (bound > candidate.quickBoundS * (1 + 1e-9)) lifted++;
    checked++;
  }
  return { checked, lifted };
}

describe('ring-pattern bound on six to eight sites', () => {
  // Realistic scenarios of the robustness benchmark with 6 and 8 sites (bench/realistic-scenarios.ts).
  it.each([18, 42, 19, 27])('is claimed, lifts candidates and stays under their plans: realistic scenario %i', (index) => {
    const { spec } = realisticScenario(20261202, index);
    const scenario = parseScenario(spec, `realistic-${index}`);
    expect(scenario.sites.length).toBeGreaterThan(5);
    const { checked, lifted } = checkAgainstPlans(scenario, 30);
    expect(checked).toBeGreaterThan(0);
    expect(lifted).toBeGreaterThan(0);
  }, 120_000);
});
