/**
 * The link-step surplus (docs/formulation.md eq. 2.1): the pipeline link step the cost model
 * charges, for any number of crossings under the default settings, is at least the capacity step
 * plus the surplus (exact at one crossing); the baselines' bounds built on it stay at most every
 * candidate's exhaustive least time on random lossy scenarios; and on a sweep point where the
 * shared link's resends dominate, the pp-across plan's own candidate is bounded within a few
 * percent of its least time (17% below it without the surplus).
 */
import * as fs from 'fs';
import * as path from 'path';
import fc from 'fast-check';
import { auditScenarioBounds } from '../bench/bound-audit';
import { smallScenarioArbitrary } from '../bench/random-scenarios';
import { outerLowerBound } from '../src/formulation/closed-form-bounds';
import { pipelineLinkStepSurplusS } from '../src/formulation/link-step-surplus';
import { CALIBRATION } from '../src/model/calibration-constants';
import { DEFAULT_LINK_SETTINGS, linkBytesPerS } from '../src/model/network';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends, PP_ACROSS_SPACE, PRODUCTION_SPACE } from '../src/solve/plan';

type Json = any; // a scenario document being edited

const twoSites = (edit: (spec: Json) => void): Scenario => {
  const spec = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'small', 'two-sites.json'), 'utf8'));
  delete spec.search;
  edit(spec);
  return parseScenario(spec);
};

describe('link-step surplus', () => {
  it('the cost model\'s step of C crossings is at least C x capacity step + the surplus, equal at C = 1', () => {
    fc.assert(fc.property(
      fc.constantFrom(10, 50, 200, 800, 3200, 25600), fc.constantFrom(0.1, 1, 5, 20, 60, 150), fc.constantFrom(1e-6, 1e-5, 1e-4, 1e-3),
      fc.constantFrom(1, 2, 4, 8), fc.integer({ min: 1, max: 256 }), fc.integer({ min: 1 << 16, max: 1 << 26 }),
      (bandwidthGbps, rttMs, lossRate, pairs, crossings, sendBytes) => {
        const scenario = twoSites((s) => Object.assign(s.cluster.links[0], { bandwidthGbps, rttMs, lossRate }));
        const link = scenario.links[0]!;
        const surplusS = pipelineLinkStepSurplusS(scenario, sendBytes, pairs, true)[0]!;
        const capacityStepS = sendBytes / (link.bandwidthBytesPerS * CALIBRATION.crossSiteLinkEfficiency);
        // As group-pipelines.ts loads a link: bytes and GPU pairs of every crossing added up.
        const stepS = (crossings * sendBytes) / linkBytesPerS(link, DEFAULT_LINK_SETTINGS, crossings * pairs);
        expect(surplusS).toBeGreaterThanOrEqual(0);
        expect(crossings * capacityStepS + surplusS).toBeLessThanOrEqual(stepS * (1 + 1e-12));
        const oneS = sendBytes / linkBytesPerS(link, DEFAULT_LINK_SETTINGS, pairs);
        // Tight at one crossing, but for the surplus's rounding margin (1e-9 of it).
        expect(Math.abs(capacityStepS + surplusS - oneS) / oneS).toBeLessThan(1e-8);
      }), { numRuns: 500, seed: 20261202 });
  });

  it('is 0 where the space may choose the settings, or on a lossless link', () => {
    const lossy = twoSites((s) => Object.assign(s.cluster.links[0], { bandwidthGbps: 50, rttMs: 60, lossRate: 1e-4 }));
    expect(pipelineLinkStepSurplusS(lossy, 1 << 24, 2, true)[0]).toBeGreaterThan(0.005);
    expect(pipelineLinkStepSurplusS(lossy, 1 << 24, 2, false)).toEqual([0]);
    const lossless = twoSites((s) => Object.assign(s.cluster.links[0], { bandwidthGbps: 50, rttMs: 60, lossRate: 0 }));
    expect(pipelineLinkStepSurplusS(lossless, 1 << 24, 2, true)).toEqual([0]);
  });

  it('bounds the pp-across plan\'s candidate on the 50 Gb/s, 60 ms sweep point within 5% of its least time', () => {
    const scenario = twoSites((s) => Object.assign(s.cluster.links[0], { bandwidthGbps: 50, rttMs: 60 }));
    const least = new Map<string, number>();
    const quick = new Map<string, number>();
    const outer = new Map<string, number>();
    const result = exhaustiveSearch(scenario, PP_ACROSS_SPACE, 60, (candidate, leastS) => {
      const key = `${JSON.stringify(candidate.config)} dp ${candidate.dp}`;
      least.set(key, leastS);
      quick.set(key, candidate.quickBoundS);
      outer.set(key, outerLowerBound(candidate.coefficients(), candidate.quickBoundS));
    });
    expect(result.complete).toBe(true);
    const optimumS = result.evaluation!.predicted.iterationTimeS;
    const p = result.plan!;
    const key = [...least.keys()].find((k) => least.get(k) === optimumS && k.includes(`"pp":${p.pp}`) && k.endsWith(`dp ${p.dp}`))!;
    expect(key).toBeDefined();
    // The plan's cross-site time is mostly the shared link: latency and every crossing's resends.
    expect(outer.get(key)!).toBeGreaterThan(0.95 * optimumS);
    for (const [k, leastS] of least) if (Number.isFinite(leastS)) expect(outer.get(k)!).toBeLessThanOrEqual(leastS * (1 + 1e-9));
    expect(quick.size).toBeGreaterThan(10);
  }, 120_000);
});

describe('baseline spaces\' bounds on random lossy scenarios, against exhaustive search', () => {
  let backends: MipBackend[];
  let highs: HighsWorkerBackend;
  beforeAll(() => { backends = defaultBackends(); highs = new HighsWorkerBackend(); });
  afterAll(async () => { await Promise.all([...backends, highs].map((b) => b.close())); });

  it.each([['pp-across', PP_ACROSS_SPACE], ['production', PRODUCTION_SPACE]] as const)('%s: no bound exceeds a candidate\'s least time', async (_name, restriction) => {
    let audited = 0;
    let candidates = 0;
    const lossy = fc.tuple(smallScenarioArbitrary, fc.constantFrom(1e-5, 1e-4, 1e-3)).map(([spec, lossRate]: [Json, number]) => ({
      ...spec, cluster: { ...spec.cluster, links: spec.cluster.links.map((l: Json) => ({ ...l, lossRate })) },
    }));
    await fc.assert(fc.asyncProperty(lossy, async (spec) => {
      const audit = await auditScenarioBounds(spec, { highs, backends, exhaustiveCapS: 2, mipsPerScenario: 6, gap: 0.01, restriction });
      fc.pre(audit.outcome === 'audited');
      audited++;
      candidates += audit.candidates;
      expect(audit.violations).toEqual([]);
    }), { numRuns: 6, seed: 20261202, endOnFailure: true });
    expect(audited).toBe(6);
    expect(candidates).toBeGreaterThan(6);
  }, 600_000);
});
