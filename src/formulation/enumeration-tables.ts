/**
 * Per-scenario tables the candidate enumeration shares across configurations
 * (docs/formulation.md §4): stages depend only on (pp, virtual stages), stage times only on the
 * fields of {@link StageTimePlan}, memory bases only on those of {@link MemoryBasisPlan}; and
 * stages with the same layers and ends have the same time and memory basis. Each is computed
 * once and shared, with the cost model's own functions, so every number equals the uncached one.
 * The caches are keyed by every field of those types (`fieldKey`: a field added to a type later
 * fails the build until it is keyed). Also the divisor and data-parallel degree lists of the
 * search space.
 */
import { stageMemoryBasis, type MemoryBasisPlan, type StageMemoryBasis } from '../model/memory';
import type { PlanSpec } from '../model/plan-schema';
import { balancedLayers, buildStages, type StageLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { isVShaped } from '../model/schedule-chain';
import { stageTime, type StageTime, type StageTimePlan } from '../model/stage-cost';
import { fieldKey } from './field-key';
import { dataParallelDegrees, divisors } from './search-space';

/** The stages of a pp-stage pipeline, and for each stage the first stage with the same time and memory basis. */
export interface PipelineStages {
  readonly stages: readonly StageLayout[];
  /** `representative[j]`: the first stage with stage j's layers, MoE layers and ends (same time, same memory basis). */
  readonly representative: readonly number[];
  /** The stages that are their own representative, ascending. */
  readonly distinct: readonly number[];
}

/** Per-site stage times for a configuration (dp-independent), with the optimistic pod assumption (no pod spill). */
export interface SiteStageTimes {
  readonly stages: readonly StageLayout[];
  /** times[site][stage]; identical stages share one object. */
  readonly times: readonly (readonly StageTime[])[];
}

/** The plan fields a pipeline's stages depend on (see {@link EnumerationTables.pipeline}). */
type PipelinePlan = Pick<PlanSpec, 'pp' | 'virtualStages'>;

/** Everything a configuration's tables are computed from: its stages, their times and memory bases. */
export type ConfigTablesPlan = PipelinePlan & StageTimePlan & MemoryBasisPlan;

/** Keys over every field of the cached functions' inputs; the compiler rejects a list that leaves one out. */
export const stageTimeKey = fieldKey<StageTimePlan>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'virtualStages', 'microBatchSeqs', 'recompute', 'recomputeModules', 'rankOrder']);
export const configTablesKey = fieldKey<ConfigTablesPlan>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'virtualStages', 'microBatchSeqs', 'recompute', 'recomputeModules', 'zero', 'rankOrder']);

/** What one configuration's stages share with other configurations: times (not by ZeRO) and memory bases. */
export interface ConfigStageTables {
  readonly pipeline: PipelineStages;
  readonly times: SiteStageTimes;
  readonly memoryBases: readonly StageMemoryBasis[];
}

export class EnumerationTables {
  private readonly pipelines = new Map<number, PipelineStages>();
  private readonly times = new Map<string, SiteStageTimes>();
  private readonly configTables = new Map<string, ConfigStageTables>();
  private readonly divisorLists = new Map<number, readonly number[]>();
  private readonly degreeLists = new Map<string, readonly number[]>();
  private readonly configValues = new WeakMap<object, { readonly key: object; readonly value: unknown }>();
  private readonly layoutValues = new WeakMap<object, Map<string, unknown>>();

  constructor(private readonly scenario: Scenario) {}

  /** Stages of a pp-stage pipeline with `virtualStages` chunks per stage, balanced layers; `vShaped`: the chain folded into a V (ZBV, DualPipeV: the loss on stage 0; the layout depends only on the fold, so 'zbv' stands for both). */
  pipeline(pp: number, virtualStages: number, vShaped = false): PipelineStages {
    const key = (pp * 4096 + virtualStages) * 2 + (vShaped ? 1 : 0);
    let found = this.pipelines.get(key);
    if (!found) {
      const stages = buildStages(this.scenario, { pp, virtualStages, schedule: vShaped ? 'zbv' : '1f1b' }, balancedLayers(this.scenario.model.layers, pp));
      const representative = stages.map((stage) => stages.findIndex((other) => sameShape(stage, other)));
      found = { stages, representative, distinct: representative.flatMap((first, j) => (first === j ? [j] : [])) };
      this.pipelines.set(key, found);
    }
    return found;
  }

