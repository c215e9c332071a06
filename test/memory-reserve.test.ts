/**
 * cluster.sites[i].memoryReserveGiB: GiB per GPU kept free of everything the memory model counts.
 * evaluate judges fit against the device memory less the reserve, plan searches only plans that
 * leave it free (its bound is over that space), and diagnose asks for the device memory a plan
 * needs with the reserve on top.
 */
import { evaluate } from '../src/model/evaluate';
import { parseScenario } from '../src/model/scenario';
import { plan } from '../src/solve/plan';
import { diagnose } from '../src/diagnose/diagnose';
import { applyRelaxation } from '../src/diagnose/relaxations';
import { FULL_SPACE } from '../src/formulation/search-space';
import { exhaustiveSearch } from '../src/solve/exhaustive';

const base = {
  version: 1,
  name: 'reserve',
  model: { name: 'dense-13b', layers: 40, hidden: 5120, ffnHidden: 13824, heads: 40, kvHeads: 40, vocab: 32000 },
  training: { seqLen: 4096, globalBatchSeqs: 64 },
  cluster: { sites: [{ name: 's', gpuType: 'H100-SXM', gpus: 16 }], links: [] },
};
const withReserve = (reserveGiB: number) => ({ ...base, cluster: { ...base.cluster, sites: [{ ...base.cluster.sites[0]!, memoryReserveGiB: reserveGiB }] } });
const spec = { tp: 2, cp: 1, ep: 1, pp: 1, dp: 8, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 };

describe('memoryReserveGiB', () => {
  it('is an input error at its path when it leaves nothing or is negative', () => {
    expect(() => parseScenario(withReserve(80))).toThrow(/cluster\.sites\[0\]\.memoryReserveGiB: 80 GiB leaves nothing of the 80 GiB per GPU/);
    expect(() => parseScenario(withReserve(-1))).toThrow(/cluster\.sites\[0\]\.memoryReserveGiB: must be a non-negative number/);
    expect(() => parseScenario(withReserve(1e6))).toThrow(/cluster\.sites\[0\]\.memoryReserveGiB: must be at most 100000/);
    // 80 - 0.7 is 79.3 where it is printed, not 79.30000000000001.
    expect(parseScenario(withReserve(0.7)).sites[0]!.memoryCapacityGiB).toBe(79.3);
  });

  it('evaluate: the same plan fits without a reserve and not with one larger than its slack', () => {
    const free = evaluate(parseScenario(base), spec);
    expect(free.fits).toBe(true);
    const peakGiB = free.predicted.memoryGiBPerGpu;
    const slackGiB = 80 - peakGiB;
    const tight = evaluate(parseScenario(withReserve(Math.ceil(slackGiB) + 1)), spec);
    expect(tight.fits).toBe(false);
    expect(tight.violations.join(' ')).toMatch(/needs [\d.]+ GiB per GPU, has 80 less \d+ reserved/);
    expect(tight.predicted.sites[0]!.memoryCapacityGiB).toBe(80 - (Math.ceil(slackGiB) + 1));
    // Time does not depend on the reserve.
    expect(tight.predicted.iterationTimeS).toBe(free.predicted.iterationTimeS);
  });

  it('plan: its plan leaves the reserve free and its bound holds against, and closes on, the exhaustive optimum of that space', async () => {
    const free = await plan(parseScenario(base), { timeLimitS: 5, baselines: false });
    const peakGiB = free.evaluation!.predicted.memoryGiBPerGpu;
    const reserveGiB = Math.ceil(80 - peakGiB) + 2; // the free optimum no longer fits
    const reserved = await plan(parseScenario(withReserve(reserveGiB)), { timeLimitS: 5, baselines: false });
    expect(reserved.plan).toBeDefined();
    expect(reserved.evaluation!.predicted.memoryGiBPerGpu).toBeLessThanOrEqual(80 - reserveGiB);
    // Against the exhaustive enumeration of the same space (the cost model's verdicts, not the MIP's):
    // its optimum leaves the reserve free, is slower than the free optimum, and the planner's
    // bound is a bound on it and its plan within the proven gap of it.
    const exhaustive = exhaustiveSearch(parseScenario(withReserve(reserveGiB)), FULL_SPACE, 120);
    expect(exhaustive.complete).toBe(true);
    const bestS = exhaustive.evaluation!.predicted.iterationTimeS;
    expect(exhaustive.evaluation!.predicted.memoryGiBPerGpu).toBeLessThanOrEqual(80 - reserveGiB);
    expect(bestS).toBeGreaterThan(free.evaluation!.predicted.iterationTimeS);
    expect(reserved.bound.lowerBoundS).toBeLessThanOrEqual(bestS * (1 + 1e-9));
    expect(reserved.evaluation!.predicted.iterationTimeS).toBeLessThanOrEqual(bestS / (1 - reserved.bound.gap) * (1 + 1e-9));
    // The proven gap is below what separates the two optima, so the bound lies above the free
    // optimum: the MIP's memory capacities and the candidates' memory floors keep the reserve too
    // (with the device memory there, the bound could not pass the free optimum, which fits it).
    const freeS = free.evaluation!.predicted.iterationTimeS;
    expect(reserved.bound.gap).toBeLessThan((bestS - freeS) / bestS);
    expect(reserved.bound.lowerBoundS).toBeGreaterThan(freeS);
  });

  it('diagnose: the device memory it asks for covers the plan and the reserve', async () => {
    // 13B on 2 GPUs without pipelining or sharding cannot fit 80 GiB; with a 10 GiB reserve it needs 10 more.
    const small = { ...base, cluster: { sites: [{ name: 's', gpuType: 'H100-SXM', gpus: 2, gpusPerNode: 2, memoryReserveGiB: 10 }], links: [] }, search: { pp: [1], zero: [0], tp: [1, 2], recompute: ['none' as const] } };
    const scenario = parseScenario(small);
    const result = await diagnose(scenario, { reSolveTimeLimitS: 3 });
    expect(result.status).toBe('infeasible');
    const memoryFixes = result.conflicts.flatMap((c) => c.relaxations).filter((r) => r.path === 'cluster.sites[0].gpu.memoryGiB');
    expect(memoryFixes.length).toBeGreaterThan(0);
    for (const fix of memoryFixes) {
      expect(fix.change).toMatch(/10 of it reserved/);
      const edited = parseScenario(applyRelaxation(scenario.spec, scenario, fix));
      expect(edited.sites[0]!.memoryCapacityGiB).toBeCloseTo((fix.newValue as number) - 10, 9);
      // Verified: a plan fits the edited site, in its memory less the reserve.
      const replanned = await plan(edited, { timeLimitS: 3, baselines: false });
      expect(replanned.evaluation!.predicted.memoryGiBPerGpu).toBeLessThanOrEqual(edited.sites[0]!.memoryCapacityGiB);
      expect(replanned.evaluation!.predicted.memoryGiBPerGpu).toBeGreaterThan(edited.sites[0]!.memoryCapacityGiB - 10);
    }
  });
});
