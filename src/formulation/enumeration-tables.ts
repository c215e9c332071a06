/**
 * Per-scenario tables the candidate enumeration shares across configurations
 * (docs/formulation.md §4): stages depend only on (pp, virtual stages), stage times only on the
 * fields of {@link StageTimePlan}, memory bases only on those of {@link MemoryBasisPlan}; and
 * stages with the same layers and ends have the same time and memory basis. Each is computed
 * once and shared, with the cost model's own functions, so every number equals the uncached one.
 * Also the divisor and data-parallel degree lists of the search space.
 */
import { stageMemoryBasis, type MemoryBasisPlan, type StageMemoryBasis } from '../model/memory';
import { balancedLayers, buildStages, type StageLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { stageTime, type StageTime, type StageTimePlan } from '../model/stage-cost';
import { dataParallelDegrees, divisors } from './search-space';

/** The stages of a pp-stage pipeline, and for each stage the first stage with the same time and memory basis. */
export interface PipelineStages {
  readonly stages: readonly StageLayout[];
  /** `representative[j]`: the first stage with stage j's layers, MoE layers and ends (same time, same memory basis). */
  readonly representative: readonly number[];
}

/** Per-site stage times for a configuration (dp-independent), with the optimistic pod assumption (no pod spill). */
export interface SiteStageTimes {
  readonly stages: readonly StageLayout[];
  /** times[site][stage]; identical stages share one object. */
  readonly times: readonly (readonly StageTime[])[];
}

const timeKey = (c: StageTimePlan) => `${c.tp},${c.cp},${c.ep},${c.pp},${c.virtualStages},${c.microBatchSeqs},${c.recompute}`;
const memoryKey = (c: MemoryBasisPlan & StageTimePlan) => `${timeKey(c)},${c.zero}`;

export class EnumerationTables {
  private readonly pipelines = new Map<number, PipelineStages>();
  private readonly times = new Map<string, SiteStageTimes>();
  private readonly memory = new Map<string, readonly StageMemoryBasis[]>();
  private readonly divisorLists = new Map<number, readonly number[]>();
  private readonly degreeLists = new Map<string, readonly number[]>();
  private readonly configValues = new WeakMap<object, { readonly key: object; readonly value: unknown }>();
  private readonly layoutValues = new WeakMap<object, Map<string, unknown>>();

  constructor(private readonly scenario: Scenario) {}

  /** Stages of a pp-stage pipeline with `virtualStages` chunks per stage, balanced layers. */
  pipeline(pp: number, virtualStages: number): PipelineStages {
    const key = pp * 4096 + virtualStages;
    let found = this.pipelines.get(key);
    if (!found) {
      const stages = buildStages(this.scenario, { pp, virtualStages }, balancedLayers(this.scenario.model.layers, pp));
      found = { stages, representative: stages.map((stage) => stages.findIndex((other) => sameShape(stage, other))) };
      this.pipelines.set(key, found);
    }
    return found;
  }

  /** Stage times at every site (no pod spill: sitesUsedGpus 0), computed once per distinct stage. */
  siteStageTimes(config: StageTimePlan): SiteStageTimes {
    const key = timeKey(config);
    let found = this.times.get(key);
    if (!found) {
      const { stages, representative } = this.pipeline(config.pp, config.virtualStages);
      const times = this.scenario.sites.map((site) => {
        const row: StageTime[] = [];
        stages.forEach((stage, j) => row.push(representative[j] === j ? stageTime(this.scenario, config, stage, site, 0) : row[representative[j]!]!));
        return row;
      });
      found = { stages, times };
      this.times.set(key, found);
    }
    return found;
  }

  /** Memory basis of every stage (identical stages share one object). */
  memoryBases(config: MemoryBasisPlan & StageTimePlan): readonly StageMemoryBasis[] {
    const key = memoryKey(config);
    let found = this.memory.get(key);
    if (!found) {
      const { stages, representative } = this.pipeline(config.pp, config.virtualStages);
      const bases: StageMemoryBasis[] = [];
      stages.forEach((stage, j) => bases.push(representative[j] === j ? stageMemoryBasis(this.scenario, config, stage) : bases[representative[j]!]!));
      found = bases;
      this.memory.set(key, found);
    }
    return found;
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
  dataParallelDegrees(totalMicrobatches: number, maxReplicas: number): readonly number[] {
    const key = `${totalMicrobatches}/${maxReplicas}`;
    let found = this.degreeLists.get(key);
    if (!found) { found = dataParallelDegrees(totalMicrobatches, maxReplicas); this.degreeLists.set(key, found); }
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
