/**
 * When the ring-pattern bound claims nothing: one site (no rings cross sites) and a search cut
 * short by its node budget. Its validity and strength against exhaustive optima are checked in
 * bounds-per-candidate and bounds-random-scenarios.
 */
import { buildPlacementMip, provenIterationBoundS } from '../src/formulation/placement-mip';
import { crossingFloorS } from '../src/formulation/crossing-floor';
import { ringPatternLowerBound } from '../src/formulation/ring-pattern-bound';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import { clone, readFixture } from './helpers/fixtures';

type Json = any; // fixture JSON, mutated below

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

describe('crossing floor of hostings that split replicas', () => {
  let highs: HighsWorkerBackend;
  beforeAll(() => { highs = new HighsWorkerBackend(); });
  afterAll(async () => { await highs.close(); });

  // Slow links make the crossings count: 10 Gb/s between the two sites, 25 Gb/s among the three.
  const slowed = (name: string, gbps: number) => {
    const spec: Json = clone(readFixture(`small/${name}`));
    for (const link of spec.cluster.links) link.bandwidthGbps = gbps;
    return parseScenario(spec, name);
  };

  it.each([['two-sites', 10], ['three-heterogeneous', 25]] as const)('is at most the proven optimum of every placement with only split replicas, and above the pipeline bound somewhere: %s', async (name, gbps) => {
    const scenario = slowed(name, gbps);
    let checked = 0;
    let lifted = 0;
    let tight = 0;
    for (const candidate of enumerateCandidates(scenario, FULL_SPACE).filter((c) => Number.isFinite(c.quickBoundS) && c.config.pp > 1).slice(0, 16)) {
      const c = candidate.coefficients();
      const split = { ...c, layouts: c.layouts.filter((l) => l.crossings > 0) };
      const placement = split.layouts.length > 0 ? buildPlacementMip(scenario, split, 0) : undefined;
      if (!placement) continue;
      const solution = await highs.solve(placement.mip, { timeLimitS: 20, relativeGap: 0 });
      if (!solution.boundProven) continue;
      const leastSplitS = provenIterationBoundS(placement, solution.dualBound);
      if (!Number.isFinite(leastSplitS)) continue;
      // The proven bound sits below the MIP's optimum by the solver's tolerance (1e-6 s, relative
      // past 1 s, and the tie-break allowance): where the floor equals the optimum it may exceed
      // that bound by as much.
      const allowed = leastSplitS + 2e-6 * Math.max(1, leastSplitS);
      // Every replica split (n = dp); no more is known of where the split replicas start and end.
      const floorS = crossingFloorS(c, c.dp, scenario.links.length, Infinity) + c.optimizerS;
      expect(floorS).toBeLessThanOrEqual(allowed);
      // One split replica: still at most.
      expect(crossingFloorS(c, 1, scenario.links.length, Infinity) + c.optimizerS).toBeLessThanOrEqual(allowed);
      checked++;
      if (floorS > candidate.quickBoundS + c.optimizerS) lifted++;
      if (floorS > leastSplitS * (1 - 1e-3)) tight++;
    }
    expect(checked).toBeGreaterThan(0);
    expect(lifted).toBeGreaterThan(0);
    if (process.env['BOUND_VERBOSE']) console.log(`${name}: ${checked} candidates, floor above the pipeline bound on ${lifted}, within 0.1% of the split-only optimum on ${tight}`);
  }, 120_000);
});
