/**
 * The outer enumeration: every (configuration, data-parallel degree) pair of the space with a
 * cheap lower bound, so the planner can visit them best-first and prune the rest
 * (docs/formulation.md §4).
 */
import { busiestReplicaMicrobatches, computeCoefficients, maxReplicas, type ConfigCoefficients } from '../formulation/coefficients';
import { enumerateConfigs, replicaLayouts, type ParallelConfig, type ReplicaLayout, type SpaceRestriction } from '../formulation/search-space';
import { StageTables, type SiteStageTimes } from '../formulation/stage-tables';
import { activationsGiB, microbatchesInFlight, stageMemoryTotalGiB } from '../model/memory';
import { pipelinePhaseS } from '../model/pipeline';
import type { Scenario } from '../model/scenario';

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
  const tables = new StageTables(scenario);
  const layoutCache = new Map<number, PipelineLayouts>();
  const layoutsFor = (pp: number) => {
    let layouts = layoutCache.get(pp);
    if (!layouts) { layouts = pipelineLayouts(scenario, replicaLayouts(scenario, pp, restriction)); layoutCache.set(pp, layouts); }
    return layouts;
  };
  for (const config of enumerateConfigs(scenario, restriction)) {
    const { layouts, usableSites, largestMemoryGiB } = layoutsFor(config.pp);
    if (layouts.length === 0) continue;
    const replicas = maxReplicas(scenario, config);
    if (replicas < 1) continue;
    const totalMicrobatches = scenario.training.globalBatchSeqs / config.microBatchSeqs;
    const pipeline = pipelineBounds(scenario, config, tables.siteStageTimes(config), usableSites);
    const memory = oneMicrobatchMemory(tables, config);
    const coefficients = (dp: number) => () => computeCoefficients(scenario, config, dp, layouts, tables);
    // Memory need is non-increasing in dp (only ZeRO shards depend on it, and dp ascends): once
    // one dp fits the largest GPU, every larger one does.
    let fitsFromHere = false;
    for (const dp of tables.dataParallelDegrees(totalMicrobatches, replicas)) {
      if ((dp * config.cp) % config.ep !== 0) continue; // experts are sharded over data-parallel ranks
      const k = busiestReplicaMicrobatches(totalMicrobatches, dp, tables.divisors(totalMicrobatches));
      // A stage that does not fit the largest GPU even with one microbatch in flight rules (config, dp) out.
      if (!fitsFromHere) {
        const needGiB = memory.needGiB(dp);
        if (needGiB > largestMemoryGiB) {
          infeasible.push({ config, dp, quickBoundS: Infinity, memoryNeedGiB: needGiB, coefficients: coefficients(dp) });
          continue;
        }
        fitsFromHere = true;
      }
      candidates.push({
        config,
        dp,
        quickBoundS: Math.max(k * pipeline.slowestStageS, totalMicrobatches / pipeline.fluidRate(dp)) + pipeline.bubbleS,
        coefficients: coefficients(dp),
      });
    }
  }
  return [...candidates.sort((a, b) => a.quickBoundS - b.quickBoundS), ...infeasible];
}

/** The layouts of a pp-stage replica, with the sites they use (in first-use order) and the largest GPU memory among them. */
interface PipelineLayouts {
  readonly layouts: readonly ReplicaLayout[];
  readonly usableSites: readonly number[];
  readonly largestMemoryGiB: number;
}

function pipelineLayouts(scenario: Scenario, layouts: readonly ReplicaLayout[]): PipelineLayouts {
  const usableSites = [...new Set(layouts.flatMap((l) => l.sites))];
  return { layouts, usableSites, largestMemoryGiB: Math.max(...usableSites.map((s) => scenario.sites[s]!.gpu.memoryGiB)) };
}

/** The dp-independent parts of a configuration's quick bound. */
interface PipelineBounds {
  /** The slowest stage's fastest step over the usable sites, s. */
  readonly slowestStageS: number;
  /** Fill/drain bubble at the fastest per-stage steps, s. */
  readonly bubbleS: number;
  /** Microbatches per second dp replicas can process at most (fluid bound). */
  readonly fluidRate: (dp: number) => number;
}

function pipelineBounds(scenario: Scenario, config: ParallelConfig, times: SiteStageTimes, usableSites: readonly number[]): PipelineBounds {
  const stageCount = times.stages.length;
  // Fastest possible step of each stage over the sites layouts can use.
  const fastest: number[] = [];
  for (let j = 0; j < stageCount; j++) {
    let least = Infinity;
    for (const s of usableSites) least = Math.min(least, times.times[s]![j]!.totalS);
    fastest.push(least);
  }
  let slowestStageS = -Infinity;
  for (const step of fastest) slowestStageS = Math.max(slowestStageS, step);
  // Fluid bound: a replica's step is at least the fastest stage time of every site it uses, so its
  // rate is at most a GPU-weighted mix of per-site rates; fill the fastest sites' stage slots first.
  const slots = usableSites.map((s) => {
    let fastestStep = Infinity;
    for (const step of times.times[s]!) fastestStep = Math.min(fastestStep, step.totalS);
    return { rate: 1 / fastestStep, slots: Math.floor(scenario.sites[s]!.gpus / (config.tp * config.cp)) };
  }).sort((a, b) => b.rate - a.rate);
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
  return { slowestStageS, bubbleS: pipelinePhaseS(fastest, 1, { ...config, dp: 1 }).bubbleS, fluidRate };
}

/** Per-GPU memory of a configuration's stages with one microbatch in flight, as a function of dp. */
function oneMicrobatchMemory(tables: StageTables, config: ParallelConfig): { readonly needGiB: (dp: number) => number } {
  const { representative } = tables.pipeline(config.pp, config.virtualStages);
  const allBases = tables.memoryBases(config);
  // Identical stages have identical memory (with one microbatch, every stage holds one): price each distinct stage once.
  const distinct = representative.flatMap((first, j) => (first === j ? [j] : []));
  const bases = distinct.map((j) => allBases[j]!);
  const activations = distinct.map((j) => activationsGiB(allBases[j]!, microbatchesInFlight(config, j, 1)));
  return {
    needGiB: (dp) => {
      const sharding = { dp, cp: config.cp, ep: config.ep, zero: config.zero };
      let need = -Infinity;
      for (let i = 0; i < bases.length; i++) need = Math.max(need, stageMemoryTotalGiB(bases[i]!, sharding, activations[i]!));
      return need;
    },
  };
}
