/**
 * When the ring-pattern bound claims nothing: one site (no rings cross sites) and a search cut
 * short by its node budget; and what a cutoff changes (only bounds at or past it). Its validity and strength against exhaustive optima are checked in
 * bounds-per-candidate and bounds-random-scenarios.
 */
import { RING_PATTERN_NODE_BUDGET, ringPatternLowerBound, ringPatternSearch } from '../src/formulation/ring-pattern-bound';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import { readFixture } from './helpers/fixtures';

const finiteCandidates = (name: string) => {
  const scenario = parseScenario(readFixture(`small/${name}`), name);
  const siteGpus = scenario.sites.map((s) => s.gpus);
  return { scenario, siteGpus, candidates: enumerateCandidates(scenario, FULL_SPACE).filter((c) => Number.isFinite(c.quickBoundS)).slice(0, 12) };
};

describe('ring-pattern bound', () => {
  it('claims nothing on one site', () => {
    const { scenario, siteGpus, candidates } = finiteCandidates('one-site');
    expect(candidates.length).toBeGreaterThan(0);
    for (const c of candidates) expect(ringPatternLowerBound(scenario, c.coefficients(), siteGpus, c.quickBoundS)).toBe(-Infinity);
  });

  it('claims nothing when its search runs out of nodes, and lifts the pipeline bound when it completes', () => {
    const { scenario, siteGpus, candidates } = finiteCandidates('two-sites');
    let lifted = 0;
    for (const c of candidates) {
      const coefficients = c.coefficients();
      expect(ringPatternLowerBound(scenario, coefficients, siteGpus, c.quickBoundS, 1)).toBe(-Infinity);
      const complete = ringPatternLowerBound(scenario, coefficients, siteGpus, c.quickBoundS);
      expect(complete).toBeGreaterThanOrEqual(c.quickBoundS);
      if (complete > c.quickBoundS) lifted++;
    }
    expect(lifted).toBeGreaterThan(0);
  });

  it('with a cutoff, gives the same bound below it and the cutoff itself at or past it', () => {
    const { scenario, siteGpus, candidates } = finiteCandidates('three-heterogeneous');
    let compared = 0;
    for (const c of candidates) {
      const coefficients = c.coefficients();
      const full = ringPatternSearch(scenario, coefficients, siteGpus, c.quickBoundS);
      if (!Number.isFinite(full.boundS)) continue;
      const above = ringPatternSearch(scenario, coefficients, siteGpus, c.quickBoundS, RING_PATTERN_NODE_BUDGET, full.boundS * 1.01);
      expect(above.boundS).toBe(full.boundS);
      expect(above.leastHosting).toEqual(full.leastHosting);
      const below = ringPatternSearch(scenario, coefficients, siteGpus, c.quickBoundS, RING_PATTERN_NODE_BUDGET, full.boundS * 0.99);
      expect(below.boundS).toBe(full.boundS * 0.99);
      compared++;
    }
    expect(compared).toBeGreaterThan(0);
  });
});
