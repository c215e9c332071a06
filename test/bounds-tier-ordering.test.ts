/**
 * Bounds hold whatever the order of a site's network tiers: GPUs whose scale-up fabric is slower
 * than their NIC (PCIe-class), as fast, or far faster, with odd domain sizes and pods. The ring
 * lower bounds (coefficients' ring chords, F14/F14b, the ring-pattern bound) take a ring's time at
 * a rank count as a bound on every larger count; that holds only if a collective never gets faster
 * as ranks are added, including where a group outgrows the scale-up domain. Each scenario is
 * solved by exhaustive search candidate by candidate; every closed-form bound and the placement
 * MIP's proven optimum must be at most the candidate's least time, and `plan`, with and without
 * the greedy seeding, must return the exhaustive optimum within its gap.
 */
import { FULL_SPACE } from '../src/formulation/search-space';
import fc from 'fast-check';
import { allReduceS, allToAllS, dataParallelTier, groupSpansPods, podRingCapBytesPerS, tierForGroup } from '../src/model/network';
import { parseScenario, type Scenario } from '../src/model/scenario';
import type { Candidate } from '../src/solve/candidates';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends, plan } from '../src/solve/plan';
import { assertCandidateBoundsAtMostLeastTimes } from '../bench/bound-checks';

type Json = any; // scenario JSON built below

interface Variant {
  readonly scaleUpGBps: number;
  readonly nicGbps: number;
  readonly scaleUpDomainGpus?: number;
  readonly gpusPerNode?: number;
  readonly sites?: number;
  readonly gpusPerSite?: number;
  readonly podGpus?: number;
  readonly tp?: readonly number[];
}

