/**
 * The plan space `plan` searches (docs/formulation.md §1): outer parallel configurations,
 * data-parallel degrees, replica layouts over sites, and per-replica microbatch counts.
 * Every plan in this space can be written as a plan JSON and evaluated by the cost model.
 */
import { capabilitiesOf, nativeValues, type Framework } from '../model/framework-capabilities';
import { defaultPlanStages, degreeIssues, scheduleRoundProblem, torchtitanExpertMeshProblem } from '../model/framework-issues';
import { DEFAULT_RANK_ORDER, type PlanSpec, type RankOrder, type Recompute, type RecomputeModule, type Schedule } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { isChunked, isVShaped } from '../model/schedule-chain';

/** The outer discrete choices (kappa): everything but placement and network settings. */
export interface ParallelConfig {
  readonly tp: number;
  readonly cp: number;
  readonly ep: number;
  /** The routed experts' tensor-parallel degree: tp, or 1 (MoE Parallel Folding) when tp > 1. */
  readonly expertTp: number;
  readonly pp: number;
  readonly microBatchSeqs: number;
  readonly schedule: Schedule;
  readonly virtualStages: number;
  readonly recompute: Recompute;
  /** Modules selective recomputation recomputes (PlanSpec.recomputeModules); absent: the attention core. */
  readonly recomputeModules?: RecomputeModule[];
  readonly zero: 0 | 1 | 2 | 3;
  /** How ranks are numbered inside a site (PlanSpec.rankOrder); absent: Megatron-LM's default. */
  readonly rankOrder?: RankOrder;
}

/** A way to lay one pipeline replica on sites: stage j runs on `stageSite[j]`. */
export interface ReplicaLayout {
  readonly id: string;
  readonly stageSite: readonly number[];
  /** Sites the replica uses, in stage order. */
  readonly sites: readonly number[];
}

/** Restrictions used by the baselines (production, pp-across) and by tests. */
export interface SpaceRestriction {
  /** whole: every replica on one site; split: every replica spans two sites; any: both. */
  readonly layouts: 'any' | 'whole' | 'split';
  readonly schedules?: readonly Schedule[];
  /** Only the default network settings (one RoCE flow per GPU pair, hierarchical, no compression). */
  readonly defaultNetworkOnly: boolean;
  /**
   * Only what this framework runs as planned (its native entries in src/model/framework-capabilities.ts):
   * its schedules, ZeRO stages, recomputation, expert tp and stage splits, and the same microbatch
   * count on every replica (docs/formulation.md §8). Absent: the framework-free space.
   */
  readonly framework?: Framework;
}

export const FULL_SPACE: SpaceRestriction = { layouts: 'any', defaultNetworkOnly: false };

/** `restriction` within a framework's space (unchanged without one). */
export const withFramework = (restriction: SpaceRestriction, framework: Framework | undefined): SpaceRestriction =>
  (framework === undefined ? restriction : { ...restriction, framework });

/**
 * The scenario a framework's search runs on: the same, but with gradient compression across sites
 * left to the network post-solver only where the framework has it (neither does today).
 */
export function scenarioForSpace(scenario: Scenario, restriction: SpaceRestriction): Scenario {
  if (restriction.framework === undefined || !scenario.search?.allowGradientCompression) return scenario;
  if (capabilitiesOf(restriction.framework).gradientCompression.level === 'native') return scenario;
  return { ...scenario, search: { ...scenario.search, allowGradientCompression: false } };
}

/** Whether every replica must run the same number of microbatches (the framework splits the batch evenly over data-parallel ranks). */
export const equalMicrobatchesOnly = (restriction: SpaceRestriction): boolean =>
  restriction.framework !== undefined && capabilitiesOf(restriction.framework).perGroupMicrobatches.level !== 'native';

/**
 * Whether data-parallel degree dp of a configuration lies in the space: with equal microbatches,
 * dp divides the M microbatches into shares of at least the schedule's fewest that the framework's
 * schedule runs; torchtitan's expert mesh bounds ep by its data_parallel_shard_degree x cp.
 */
export function dataParallelInSpace(restriction: SpaceRestriction, config: ParallelConfig, totalMicrobatches: number, dp: number, fewest: number): boolean {
  if (equalMicrobatchesOnly(restriction) && (totalMicrobatches % dp !== 0 || totalMicrobatches / dp < fewest)) return false;
  // Its schedule implementation's rounds (torch's interleaved schedules) must divide the M / dp microbatches.
  if (equalMicrobatchesOnly(restriction) && scheduleRoundProblem(restriction.framework!, config.schedule, totalMicrobatches / dp, config.pp) !== undefined) return false;
  if (restriction.framework === 'torchtitan' && torchtitanExpertMeshProblem({ ...config, dp }) !== undefined) return false;
  return true;
}

