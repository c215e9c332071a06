/**
 * Turns a plan into a layout: the layers of every pipeline stage (and of each virtual chunk),
 * the site of every stage of every replica group, and microbatches per replica. Structural
 * errors (a degree that cannot divide the model, a stage count that does not add up, an
 * unknown site) are input errors; capacity problems are left to the evaluator as violations.
 */
import { planSchema, type PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import { isMoeLayer } from './transformer';
import { ScenarioValidationError, issuesFromZod, type InputIssue } from './validation-error';

/** One pipeline stage: the same layers in every replica. */
export interface StageLayout {
  readonly index: number;
  readonly layers: number;
  readonly moeLayers: number;
  /** Layers of each of the `virtualStages` chunks this stage runs, in chunk order. */
  readonly chunkLayers: readonly number[];
  readonly hasEmbedding: boolean;
  readonly hasOutputLayer: boolean;
}

/** Identical pipeline replicas, each with stage `j` on site `stageSite[j]`. */
export interface ReplicaGroupLayout {
  readonly replicas: number;
  readonly stageSite: readonly number[];
  /** Microbatches each replica runs per iteration (may be fractional if the batch does not divide). */
  readonly microbatches: number;
}

/** Upper bound on replica groups x stages x chunks, so that a layout stays small enough to evaluate quickly. */
const MAX_STAGE_SLOTS = 1_000_000;

export interface PlanLayout {
  readonly plan: PlanSpec;
  readonly stages: readonly StageLayout[];
  readonly groups: readonly ReplicaGroupLayout[];
}

/**
 * `layout` with other per-link network settings. Settings change no stage, group or degree, so
 * nothing is parsed or laid out again (callers pass settings built from the scenario's links).
 */
export function withNetworkSettings(layout: PlanLayout, network: PlanSpec['network']): PlanLayout {
  return { ...layout, plan: { ...layout.plan, network } };
}

/** Parses and lays out a plan against a scenario; throws {@link ScenarioValidationError} on structural errors. */
export function layOutPlan(scenario: Scenario, input: unknown, pathPrefix = 'plan'): PlanLayout {
  const parsed = planSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new ScenarioValidationError(issuesFromZod(parsed.error, pathPrefix));
  const plan = parsed.data;
  const issues: InputIssue[] = [];
  const at = (key: string) => `${pathPrefix}.${key}`;
  checkDegrees(scenario, plan, issues, at);
  const layersPerStage = resolveLayersPerStage(scenario, plan, issues, at);
  const groups = resolveGroups(scenario, plan, issues, at);
  if (issues.length > 0) throw new ScenarioValidationError(issues);
  return { plan, stages: buildStages(scenario, plan, layersPerStage), groups };
}

function checkDegrees(scenario: Scenario, plan: PlanSpec, issues: InputIssue[], at: (key: string) => string): void {
  const model = scenario.model;
  if (model.heads % plan.tp !== 0) issues.push({ path: at('tp'), message: `${plan.tp} does not divide ${model.heads} attention heads` });
  else if (model.kvHeads % plan.tp !== 0 && plan.tp % model.kvHeads !== 0) {
    issues.push({ path: at('tp'), message: `${plan.tp} neither divides nor is a multiple of ${model.kvHeads} kv heads` });
  }
  for (const site of scenario.sites) {
    const node = site.scaleUpDomainGpus;
    if (plan.tp <= node ? node % plan.tp !== 0 : plan.tp % node !== 0) {
      issues.push({ path: at('tp'), message: `${plan.tp} does not divide the ${node}-GPU scale-up domain at ${site.name}` });
      break;
    }
  }
  if (scenario.training.seqLen % plan.cp !== 0) {
    issues.push({ path: at('cp'), message: `${plan.cp} does not divide seqLen ${scenario.training.seqLen}` });
  }
  if (!model.moe && plan.ep !== 1) issues.push({ path: at('ep'), message: 'expert parallelism needs a MoE model (model.moe)' });
  if (model.moe && model.moe.experts % plan.ep !== 0) {
    issues.push({ path: at('ep'), message: `${plan.ep} does not divide ${model.moe.experts} experts` });
  }
  if (plan.ep > 1 && (plan.dp * plan.cp) % plan.ep !== 0) {
    issues.push({ path: at('ep'), message: `${plan.ep} does not divide dp x cp = ${plan.dp * plan.cp} (experts are sharded over data-parallel ranks)` });
  }
  if (plan.schedule === 'interleaved' && plan.virtualStages < 2) {
    issues.push({ path: at('virtualStages'), message: 'the interleaved schedule needs at least 2 virtual stages' });
  }
  if (plan.schedule !== 'interleaved' && plan.virtualStages !== 1) {
    issues.push({ path: at('virtualStages'), message: `${plan.virtualStages} virtual stages need schedule 'interleaved' (got '${plan.schedule}')` });
  }
  if (plan.pp * plan.virtualStages > model.layers) {
    issues.push({ path: at('pp'), message: `${plan.pp} stages x ${plan.virtualStages} chunks exceed ${model.layers} layers` });
  }
}

function resolveLayersPerStage(scenario: Scenario, plan: PlanSpec, issues: InputIssue[], at: (key: string) => string): number[] {
  const given = plan.placement?.layersPerStage;
  const layers = scenario.model.layers;
  if (given === undefined) return balancedLayers(layers, plan.pp);
  if (given.length !== plan.pp) {
    issues.push({ path: at('placement.layersPerStage'), message: `lists ${given.length} stages, pp is ${plan.pp}` });
  } else if (given.reduce((sum, n) => sum + n, 0) !== layers) {
    issues.push({ path: at('placement.layersPerStage'), message: `adds up to ${given.reduce((s, n) => s + n, 0)} layers, the model has ${layers}` });
  }
  given.forEach((n, stage) => {
    if (n < plan.virtualStages) {
      issues.push({ path: at(`placement.layersPerStage[${stage}]`), message: `${n} layers cannot fill ${plan.virtualStages} virtual chunks` });
    }
  });
  return [...given];
}

/**
 * Splits layers over stages as evenly as possible; the extra layers go to the middle stages (the
 * ends hold embedding and logits): to the stages nearest the centre, the lower one first on a
 * tie, which is the contiguous block of `extra` stages starting at floor((stages - extra) / 2).
 */
export function balancedLayers(layers: number, stages: number): number[] {
  const base = Math.floor(layers / stages);
  const extra = layers - base * stages;
  const firstWithExtra = Math.floor((stages - extra) / 2);
  const out = new Array<number>(stages);
  for (let i = 0; i < stages; i++) out[i] = i >= firstWithExtra && i < firstWithExtra + extra ? base + 1 : base;
  return out;
}

function resolveGroups(scenario: Scenario, plan: PlanSpec, issues: InputIssue[], at: (key: string) => string): ReplicaGroupLayout[] {
  const { globalBatchSeqs } = scenario.training;
  const defaultMicrobatches = globalBatchSeqs / (plan.dp * plan.microBatchSeqs);
  if (plan.placement === undefined) {
    if (scenario.sites.length > 1) {
      issues.push({ path: at('placement'), message: `is required: the scenario has ${scenario.sites.length} sites` });
      return [];
    }
    return [{ replicas: plan.dp, stageSite: Array.from({ length: plan.pp }, () => 0), microbatches: defaultMicrobatches }];
  }
  const siteIndex = new Map(scenario.sites.map((site) => [site.name, site.index]));
  const stageSlots = plan.placement.replicaGroups.length * plan.pp * plan.virtualStages;
  if (stageSlots > MAX_STAGE_SLOTS) {
    issues.push({ path: at('placement.replicaGroups'), message: `${plan.placement.replicaGroups.length} groups x ${plan.pp} stages x ${plan.virtualStages} chunks exceed ${MAX_STAGE_SLOTS}; merge identical groups` });
    return [];
  }
  const groups: ReplicaGroupLayout[] = [];
  let replicas = 0;
  plan.placement.replicaGroups.forEach((group, g) => {
    const path = `placement.replicaGroups[${g}]`;
    replicas += group.replicas;
    const stageSite: number[] = [];
    group.stageSites.forEach((run, r) => {
      const site = siteIndex.get(run.site);
      if (site === undefined) issues.push({ path: at(`${path}.stageSites[${r}].site`), message: `names no site: '${run.site}'` });
      for (let i = 0; i < run.stages && stageSite.length <= plan.pp; i++) stageSite.push(site ?? 0);
    });
    if (stageSite.length !== plan.pp) {
      const placed = group.stageSites.reduce((sum, run) => sum + run.stages, 0);
      issues.push({ path: at(`${path}.stageSites`), message: `places ${placed} stages, pp is ${plan.pp}` });
    }
    groups.push({ replicas: group.replicas, stageSite, microbatches: group.microbatches ?? defaultMicrobatches });
  });
  if (replicas !== plan.dp) {
    issues.push({ path: at('placement.replicaGroups'), message: `hold ${replicas} replicas in all, dp is ${plan.dp}` });
  }
  return groups;
}

export function buildStages(scenario: Scenario, plan: Pick<PlanSpec, 'pp' | 'virtualStages'>, layersPerStage: readonly number[]): StageLayout[] {
  const v = plan.virtualStages;
  const chunkLayers = layersPerStage.map((layers) => balancedLayers(layers, v));
  // Virtual stage q = chunk * pp + stage runs the q-th contiguous block of layers.
  const firstLayer: number[][] = layersPerStage.map(() => []);
  let next = 0;
  for (let chunk = 0; chunk < v; chunk++) {
    for (let stage = 0; stage < plan.pp; stage++) {
      firstLayer[stage]![chunk] = next;
      next += chunkLayers[stage]![chunk]!;
    }
  }
  return layersPerStage.map((layers, stage) => {
    let moeLayers = 0;
    for (let chunk = 0; chunk < v; chunk++) {
      for (let k = 0; k < chunkLayers[stage]![chunk]!; k++) {
        if (isMoeLayer(scenario.model, firstLayer[stage]![chunk]! + k)) moeLayers++;
      }
    }
    return {
      index: stage,
      layers,
      moeLayers,
      chunkLayers: chunkLayers[stage]!,
      hasEmbedding: stage === 0,
      hasOutputLayer: stage === plan.pp - 1,
    };
  });
}
