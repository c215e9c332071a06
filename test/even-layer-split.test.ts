/**
 * search.evenLayerSplit (docs/formulation.md §1): only plans whose layers split evenly over the
 * pp x v virtual stages, the split Megatron-Core had before 0.9.0. Checked against the stages
 * the plan is laid out with, not against the rule's own arithmetic.
 */
import { enumerateConfigs, FULL_SPACE } from '../src/formulation/search-space';
import { layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { plan } from '../src/solve/plan';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { diagnose } from '../src/diagnose/diagnose';

const spec = {
  version: 1,
  name: 'even-split',
  // 30 layers: 4 stages (8/8/7/7), 8 stages, and 3 stages of 4 chunks (10 per stage, 2.5 per chunk) are uneven.
  model: { name: 'dense-30', layers: 30, hidden: 4096, ffnHidden: 16384, heads: 32, kvHeads: 8, vocab: 32000 },
  training: { seqLen: 4096, globalBatchSeqs: 64 },
  cluster: { sites: [{ name: 's', gpuType: 'H100-SXM', gpus: 64 }], links: [] },
};

const chunkSizes = (scenario: ReturnType<typeof parseScenario>, config: { pp: number; virtualStages: number; schedule: string }) => {
  const laid = layOutPlan(scenario, { tp: 1, cp: 1, ep: 1, dp: 1, microBatchSeqs: 1, recompute: 'none', zero: 1, pp: config.pp, virtualStages: config.virtualStages, schedule: config.schedule });
  return laid.stages.flatMap((s) => s.chunkLayers);
};

describe('search.evenLayerSplit', () => {
  const free = parseScenario(spec);
  const even = parseScenario({ ...spec, search: { evenLayerSplit: true } });

  it('keeps exactly the configurations whose stages and chunks all hold the same layers', () => {
    const all = enumerateConfigs(free, FULL_SPACE);
    const kept = enumerateConfigs(even, FULL_SPACE);
    const key = (c: { tp: number; cp: number; ep: number; pp: number; microBatchSeqs: number; schedule: string; virtualStages: number; recompute: string; zero: number }) =>
      `${c.tp}/${c.cp}/${c.ep}/${c.pp}/${c.microBatchSeqs}/${c.schedule}/${c.virtualStages}/${c.recompute}/${c.zero}`;
    const keptKeys = new Set(kept.map(key));
    let dropped = 0;
    for (const config of all) {
      const sizes = chunkSizes(free, config);
      const evenSizes = sizes.every((n) => n === sizes[0]);
      expect(keptKeys.has(key(config))).toBe(evenSizes);
      if (!evenSizes) dropped++;
    }
    // The rule leaves something out here (pp 4: 8/8/7/7), and keeps pp 2, 3, 5, 6 and 15-way splits.
    expect(dropped).toBeGreaterThan(0);
    expect(kept.some((c) => c.pp === 4)).toBe(false);
    expect(kept.some((c) => c.pp === 2)).toBe(true);
  });

  it('plan returns an evenly split plan, and its bound holds against the exhaustive enumeration of the even space', async () => {
    const restricted = await plan(even, { timeLimitS: 5, baselines: false });
    expect(restricted.plan).toBeDefined();
    const sizes = chunkSizes(even, restricted.plan!);
    expect(sizes.every((n) => n === sizes[0])).toBe(true);
    // The exhaustive enumeration of the same space: its optimum is evenly split too, and the
    // planner's bound is a bound on it (a bound over the restricted candidates, formulation §1).
    const exhaustive = exhaustiveSearch(even, FULL_SPACE, 120);
    expect(exhaustive.complete).toBe(true);
    const best = chunkSizes(even, exhaustive.plan!);
    expect(best.every((n) => n === best[0])).toBe(true);
    expect(restricted.bound.lowerBoundS).toBeLessThanOrEqual(exhaustive.evaluation!.predicted.iterationTimeS * (1 + 1e-9));
    expect(restricted.evaluation!.predicted.iterationTimeS).toBeLessThanOrEqual(exhaustive.evaluation!.predicted.iterationTimeS / (1 - restricted.bound.gap) * (1 + 1e-9));
  });

  it('says so when it leaves no configuration (30 layers, pp 4 only)', async () => {
    const none = parseScenario({ ...spec, search: { pp: [4], evenLayerSplit: true } });
    expect(enumerateConfigs(none, FULL_SPACE)).toHaveLength(0);
    const result = await plan(none, { timeLimitS: 5, baselines: false });
    expect(result.plan).toBeUndefined();
    expect(result.reasons).toEqual([expect.stringContaining("search.evenLayerSplit leaves no stage split with the same layers in every stage and chunk of the model's 30 layers")]);
    // Without the rule, pp 4 (8/8/7/7) plans.
    const uneven = await plan(parseScenario({ ...spec, search: { pp: [4] } }), { timeLimitS: 5, baselines: false });
    expect(uneven.plan?.pp).toBe(4);
  });

  it('diagnose offers turning it off when it is what leaves no plan (4 GPUs all used, tp 1: pp 4 splits 30 layers 8/8/7/7)', async () => {
    const tight = parseScenario({
      ...spec, training: { ...spec.training, globalBatchSeqs: 1 },
      cluster: { sites: [{ name: 's', gpuType: 'H100-SXM', gpus: 4, gpusPerNode: 4 }], links: [] },
      search: { tp: [1], allowIdleGpus: false, evenLayerSplit: true },
    });
    const result = await diagnose(tight, { reSolveTimeLimitS: 3 });
    expect(result.status).toBe('infeasible');
    const fixes = result.conflicts.flatMap((c) => c.relaxations).filter((r) => r.path === 'search.evenLayerSplit');
    expect(fixes).toEqual([expect.objectContaining({ oldValue: true, newValue: false, change: 'allow uneven layer splits (search.evenLayerSplit is true)' })]);
    expect(fixes[0]!.verifiedIterationTimeS).toBeGreaterThan(0);
  });
});