const POWERS_OF_TWO = [1, 2, 4, 8, 16, 32, 64, 128];

/**
 * Context-parallel degrees searched by default: 1 below 32k tokens; from 32k, 1, 2, 4, 8 and
 * further powers of two while each rank keeps at least 16k tokens (NeMo's long-context runs hold
 * 32k per rank at 512k with cp 16 and 1M with cp 32: calibration.md §F).
 */
export function defaultContextParallelDegrees(seqLen: number): number[] {
  if (seqLen < 32768) return [1];
  return POWERS_OF_TWO.filter((cp) => cp <= 8 || seqLen / cp >= 16384);
}

/**
 * Pipeline degrees searched by default: powers of two up to 64, and when every GPU must be used
 * (`search.allowIdleGpus: false`) also the divisors of the GPU count up to 64, without which a
 * cluster of 280 or 2,240 GPUs (Megatron-LM's 530B runs at tp 8, pp 35) has no plan using them all.
 */
export function defaultPipelineDegrees(scenario: Scenario): number[] {
  const powers = [1, 2, 4, 8, 16, 32, 64];
  if (scenario.search?.allowIdleGpus !== false) return powers;
  const gpus = scenario.sites.reduce((sum, site) => sum + site.gpus, 0);
  const divisors = Array.from({ length: 64 }, (_, i) => i + 1).filter((d) => gpus % d === 0);
  return [...new Set([...powers, ...divisors])].sort((a, b) => a - b);
}

/** Outer configurations allowed by the scenario's `search` block (or the defaults), structurally valid. */
export function enumerateConfigs(scenario: Scenario, restriction: SpaceRestriction): ParallelConfig[] {
  const { model, training, sites } = scenario;
  const search = scenario.search;
  const smallestDomain = Math.min(...sites.map((s) => s.scaleUpDomainGpus));
  const tpValues = (search?.tp ?? POWERS_OF_TWO.filter((t) => t <= smallestDomain)).filter((tp) =>
    model.heads % tp === 0 && (model.kvHeads % tp === 0 || tp % model.kvHeads === 0)
    && sites.every((s) => (tp <= s.scaleUpDomainGpus ? s.scaleUpDomainGpus % tp === 0 : tp % s.scaleUpDomainGpus === 0)));
  const cpValues = (search?.cp ?? defaultContextParallelDegrees(training.seqLen)).filter((cp) => training.seqLen % cp === 0);
  const epValues = (search?.ep ?? (model.moe ? POWERS_OF_TWO.filter((e) => e <= 64) : [1]))
    .filter((ep) => (model.moe ? model.moe.experts % ep === 0 : ep === 1));
  const ppValues = (search?.pp ?? defaultPipelineDegrees(scenario)).filter((pp) => pp <= model.layers);
  const microBatchValues = (search?.microBatchSeqs ?? [1, 2, 4]).filter((b) => training.globalBatchSeqs % b === 0);
  const caps = restriction.framework === undefined ? undefined : capabilitiesOf(restriction.framework);
  // A framework's space: its own schedules (the zero-bubble ones torchtitan runs by default), ZeRO stages and recomputation.
  const defaultSchedules: readonly Schedule[] = caps?.framework === 'torchtitan' ? ['1f1b', 'interleaved', 'interleaved-zb', 'zbv'] : ['1f1b', 'interleaved', 'zb-h1'];
  const schedules = (search?.schedules ?? defaultSchedules).filter((s) => (!restriction.schedules || restriction.schedules.includes(s)) && (!caps || caps.schedules[s].level === 'native'));
  const virtualValues = search?.virtualStages ?? [2, 4];
  // With a fused attention kernel, selective recomputation has nothing to recompute: it equals 'none'.
  const recomputeValues = (search?.recompute ?? ['none', 'selective', 'full'])
    .filter((r) => !(training.flashAttention && r === 'selective' && (search?.recompute ?? []).length === 0))
    .filter((r) => !caps || caps.recompute[r].level === 'native');
  const zeroValues = caps ? nativeValues(caps.zero, search?.zero ?? caps.defaultZero) : search?.zero ?? [1];
  // Megatron-LM's default rank order unless the scenario asks for more. The other order applies
  // where it differs (pp > 1) and Megatron-LM runs it (ep 1, cp 1); elsewhere the default is the
  // configuration's order whatever the list says (at pp 1 the two number ranks alike).
  const rankOrders: readonly (RankOrder | undefined)[] = [...new Set((search?.rankOrders ?? [DEFAULT_RANK_ORDER]).map((o) => (o === DEFAULT_RANK_ORDER ? undefined : o)))];
  const rankOrdersOf = (pp: number, ep: number, cp: number): readonly (RankOrder | undefined)[] => (pp > 1 && ep === 1 && cp === 1 ? rankOrders : [undefined]);
  // The framework's remaining rules (expert tp, its stage split of the default layers, cp/ep/fp8) need the configuration's stages.
  const stageCache = new Map<string, ReturnType<typeof defaultPlanStages>>();
  const stagesOf = (config: ParallelConfig): ReturnType<typeof defaultPlanStages> => {
    const key = `${config.pp}/${config.virtualStages}/${config.schedule}`;
    let laid = stageCache.get(key);
    if (!laid) { laid = defaultPlanStages(scenario, config); stageCache.set(key, laid); }
    return laid;
  };
  const inSearchSpace = (config: ParallelConfig): boolean => {
    if (search?.evenLayerSplit && !isEvenLayerSplit(stagesOf(config))) return false;
    if (!restriction.framework) return true;
    const laid = stagesOf(config);
    return degreeIssues(restriction.framework, scenario, { ...config, pipelineSplit: laid.plan.pipelineSplit }, laid.stages).length === 0;
  };

  const configs: ParallelConfig[] = [];
  for (const tp of tpValues) for (const cp of cpValues) for (const ep of epValues) for (const expertTp of expertTpValues(tp, ep, search?.expertFolding ?? true)) for (const pp of ppValues) {
    for (const microBatchSeqs of microBatchValues) for (const recompute of recomputeValues) for (const zero of zeroValues) {
      for (const schedule of schedules) {
        const chunks = chunksFor(schedule, pp, virtualValues, model.layers);
        if (!isChunked(schedule) && pp === 1 && schedule !== '1f1b') continue; // one stage: every schedule is the same
        for (const virtualStages of chunks) for (const rankOrder of rankOrdersOf(pp, ep, cp)) {
          const config: ParallelConfig = { tp, cp, ep, expertTp, pp, microBatchSeqs, schedule, virtualStages, recompute, zero, ...(rankOrder === undefined ? {} : { rankOrder }) };
          if (inSearchSpace(config)) configs.push(config);
        }
      }
    }
  }
  return configs;
}

