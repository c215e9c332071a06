/**
 * The outer enumeration: every (configuration, data-parallel degree) pair of the space with a
 * cheap lower bound, so the planner can visit them best-first and prune the rest
 * (docs/formulation.md §4).
 */
import { computeCoefficients, maxReplicas, wholeReplicas, type ConfigCoefficients } from '../formulation/coefficients';
import { busiestReplicaMicrobatches, fewestMicrobatches } from '../formulation/microbatch-counts';
import { dataParallelInSpace, enumerateConfigs, equalMicrobatchesOnly, replicaLayouts, type ParallelConfig, type ReplicaLayout, type SpaceRestriction } from '../formulation/search-space';
import { EnumerationTables, type ConfigStageTables, type SiteStageTimes } from '../formulation/enumeration-tables';
import { CALIBRATION, NETWORK } from '../model/calibration-constants';
import { activationsGiB, microbatchesInFlight, stageMemoryTotalGiB, type StageMemoryBasis } from '../model/memory';
import { fillDrainS, forwardPartS, forwardShareTermS } from '../model/pipeline';
import { hasStageFloor, stageFloorAtLeastS, stageFloorFluidBubbleS } from '../model/pipeline-stage-floor';
import { spanFloorAtLeastS } from '../model/pipeline-span-floor';
import { rankOrderOf, type Schedule } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import type { StageTimePlan } from '../model/stage-cost';

export interface Candidate {
  readonly config: ParallelConfig;
  readonly dp: number;
  /**
   * Valid for every placement of (config, dp): some replica runs at least the smallest allowed
   * microbatch count >= M/dp at the fastest per-stage speeds, and all replicas together cannot process microbatches faster than
   * the fastest sites' stage slots allow.
   */
  readonly quickBoundS: number;
  /**
   * A lower bound on the busiest replica's pipeline phase that is too slow to compute for every
   * candidate (1F1B and ZB-H1: the span floor, eq. 5.11, at the quick bound's times; 0 for the
   * other schedules): the refine phase raises the bound of the candidates it visits with it.
   */
  readonly pipelineFloorS: () => number;
  /** Computes the full coefficients (memory, layouts) on demand; not cached, so thousands of candidates stay small. */
  readonly coefficients: () => ConfigCoefficients;
  /** Set when (config, dp) cannot fit GPU memory: the largest per-GPU need of its stages with one microbatch, GiB. */
  readonly memoryNeedGiB?: number;
}

/**
 * The enumeration tables of a scenario, shared by every enumeration of the same scenario object
 * (the main search and both baselines of one `plan` call enumerate the same scenario): the tables
 * read nothing but the scenario and the calibration constants, which a profile may change in
 * between (`applyFactorValues`), so those are part of the key.
 */
const tablesByScenario = new WeakMap<Scenario, { readonly constants: string; readonly tables: EnumerationTables }>();
function tablesOf(scenario: Scenario): EnumerationTables {
  const constants = JSON.stringify([CALIBRATION, NETWORK]);
  const found = tablesByScenario.get(scenario);
  if (found && found.constants === constants) return found.tables;
  const tables = new EnumerationTables(scenario);
  tablesByScenario.set(scenario, { constants, tables });
  return tables;
}

