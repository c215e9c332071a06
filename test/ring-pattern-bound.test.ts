/**
 * When the ring-pattern bound claims nothing: one site (no rings cross sites) and a search cut
 * short by its node budget. Its validity and strength against exhaustive optima are checked in
 * bounds-per-candidate and bounds-random-scenarios.
 */
import { ringPatternLowerBound } from '../src/formulation/ring-pattern-bound';
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
});