/**
 * Every stage and every chunk holds the same number of layers and the embedding and loss are not
 * counted as layers (`search.evenLayerSplit`): the only split Megatron-Core had before 0.9.0
 * (num_layers divisible by pp, and by pp x v with --num-layers-per-virtual-pipeline-stage).
 */
function isEvenLayerSplit(laid: ReturnType<typeof defaultPlanStages>): boolean {
  const split = laid.plan.pipelineSplit;
  if (split !== undefined && (split.embeddingAsLayer || split.lossAsLayer)) return false;
  const chunks = laid.stages.flatMap((stage) => stage.chunkLayers);
  return chunks.every((n) => n === chunks[0]);
}

/**
 * Expert tensor-parallel degrees tried with tp and ep: the experts split like the attention
 * (expertTp = tp), and, with experts sharded over EP and tp > 1, whole experts (expertTp = 1,
 * MoE Parallel Folding, what Megatron-Bridge's MoE recipes run) unless the scenario's
 * `search.expertFolding` is false (Megatron-Core before folding).
 */
export const expertTpValues = (tp: number, ep: number, folding: boolean): readonly number[] => (folding && tp > 1 && ep > 1 ? [tp, 1] : [tp]);

/**
 * Replica layouts for `pp` stages: whole replicas on one site, and replicas split once between
 * two directly linked sites (stages before the cut on the first). Cuts: every stage boundary
 * up to 8 stages, else 7 evenly spaced boundaries.
 */
export function replicaLayouts(scenario: Scenario, pp: number, restriction: SpaceRestriction): ReplicaLayout[] {
  const layouts: ReplicaLayout[] = [];
  if (restriction.layouts !== 'split') {
    for (const site of scenario.sites) {
      layouts.push({ id: `whole(${site.name})`, stageSite: Array.from({ length: pp }, () => site.index), sites: [site.index] });
    }
  }
  if (restriction.layouts !== 'whole' && pp > 1) {
    for (const link of scenario.links) {
      for (const [first, second] of [[link.siteA, link.siteB], [link.siteB, link.siteA]] as const) {
        for (const cut of cutPositions(pp)) {
          layouts.push({
            id: `split(${scenario.sites[first]!.name}:${cut},${scenario.sites[second]!.name}:${pp - cut})`,
            stageSite: Array.from({ length: pp }, (_, j) => (j < cut ? first : second)),
            sites: [first, second],
          });
        }
      }
    }
  }
  return layouts;
}

