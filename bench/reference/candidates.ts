// Frozen copy of src/solve/candidates.ts at commit da25fb5 (main before the enumeration perf work, after the pipeline-schedule
// change): the reference the equivalence test (test/candidates-equivalence.test.ts) and bench/enumeration-speed.ts compare against.
/**
 * The outer enumeration: every (configuration, data-parallel degree) pair of the space with a
 * cheap lower bound, so the planner can visit them best-first and prune the rest
 * (docs/formulation.md §4).
 */
import { busiestReplicaMicrobatches, computeCoefficients, fewestMicrobatches, maxReplicas, siteStageTimes, wholeReplicas, type ConfigCoefficients } from './coefficients';
import { dataParallelDegrees, enumerateConfigs, replicaLayouts, type ParallelConfig, type ReplicaLayout, type SpaceRestriction } from '../../src/formulation/search-space';
import { stageMemory } from './memory';
import { fillDrainS, forwardPartS, zeroBubbleShareS } from '../../src/model/pipeline';
import { hasStageFloor, stageFloorAtLeastS, stageFloorFluidBubbleS } from '../../src/model/pipeline-stage-floor';
import type { Scenario } from '../../src/model/scenario';

export interface Candidate {
  readonly config: ParallelConfig;
  readonly dp: number;
  /**
   * Valid for every placement of (config, dp): some replica runs at least the smallest allowed
   * microbatch count >= M/dp at the fastest per-stage speeds, and all replicas together cannot process microbatches faster than
   * the fastest sites' stage slots allow.
   */
  readonly quickBoundS: number;
  /** Computes the full coefficients (memory, layouts) on demand; not cached, so thousands of candidates stay small. */
  readonly coefficients: () => ConfigCoefficients;
  /** Set when (config, dp) cannot fit GPU memory: the largest per-GPU need of its stages with one microbatch, GiB. */
  readonly memoryNeedGiB?: number;
}

export function enumerateCandidates(scenario: Scenario, restriction: SpaceRestriction): Candidate[] {
  const candidates: Candidate[] = [];
  const infeasible: Candidate[] = [];
  const layoutCache = new Map<number, ReplicaLayout[]>();
  const layoutsFor = (pp: number) => {
    let layouts = layoutCache.get(pp);
    if (!layouts) { layouts = replicaLayouts(scenario, pp, restriction); layoutCache.set(pp, layouts); }
    return layouts;
  };
  for (const config of enumerateConfigs(scenario, restriction)) {
    const layouts = layoutsFor(config.pp);
    if (layouts.length === 0) continue;
    const replicas = maxReplicas(scenario, config);
    if (replicas < 1) continue;
    const totalMicrobatches = scenario.training.globalBatchSeqs / config.microBatchSeqs;
    const times = siteStageTimes(scenario, config);
    const usableSites = new Set(layouts.flatMap((l) => l.sites));
    // Fastest possible step of each stage over the sites layouts can use.
    const fastest = times.stages.map((_, j) => Math.min(...[...usableSites].map((s) => times.times[s]![j]!.totalS)));
    const slowestStage = Math.max(...fastest);
    // Forward parts at the fastest step, with the forward share of the usable site whose ZB-H1 fill/drain share
    // (zeroBubbleShareS) is smallest: every term of fillDrainS is then at most any placement's.
    const fastestForward = times.stages.map((_, j) => {
      const shares = [...usableSites].map((s) => forwardPartS(1, times.times[s]![j]!));
      const share = shares.reduce((best, sh) => (zeroBubbleShareS(1, sh) < zeroBubbleShareS(1, best) ? sh : best));
      return fastest[j]! * share;
    });
    const bubbleS = fillDrainS(fastest, fastestForward, config);
    const shares = times.stages.map((_, j) => [...usableSites].map((s) => forwardPartS(1, times.times[s]![j]!)));
    // Fluid bound: a replica's step is at least the fastest stage time of every site it uses, so its
    // rate is at most a GPU-weighted mix of per-site rates; fill the fastest sites' stage slots first.
    const slots = [...usableSites].map((s) => ({
      rate: 1 / Math.min(...times.stages.map((_, j) => times.times[s]![j]!.totalS)),
      slots: Math.floor(scenario.sites[s]!.gpus / (config.tp * config.cp)),
    })).sort((a, b) => b.rate - a.rate);
    const fluidRate = (dp: number) => {
      let need = dp * config.pp;
      let rate = 0;
      for (const site of slots) {
        const used = Math.min(need, site.slots);
        rate += (used / config.pp) * site.rate;
        need -= used;
      }
      return rate;
    };
    const largestMemoryGiB = Math.max(...[...usableSites].map((s) => scenario.sites[s]!.gpu.memoryGiB));
    for (const dp of dataParallelDegrees(totalMicrobatches, replicas, wholeReplicas(scenario, config))) {
      if ((config.tp * dp * config.cp) % (config.ep * config.expertTp) !== 0) continue; // experts are sharded over tp x cp x dp ranks (MoE Parallel Folding, after the freeze)
      const k = busiestReplicaMicrobatches(totalMicrobatches, dp, fewestMicrobatches(config));
      // A stage that does not fit the largest GPU even with one microbatch in flight rules (config, dp) out.
      const plan = { ...config, dp };
      const needGiB = Math.max(...times.stages.map((stage) => stageMemory(scenario, plan, stage, 1).totalGiB));
      if (needGiB > largestMemoryGiB) {
        infeasible.push({ config, dp, quickBoundS: Infinity, memoryNeedGiB: needGiB, coefficients: () => computeCoefficients(scenario, config, dp, layouts, times, restriction.defaultNetworkOnly) });
        continue;
      }
      candidates.push({
        config,
        dp,
        // 1F1B and ZB-H1: the largest stage line at the fastest speeds (eq. 5.9a), or the fluid bound plus the lines' mean bubble.
        quickBoundS: hasStageFloor(config)
          ? Math.max(stageFloorAtLeastS(config, fastest, shares, k), totalMicrobatches / fluidRate(dp) + stageFloorFluidBubbleS(config, fastest, shares))
          : Math.max(k * slowestStage, totalMicrobatches / fluidRate(dp)) + bubbleS,
        coefficients: () => computeCoefficients(scenario, config, dp, layouts, times, restriction.defaultNetworkOnly),
      });
    }
  }
  return [...candidates.sort((a, b) => a.quickBoundS - b.quickBoundS), ...infeasible];
}