  /** The stage tables of a configuration: one key built, one lookup (the stage-time key only on a miss). */
  forConfig(config: ConfigTablesPlan & Partial<Pick<PlanSpec, 'schedule'>>): ConfigStageTables {
    // A V (ZBV, DualPipeV) moves the output layer to stage 0: its stages, times and memory differ from a looped chain's.
    const vShaped = config.schedule !== undefined && isVShaped(config.schedule);
    const shape = vShaped ? ' v' : '';
    const key = configTablesKey(config) + shape;
    let found = this.configTables.get(key);
    if (!found) {
      const pipeline = this.pipeline(config.pp, config.virtualStages, vShaped);
      const timesKey = stageTimeKey(config) + shape;
      let times = this.times.get(timesKey);
      if (!times) { times = this.computeTimes(config, pipeline); this.times.set(timesKey, times); }
      found = { pipeline, times, memoryBases: this.computeMemoryBases(config, pipeline) };
      this.configTables.set(key, found);
    }
    return found;
  }

  /** Stage times at every site (no pod spill: sitesUsedGpus 0). */
  siteStageTimes(config: ConfigTablesPlan & Partial<Pick<PlanSpec, 'schedule'>>): SiteStageTimes {
    return this.forConfig(config).times;
  }

  /** Memory basis of every stage (identical stages share one object). */
  memoryBases(config: ConfigTablesPlan & Partial<Pick<PlanSpec, 'schedule'>>): readonly StageMemoryBasis[] {
    return this.forConfig(config).memoryBases;
  }

  /** Stage times computed once per distinct stage. */
  private computeTimes(config: StageTimePlan, { stages, representative }: PipelineStages): SiteStageTimes {
    const times = this.scenario.sites.map((site) => {
      const row: StageTime[] = [];
      stages.forEach((stage, j) => row.push(representative[j] === j ? stageTime(this.scenario, config, stage, site, 0) : row[representative[j]!]!));
      return row;
    });
    return { stages, times };
  }

  private computeMemoryBases(config: MemoryBasisPlan, { stages, representative }: PipelineStages): StageMemoryBasis[] {
    const bases: StageMemoryBasis[] = [];
    stages.forEach((stage, j) => bases.push(representative[j] === j ? stageMemoryBasis(this.scenario, config, stage) : bases[representative[j]!]!));
    return bases;
  }

  /**
   * A value derived from one configuration object and `key` (e.g. its layout list), computed once
   * while both stay the same objects: what every dp of a configuration shares.
   */
  configValue<T>(config: object, key: object, compute: () => T): T {
    const found = this.configValues.get(config);
    if (found && found.key === key) return found.value as T;
    const value = compute();
    this.configValues.set(config, { key, value });
    return value;
  }

  /** A value derived from one replica layout object and `key` (e.g. a virtual stage count), computed once. */
  layoutValue<T>(layout: object, key: string, compute: () => T): T {
    let values = this.layoutValues.get(layout);
    if (!values) { values = new Map(); this.layoutValues.set(layout, values); }
    if (!values.has(key)) values.set(key, compute());
    return values.get(key) as T;
  }

  /** {@link dataParallelDegrees}, shared (do not modify). */
  dataParallelDegrees(totalMicrobatches: number, maxReplicas: number, wholeReplicas: number): readonly number[] {
    const key = `${totalMicrobatches}/${maxReplicas}/${wholeReplicas}`;
    let found = this.degreeLists.get(key);
    if (!found) { found = dataParallelDegrees(totalMicrobatches, maxReplicas, wholeReplicas); this.degreeLists.set(key, found); }
    return found;
  }

  /** Divisors of n, ascending, shared (do not modify). */
  divisors(n: number): readonly number[] {
    let found = this.divisorLists.get(n);
    if (!found) { found = divisors(n); this.divisorLists.set(n, found); }
    return found;
  }
}

/** Whether two stages have the same time and memory basis under every plan (all but their index and chunk split). */
const sameShape = (a: StageLayout, b: StageLayout): boolean =>
  a.layers === b.layers && a.moeLayers === b.moeLayers && a.hasEmbedding === b.hasEmbedding && a.hasOutputLayer === b.hasOutputLayer;