/** Stage boundaries where a split layout may cut a pp-stage pipeline: every one up to 8 stages, else 7 evenly spaced. */
export function cutPositions(pp: number): number[] {
  if (pp <= 8) return Array.from({ length: pp - 1 }, (_, i) => i + 1);
  const cuts = new Set<number>();
  for (let i = 1; i < 8; i++) cuts.add(Math.round((i * pp) / 8));
  return [...cuts].filter((c) => c > 0 && c < pp).sort((a, b) => a - b);
}

/** Divisors of n, ascending. */
export function divisors(n: number): number[] {
  const small: number[] = [];
  const large: number[] = [];
  for (let d = 1; d * d <= n; d++) {
    if (n % d === 0) {
      small.push(d);
      if (d * d !== n) large.unshift(n / d);
    }
  }
  return [...small, ...large];
}

/**
 * Data-parallel degrees searched for a configuration: divisors of the microbatch total M up to
 * the most replicas the sites' stages hold, plus that count and the most whole replicas the sites
 * hold (uneven microbatch shares make both valid; the second is what a space without split
 * replicas, or a placement that cannot split, reaches).
 */
export function dataParallelDegrees(totalMicrobatches: number, maxReplicas: number, wholeReplicas = maxReplicas): number[] {
  const degrees = new Set(divisors(totalMicrobatches).filter((d) => d <= maxReplicas));
  for (const largest of [maxReplicas, wholeReplicas]) if (largest >= 1 && largest <= totalMicrobatches) degrees.add(largest);
  return [...degrees].sort((a, b) => a - b);
}

/** Turns a configuration, a replica count and groups of (layout, microbatches, replicas) into a plan. */
export function toPlan(
  config: ParallelConfig,
  scenario: Scenario,
  groups: readonly { readonly layout: ReplicaLayout; readonly microbatches: number; readonly replicas: number }[],
): PlanSpec {
  const dp = groups.reduce((sum, g) => sum + g.replicas, 0);
  const { expertTp, ...degrees } = config;
  return {
    ...degrees,
    // expertTp is written only where it differs from tp (folded experts), as a user would write the plan.
    ...(expertTp !== config.tp ? { expertTp } : {}),
    dp,
    placement: {
      replicaGroups: groups.map((g) => ({
        replicas: g.replicas,
        microbatches: g.microbatches,
        stageSites: runLength(g.layout.stageSite).map((run) => ({ site: scenario.sites[run.value]!.name, stages: run.count })),
      })),
    },
  };
}

function runLength(values: readonly number[]): { value: number; count: number }[] {
  const runs: { value: number; count: number }[] = [];
  for (const value of values) {
    const last = runs[runs.length - 1];
    if (last && last.value === value) last.count++;
    else runs.push({ value, count: 1 });
  }
  return runs;
}

/** Whether a plan lies in a restricted space (used to seed a baseline with a plan it contains). */
export function planInSpace(plan: PlanSpec, restriction: SpaceRestriction): boolean {
  if (restriction.schedules && !restriction.schedules.includes(plan.schedule)) return false;
  if (restriction.defaultNetworkOnly && plan.network?.some((s) => s.transport !== 'roce' || s.flowsPerGpuPair !== 1
    || s.collectives !== 'hierarchical' || s.gradientCompression !== 'none')) return false;
  const groups = plan.placement?.replicaGroups ?? [];
  const sitesOf = (g: (typeof groups)[number]) => new Set(g.stageSites.map((r) => r.site)).size;
  if (restriction.layouts === 'whole') return groups.every((g) => sitesOf(g) === 1);
  if (restriction.layouts === 'split') return groups.every((g) => sitesOf(g) === 2 && g.stageSites.length === 2);
  return true;
}

/** Chunks per GPU to try with a schedule: the listed counts (2 or more) for the interleaved ones, 2 for ZBV, 1 otherwise; none with one stage. */
function chunksFor(schedule: Schedule, pp: number, virtualValues: readonly number[], layers: number): number[] {
  if (isVShaped(schedule)) return pp > 1 && 2 * pp <= layers ? [2] : [];
  if (isChunked(schedule)) return virtualValues.filter((v) => v >= 2 && pp > 1 && pp * v <= layers);
  return [1];
}