export function enumerateCandidates(scenario: Scenario, restriction: SpaceRestriction): Candidate[] {
  const candidates: Candidate[] = [];
  const infeasible: Candidate[] = [];
  const tables = tablesOf(scenario);
  const layoutCache = new Map<string, PipelineLayouts>();
  // Rank order tp-cp-ep-pp-dp is modelled for replicas whole on one site (layOutPlan refuses split ones).
  const layoutsFor = (config: ParallelConfig) => {
    const wholeOnly = rankOrderOf(config) === 'tp-cp-ep-pp-dp';
    const key = `${config.pp}${wholeOnly ? ' whole' : ''}`;
    let layouts = layoutCache.get(key);
    if (!layouts) {
      const all = replicaLayouts(scenario, config.pp, restriction);
      layouts = pipelineLayouts(scenario, wholeOnly ? all.filter((l) => l.sites.length === 1) : all);
      layoutCache.set(key, layouts);
    }
    return layouts;
  };
  // Configurations that differ only in schedule or ZeRO share stage times: their fastest steps
  // are keyed by the tables' shared object. The bubble and the one-microbatch memory, which also
  // depend on the schedule, are cheap enough to compute for each configuration.
  const stepsCache = new Map<SiteStageTimes, FastestSteps>();
  for (const config of enumerateConfigs(scenario, restriction)) {
    const { layouts, usableSites, largestMemoryGiB } = layoutsFor(config);
    if (layouts.length === 0) continue;
    const replicas = maxReplicas(scenario, config);
    if (replicas < 1) continue;
    const totalMicrobatches = scenario.training.globalBatchSeqs / config.microBatchSeqs;
    const stageTables = tables.forConfig(config);
    let steps = stepsCache.get(stageTables.times);
    if (!steps) { steps = fastestSteps(scenario, config, stageTables.times, usableSites); stepsCache.set(stageTables.times, steps); }
    const fastest = steps;
    // Every term of fillDrainS is at most any placement's at the fastest steps.
    const bubbleS = fillDrainS(steps.fastestS, fastestForwardS(steps, config.schedule), config);
    let memory: OneMicrobatchMemory | undefined;
    const equalMicrobatches = equalMicrobatchesOnly(restriction);
    const coefficients = (dp: number) => () => computeCoefficients(scenario, config, dp, layouts, tables, equalMicrobatches, restriction.defaultNetworkOnly);
    const divisorsOfTotal = tables.divisors(totalMicrobatches);
    // Memory need is non-increasing in dp (only ZeRO shards depend on it, and dp ascends): once
    // one dp fits the largest GPU, every larger one does.
    let fitsFromHere = false;
    for (const dp of degreesInSpace(scenario, config, tables.dataParallelDegrees(totalMicrobatches, replicas, wholeReplicas(scenario, config)), totalMicrobatches)) {
      if ((config.tp * dp * config.cp) % (config.ep * config.expertTp) !== 0) continue; // experts are sharded over tp x cp x dp ranks (MoE Parallel Folding)
      if (restriction.framework !== undefined && !dataParallelInSpace(restriction, config, totalMicrobatches, dp, fewestMicrobatches(config))) continue;
      const k = busiestReplicaMicrobatches(totalMicrobatches, dp, fewestMicrobatches(config), divisorsOfTotal);
      // A stage that does not fit the largest GPU even with one microbatch in flight rules (config, dp) out.
      if (!fitsFromHere) {
        memory ??= oneMicrobatchMemory(stageTables, config);
        const needGiB = oneMicrobatchNeedGiB(memory, config, dp);
        if (needGiB > largestMemoryGiB) {
          infeasible.push({ config, dp, quickBoundS: Infinity, memoryNeedGiB: needGiB, pipelineFloorS: () => Infinity, coefficients: coefficients(dp) });
          continue;
        }
        fitsFromHere = true;
      }
      candidates.push({
        config,
        dp,
        quickBoundS: quickBoundS(config, steps, k, totalMicrobatches / fluidRate(steps.siteSlots, config.pp, dp), bubbleS),
        pipelineFloorS: hasStageFloor(config) ? once(() => spanFloorAtLeastS(config, fastest.fastestS, fastest.forwardShares, Math.min(k, Math.max(1, Math.floor(QUICK_SPAN_FLOOR_SIZE / config.pp))))) : () => 0,
        coefficients: coefficients(dp),
      });
    }
  }
  return [...candidates.sort((a, b) => a.quickBoundS - b.quickBoundS), ...infeasible];
}

/**
 * Stage-microbatch pairs up to which a candidate's span floor is simulated (at most about 0.6 ms;
 * the refine phase visits hundreds); past it, the fewest microbatches within it (the span never
 * falls as microbatches are added).
 */
const QUICK_SPAN_FLOOR_SIZE = 4096;

/** `compute` evaluated on the first call only. */
function once(compute: () => number): () => number {
  let value: number | undefined;
  return () => (value ??= compute());
}

/**
 * The data-parallel degrees searched: all of `degrees`, or with `search.allowIdleGpus: false` only
 * the one that uses every GPU of every site (dp x tp x cp x pp equal to all GPUs: no site can then
 * hold more than it has, so each is full), when it is a whole number of replicas of at least one
 * microbatch each.
 */
function degreesInSpace(scenario: Scenario, config: ParallelConfig, degrees: readonly number[], totalMicrobatches: number): readonly number[] {
  if (scenario.search?.allowIdleGpus !== false) return degrees;
  const allGpus = scenario.sites.reduce((sum, site) => sum + site.gpus, 0);
  const dp = allGpus / (config.tp * config.cp * config.pp);
  return Number.isInteger(dp) && dp <= totalMicrobatches ? [dp] : [];
}

/** The layouts of a pp-stage replica, with the sites they use (in first-use order) and the largest GPU memory among them. */
interface PipelineLayouts {
  readonly layouts: readonly ReplicaLayout[];
  readonly usableSites: readonly number[];
  readonly largestMemoryGiB: number;
}

function pipelineLayouts(scenario: Scenario, layouts: readonly ReplicaLayout[]): PipelineLayouts {
  const usableSites = [...new Set(layouts.flatMap((l) => l.sites))];
  return { layouts, usableSites, largestMemoryGiB: Math.max(...usableSites.map((s) => scenario.sites[s]!.memoryCapacityGiB)) };
}

/** A usable site's stage slots (tp x cp GPU groups) and the fastest rate one slot's stage can run at. */
interface SiteSlots {
  /** Microbatch steps per second of the site's fastest stage. */
  readonly rate: number;
  readonly slots: number;
}