/** A 4-layer model on custom GPUs; tp 4 so that dp 4 fills 16 GPUs with a ring past an 8-GPU domain. */
function tierScenario(name: string, v: Variant): Scenario {
  const gpu = { name: 'custom', peakBf16Tflops: 400, memoryGiB: 48, scaleUpGBps: v.scaleUpGBps, scaleUpDomainGpus: v.scaleUpDomainGpus ?? 8, nicGbps: v.nicGbps };
  const names = Array.from({ length: v.sites ?? 1 }, (_, i) => `site-${i + 1}`);
  const sites = names.map((n) => {
    const site: Json = { name: n, gpu, gpus: v.gpusPerSite ?? 16, gpusPerNode: v.gpusPerNode ?? 8 };
    if (v.podGpus !== undefined) Object.assign(site, { podGpus: v.podGpus, podOversubscription: 4 });
    return site;
  });
  const links = names.slice(1).map((n, i) => ({ between: [names[i], n], bandwidthGbps: 800, distanceKm: 50 }));
  const spec: Json = {
    version: 1, name,
    model: { name: 'tiny', layers: 4, hidden: 2048, ffnHidden: 8192, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' },
    training: { seqLen: 2048, globalBatchSeqs: 8 * (v.sites ?? 1), precision: 'bf16' },
    cluster: { sites, links },
    search: { tp: v.tp ?? [1, 2, 4], pp: [1, 2], microBatchSeqs: [1], schedules: ['1f1b', 'zb-h1'], recompute: ['none'], zero: [1] },
  };
  return parseScenario(spec, name);
}

const VARIANTS: [string, Variant][] = [
  ['one site, PCIe-class scale-up (16 GB/s) under a 400 Gb/s NIC', { scaleUpGBps: 16, nicGbps: 400 }],
  ['two sites of 8, 4-GPU domains, PCIe-class scale-up under a 400 Gb/s NIC', { scaleUpGBps: 16, nicGbps: 400, sites: 2, gpusPerSite: 8, gpusPerNode: 4, scaleUpDomainGpus: 4, tp: [2, 4] }],
  ['one site in pods of 8, PCIe-class scale-up', { scaleUpGBps: 16, nicGbps: 400, podGpus: 8 }],
  ['one site, slow NIC (100 Gb/s) over a slow scale-up', { scaleUpGBps: 16, nicGbps: 100 }],
  ['one site, fast NIC (3,200 Gb/s) over NVLink-class scale-up', { scaleUpGBps: 300, nicGbps: 3200 }],
  ['one site, 6-GPU nodes and domains, scale-up and NIC about equal', { scaleUpGBps: 50, nicGbps: 400, gpusPerNode: 6, scaleUpDomainGpus: 6, gpusPerSite: 12, tp: [1, 2] }],
];

let highs: HighsWorkerBackend;
let backends: MipBackend[];
beforeAll(() => { highs = new HighsWorkerBackend(); backends = defaultBackends(); });
afterAll(async () => { await Promise.all([highs, ...backends].map((b) => b.close())); });

describe('a collective never gets faster as ranks are added, whatever the tier order', () => {
  it.each(VARIANTS)('%s', (name, variant) => {
    const site = tierScenario(name, variant).sites[0]!;
    for (const bytes of [1e3, 1e6, 1e9]) {
      let previous = 0;
      for (let ranks = 1; ranks <= 64; ranks++) {
        const timeS = allReduceS(bytes, ranks, tierForGroup(site, ranks, ranks > (site.podGpus ?? Infinity)));
        expect(timeS).toBeGreaterThanOrEqual(previous);
        previous = timeS;
      }
    }
  });
});

describe('collectives are non-decreasing in their rank count for any GPU figures', () => {
  it('all-reduce and all-to-all over random scale-up, NIC, domain and pod figures', () => {
    fc.assert(fc.property(
      fc.double({ min: 1, max: 2000, noNaN: true }), fc.double({ min: 10, max: 6400, noNaN: true }),
      fc.integer({ min: 1, max: 72 }), fc.integer({ min: 1, max: 8 }), fc.constantFrom(1, 2, 7),
      fc.double({ min: 1, max: 1e10, noNaN: true }), fc.integer({ min: 1, max: 200 }),
      (scaleUpGBps, nicGbps, domain, pods, oversubscription, bytes, ranks) => {
        const scenario = tierScenario('random', { scaleUpGBps, nicGbps, scaleUpDomainGpus: domain, gpusPerNode: domain, gpusPerSite: domain * pods * 2, tp: [1] });
        const site = { ...scenario.sites[0]!, podGpus: domain * 2, podOversubscription: oversubscription };
        // A group spans pods only once it is larger than one pod (the most favourable reading for the smaller group).
        const at = (n: number) => tierForGroup(site, n, n > site.podGpus);
        expect(allReduceS(bytes, ranks + 1, at(ranks + 1))).toBeGreaterThanOrEqual(allReduceS(bytes, ranks, at(ranks)));
        expect(allToAllS(bytes, ranks + 1, at(ranks + 1))).toBeGreaterThanOrEqual(allToAllS(bytes, ranks, at(ranks)));
      }), { numRuns: 2000, seed: 16 });
  });

  it('a data-parallel ring (one rank per tensor-parallel group, several rails per domain) over random figures', () => {
    fc.assert(fc.property(
      fc.double({ min: 1, max: 2000, noNaN: true }), fc.double({ min: 10, max: 6400, noNaN: true }),
      fc.integer({ min: 1, max: 72 }), fc.integer({ min: 1, max: 8 }), fc.constantFrom(1, 2, 7),
      fc.double({ min: 1, max: 1e10, noNaN: true }), fc.integer({ min: 1, max: 200 }), fc.constantFrom(1, 2, 3, 4, 8),
      (scaleUpGBps, nicGbps, domain, pods, oversubscription, bytes, ranks, tp) => {
        const scenario = tierScenario('random', { scaleUpGBps, nicGbps, scaleUpDomainGpus: domain, gpusPerNode: domain, gpusPerSite: domain * pods * 2, tp: [1] });
        const site = { ...scenario.sites[0]!, podGpus: domain * 2, podOversubscription: oversubscription };
        const at = (n: number) => dataParallelTier(site, n, tp, n * tp > site.podGpus);
        expect(allReduceS(bytes, ranks + 1, at(ranks + 1))).toBeGreaterThanOrEqual(allReduceS(bytes, ranks, at(ranks)));
      }), { numRuns: 2000, seed: 17 });
  });
});

describe('a data-parallel ring past the scale-up domain moves one NIC per rank the domain holds', () => {
  it('H100 figures: tp 8 rides one NIC, tp 4 two, tp 2 four, tp 1 eight; a slower scale-up caps the rails', () => {
    const site = tierScenario('h100-like', { scaleUpGBps: 450, nicGbps: 400, gpusPerSite: 64 }).sites[0]!;
    const nic = tierForGroup(site, 64, false).bytesPerS;
    const nvlink = tierForGroup(site, 8, false).bytesPerS;
    expect(dataParallelTier(site, 8, 8, false).bytesPerS).toBe(nic);
    expect(dataParallelTier(site, 16, 4, false).bytesPerS).toBe(2 * nic);
    expect(dataParallelTier(site, 32, 2, false).bytesPerS).toBe(4 * nic);
    expect(dataParallelTier(site, 64, 1, false).bytesPerS).toBe(8 * nic);
    expect(8 * nic).toBeLessThan(nvlink);
    // H800-like scale-up (200 GB/s): eight rails would outrun the in-domain hops every channel also makes.
    const h800 = tierScenario('h800-like', { scaleUpGBps: 200, nicGbps: 400, gpusPerSite: 64 }).sites[0]!;
    expect(dataParallelTier(h800, 64, 1, false).bytesPerS).toBe(tierForGroup(h800, 8, false).bytesPerS);
    expect(dataParallelTier(h800, 16, 4, false).bytesPerS).toBe(2 * nic);
    // Inside the domain the ring is the in-domain group's.
    expect(dataParallelTier(site, 2, 4, false)).toEqual(tierForGroup(site, 8, false));
  });

  it('past one pod a ring loads the uplinks with one stream per crossing: capped at max(ranks per pod, rails) NICs over the oversubscription', () => {
    const base = tierScenario('h100-like', { scaleUpGBps: 450, nicGbps: 400, gpusPerSite: 64 }).sites[0]!;
    const nic = tierForGroup(base, 64, false).bytesPerS;
    // Meta's pods: 3,072 GPUs at 1:7; tp 8 puts 384 ranks of a ring in each, tp 1 eight rails' worth.
    const meta = { ...base, podGpus: 3072, podOversubscription: 7 };
    expect(dataParallelTier(meta, 128, 8, true).bytesPerS).toBe(nic);
    expect(dataParallelTier(meta, 1024, 1, true).bytesPerS).toBe(dataParallelTier(meta, 1024, 1, false).bytesPerS);
    // Pods of 16 GPUs at 4:1: tp 8 leaves 2 ranks per pod, half a NIC; tp 4 four, a whole NIC of its two rails.
    const small = { ...base, podGpus: 16, podOversubscription: 4 };
    expect(dataParallelTier(small, 8, 8, true).bytesPerS).toBeCloseTo(nic / 2, 6);
    expect(dataParallelTier(small, 16, 4, true).bytesPerS).toBeCloseTo(nic, 6);
    expect(dataParallelTier(small, 16, 4, false).bytesPerS).toBeCloseTo(2 * nic, 6);
    // Spacing wider than a pod: one rank per pod, every crossing on the oversubscribed layer.
    expect(dataParallelTier(small, 4, 32, true).bytesPerS).toBeCloseTo(nic / 4, 6);
    // Context parallelism's ring (ranks tp apart) takes the same cap.
    expect(podRingCapBytesPerS(small, 8)).toBeCloseTo(nic / 2, 6);
    expect(podRingCapBytesPerS(meta, 8)).toBeGreaterThan(nic);
    // Pods smaller than the domain (4 GPUs in an 8-GPU domain, 4:1): the ring's four rails at tp 2
    // leave through NICs of two pods, so four NICs over the oversubscription, not the pod's two ranks'.
    const tiny = { ...base, podGpus: 4, podOversubscription: 4 };
    expect(dataParallelTier(tiny, 16, 2, true).bytesPerS).toBeCloseTo(nic, 6);
    // Uplinks faster than the NICs (oversubscription below 1) leave the NICs as the limit: never faster.
    const under = { ...base, podGpus: 16, podOversubscription: 0.5 };
    expect(dataParallelTier(under, 16, 4, true).bytesPerS).toBeCloseTo(dataParallelTier(under, 16, 4, false).bytesPerS, 6);
    expect(tierForGroup(under, 32, true).bytesPerS).toBeCloseTo(tierForGroup(under, 32, false).bytesPerS, 6);
  });

  it('a group is spread over pods only when the site spills out of one and the group is larger than a pod', () => {
    const site = { ...tierScenario('h100-like', { scaleUpGBps: 450, nicGbps: 400, gpusPerSite: 64 }).sites[0]!, podGpus: 16, podOversubscription: 4 };
    expect(groupSpansPods(site, 64, 32)).toBe(true);
    expect(groupSpansPods(site, 64, 16)).toBe(false);
    expect(groupSpansPods(site, 16, 32)).toBe(false);
    // Inside one scale-up domain a group's traffic never reaches a NIC, however small the pods.
    expect(groupSpansPods({ ...site, podGpus: 4 }, 64, 8)).toBe(false);
    // Not oversubscribed: no pod to slow it.
    expect(groupSpansPods({ ...site, podOversubscription: 1 }, 64, 32)).toBe(false);
  });
});

describe.each(VARIANTS)('bounds at or below the exhaustive optimum: %s', (name, variant) => {
  const scenario = tierScenario(name, variant);
  const visited: { candidate: Candidate; leastS: number }[] = [];
  const started = Date.now();
  const exhaustive = exhaustiveSearch(scenario, FULL_SPACE, 60, (candidate, leastS) => visited.push({ candidate, leastS }));
  if (process.env['BOUND_VERBOSE']) console.log(`${name}: exhaustive ${(Date.now() - started) / 1000} s, ${visited.length} candidates`);
  const fitting = visited.filter((v) => Number.isFinite(v.leastS));

  it('every closed-form bound and the placement MIP are at most each candidate\'s least time', async () => {
    expect(exhaustive.complete).toBe(true);
    expect(fitting.length).toBeGreaterThan(0);
    await assertCandidateBoundsAtMostLeastTimes(scenario, fitting, highs);
  }, 120_000);

  it.each([0, 20])('plan with %i greedy seeds returns the exhaustive optimum within its gap', async (heuristicSeeds) => {
    const optimumS = exhaustive.evaluation!.predicted.iterationTimeS;
    const result = await plan(scenario, { timeLimitS: 20, gap: 0.01, baselines: false, backends, heuristicSeeds });
    expect(result.status).toBe('optimal');
    const planS = result.evaluation!.predicted.iterationTimeS;
    expect(planS).toBeGreaterThanOrEqual(optimumS * (1 - 1e-9));
    expect(planS).toBeLessThanOrEqual((optimumS / 0.99) * (1 + 1e-9));
    expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimumS * (1 + 1e-9));
  }, 60_000);
});