/** The dp-independent, schedule-independent parts of a configuration's quick bound. */
interface FastestSteps {
  /** Fastest possible step of each stage over the usable sites, s. */
  readonly fastestS: readonly number[];
  /** The slowest of those, s. */
  readonly slowestStageS: number;
  /** Usable sites, fastest rate first. */
  readonly siteSlots: readonly SiteSlots[];
  /** Forward shares of each stage's step at each usable site. */
  readonly forwardShares: readonly (readonly number[])[];
}

/** Cached by the stage times' object: reads only the fields those times are keyed by (and the pp-stage layouts' sites). */
function fastestSteps(scenario: Scenario, config: StageTimePlan, times: SiteStageTimes, usableSites: readonly number[]): FastestSteps {
  const fastestS: number[] = [];
  for (let j = 0; j < times.stages.length; j++) {
    let least = Infinity;
    for (const s of usableSites) least = Math.min(least, times.times[s]![j]!.totalS);
    fastestS.push(least);
  }
  let slowestStageS = -Infinity;
  for (const step of fastestS) slowestStageS = Math.max(slowestStageS, step);
  const siteSlots = usableSites.map((s): SiteSlots => {
    let fastestStep = Infinity;
    for (const step of times.times[s]!) fastestStep = Math.min(fastestStep, step.totalS);
    return { rate: 1 / fastestStep, slots: Math.floor(scenario.sites[s]!.gpus / (config.tp * config.cp)) };
  }).sort((a, b) => b.rate - a.rate);
  const forwardShares = fastestS.map((_, j) => usableSites.map((s) => forwardPartS(1, times.times[s]![j]!)));
  return { fastestS, forwardShares, slowestStageS, siteSlots };
}

/**
 * Forward parts at the fastest steps for the schedule's fill/drain: each stage's forward share
 * at the usable site whose per-stage term (S x g(share), forwardShareTermS) is least, so that each
 * term is at most any placement's. The schedules order the shares differently (ZB-H1 and ZBV on
 * either side of 1/3, DualPipeV by p); for those whose fill/drain ignores the share, the first.
 */
function fastestForwardS(steps: FastestSteps, schedule: Schedule): number[] {
  const term = forwardShareTermS(schedule, steps.fastestS.length);
  return steps.fastestS.map((fastest, j) => {
    const shares = steps.forwardShares[j]!;
    const share = term === undefined ? shares[0]! : shares.reduce((best, sh) => (term(1, sh) < term(1, best) ? sh : best));
    return fastest * share;
  });
}

/**
 * The quick bound (docs/formulation.md §4, step 1): the busiest replica's k steps at the fastest
 * speeds, or the fluid bound, plus the least bubble; for 1F1B and ZB-H1, whose bubble depends on
 * which stage is slowest (eq. 5.9a), the largest stage line at the fastest speeds, or the fluid
 * bound plus the stage lines' mean bubble.
 */
function quickBoundS(config: ParallelConfig, steps: FastestSteps, k: number, fluidS: number, bubbleS: number): number {
  if (!hasStageFloor(config)) return Math.max(k * steps.slowestStageS, fluidS) + bubbleS;
  return Math.max(stageFloorAtLeastS(config, steps.fastestS, steps.forwardShares, k), fluidS + stageFloorFluidBubbleS(config, steps.fastestS, steps.forwardShares));
}

/**
 * Fluid bound: a replica's step is at least the fastest stage time of every site it uses, so its
 * rate is at most a GPU-weighted mix of per-site rates; fill the fastest sites' stage slots first.
 * Microbatches per second of dp replicas of pp stages at most.
 */
function fluidRate(siteSlots: readonly SiteSlots[], pp: number, dp: number): number {
  let need = dp * pp;
  let rate = 0;
  for (const site of siteSlots) {
    const used = Math.min(need, site.slots);
    rate += (used / pp) * site.rate;
    need -= used;
  }
  return rate;
}

/** The distinct stages' memory bases and activations with one microbatch in flight (every stage then holds one). */
interface OneMicrobatchMemory {
  readonly bases: readonly StageMemoryBasis[];
  readonly activationsGiB: readonly number[];
}

function oneMicrobatchMemory({ pipeline, memoryBases }: ConfigStageTables, config: ParallelConfig): OneMicrobatchMemory {
  // Identical stages have identical memory: price each distinct stage once.
  return {
    bases: pipeline.distinct.map((j) => memoryBases[j]!),
    activationsGiB: pipeline.distinct.map((j) => activationsGiB(memoryBases[j]!, microbatchesInFlight(config, j, 1))),
  };
}

/** The largest per-GPU memory need of the configuration's stages with one microbatch in flight, GiB. */
function oneMicrobatchNeedGiB(memory: OneMicrobatchMemory, config: ParallelConfig, dp: number): number {
  const sharding = { tp: config.tp, dp, cp: config.cp, ep: config.ep, expertTp: config.expertTp, zero: config.zero };
  let need = -Infinity;
  for (let i = 0; i < memory.bases.length; i++) need = Math.max(need, stageMemoryTotalGiB(memory.bases[i]!, sharding, memory.activationsGiB[i]!));
  return need;
}
