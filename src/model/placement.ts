/**
 * Turns a plan into a layout: the layers of every pipeline stage (and of each virtual chunk),
 * the site of every stage of every replica group, and microbatches per replica. Structural
 * errors (a degree that cannot divide the model, a stage count that does not add up, an
 * unknown site) are input errors; capacity problems are left to the evaluator as violations.
 */
import { planSchema, rankOrderOf, type PipelineSplitSpec, type PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import { buildBidirectionalStages } from './bidirectional-stages';
import { scheduleChunksProblem } from './pipeline-schedule-rules';
import { isBidirectional, layerBlocks, outputStageOf, stageOfVirtualStage } from './schedule-chain';
import { isMoeLayer } from './transformer-params';
import { ScenarioValidationError, issuesFromZod, type InputIssue } from './validation-error';

/** One pipeline stage: the same layers in every replica. */
export interface StageLayout {
  readonly index: number;
  readonly layers: number;
  readonly moeLayers: number;
  /** Layers of each of the `virtualStages` chunks this stage runs, in chunk order. */
  readonly chunkLayers: readonly number[];
  /** DualPipe only: the model stage each chunk runs (stage j, then stage pp - 1 - j); every other schedule runs chunks of its own stage's layers. */
  readonly chunkModelStages?: readonly number[];
  readonly hasEmbedding: boolean;
  readonly hasOutputLayer: boolean;
  /** Set (true) only where a stage holds both ends and still exchanges activations with other stages: stage 0 of a V (ZBV, DualPipeV), the first and last of DualPipe. Absent: it does unless it holds both ends. */
  readonly pipelinePeers?: boolean;
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

/**
 * Layouts of the plans the planner builds, by scenario object and plan object: the search lays
 * out the same plan object several times (the screen, the network post-solver, the timing), and
 * parsing it is most of the cost. Only for plan objects nothing edits once built (the planner's
 * own; a caller's plan may be edited in place between two calls, so {@link layOutPlan}, the
 * public entry, keeps no layout).
 */
const builtPlanLayouts = new WeakMap<Scenario, WeakMap<PlanSpec, PlanLayout>>();

/** {@link layOutPlan} for a plan object the planner built and will not edit: laid out once per scenario object. */
export function layOutBuiltPlan(scenario: Scenario, plan: PlanSpec): PlanLayout {
  let byPlan = builtPlanLayouts.get(scenario);
  if (!byPlan) { byPlan = new WeakMap(); builtPlanLayouts.set(scenario, byPlan); }
  let layout = byPlan.get(plan);
  if (!layout) { layout = layOutPlan(scenario, plan); byPlan.set(plan, layout); }
  return layout;
}

/** Parses and lays out a plan against a scenario; throws {@link ScenarioValidationError} on structural errors. */
export function layOutPlan(scenario: Scenario, input: unknown, pathPrefix = 'plan'): PlanLayout {
  const parsed = planSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new ScenarioValidationError(issuesFromZod(parsed.error, pathPrefix));
  const split = pipelineSplitOf(parsed.data, scenario.model.layers);
  // A split turned on because pp x virtualStages exceeds the layers is written into the plan, so that exports and reports see it.
  const plan = parsed.data.pipelineSplit === undefined && (split.embeddingAsLayer || split.lossAsLayer)
    ? { ...parsed.data, pipelineSplit: split } : parsed.data;
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
  if (plan.expertTp === undefined) {
    if (plan.ep > 1 && (plan.dp * plan.cp) % plan.ep !== 0) {
      issues.push({ path: at('ep'), message: `${plan.ep} does not divide dp x cp = ${plan.dp * plan.cp} (experts are sharded over data-parallel ranks; expertTp can fold them over tp too)` });
    }
  } else if (!model.moe) {
    issues.push({ path: at('expertTp'), message: 'expert tensor parallelism needs a MoE model (model.moe)' });
  } else if ((plan.tp * plan.cp * plan.dp) % (plan.ep * plan.expertTp) !== 0) {
    issues.push({ path: at('expertTp'), message: `ep x expertTp = ${plan.ep * plan.expertTp} does not divide tp x cp x dp = ${plan.tp * plan.cp * plan.dp} (MoE Parallel Folding)` });
  }
  checkRecomputeModules(scenario, plan, issues, at);
  const virtualStagesProblem = scheduleChunksProblem(plan);
  if (virtualStagesProblem !== undefined) issues.push({ path: at('virtualStages'), message: virtualStagesProblem });
  if (isBidirectional(plan.schedule) && plan.pp % 2 !== 0) {
    issues.push({ path: at('pp'), message: `${plan.pp} is odd: the ${plan.schedule} schedule needs an even pp (GPU j holds stages j and pp - 1 - j)` });
  }
  const split = pipelineSplitOf(plan, model.layers);
  const units = pipelineUnits(model.layers, split);
  const blocks = layerBlocks(plan.schedule, plan.pp, plan.virtualStages);
  if (blocks > units) {
    const counted = units > model.layers ? ` + ${units - model.layers} (embedding/loss counted as layers)` : '';
    const hint = units < model.layers + 2 && blocks <= model.layers + 2 ? '; pipelineSplit can count the embedding and the loss as layers' : '';
    const what = isBidirectional(plan.schedule) ? `${plan.pp} stages` : `${plan.pp} stages x ${plan.virtualStages} chunks`;
    issues.push({ path: at('pp'), message: `${what} exceed ${model.layers} layers${counted}${hint}` });
  }
}

/**
 * Each recomputed module must exist in the model. Megatron-LM rejects mla_up_proj without
 * multi-latent attention and moe_act without the grouped expert GEMMs (TransformerConfig); it
 * accepts moe, shared_experts and mlp on a model without such layers and recomputes nothing. All
 * five are errors here: a module the model does not have changes neither memory nor time, so a
 * plan that lists one was written for another model.
 */
function checkRecomputeModules(scenario: Scenario, plan: PlanSpec, issues: InputIssue[], at: (key: string) => string): void {
  const model = scenario.model;
  (plan.recomputeModules ?? []).forEach((module, i) => {
    let missing: string | undefined;
    if (module === 'mla_up_proj' && !model.attention) missing = 'multi-latent attention (model.attention)';
    else if ((module === 'moe_act' || module === 'moe') && !model.moe) missing = 'MoE layers (model.moe)';
    else if (module === 'shared_experts' && (model.moe?.sharedExperts ?? 0) === 0) missing = 'shared experts (model.moe.sharedExperts)';
    else if (module === 'mlp' && model.moe && model.moe.denseLayers === 0) missing = 'dense MLP layers (model.moe.denseLayers is 0; \'moe\' recomputes the MoE layers)';
    if (missing !== undefined) issues.push({ path: at(`recomputeModules[${i}]`), message: `'${module}' needs ${missing}, which the model does not have` });
  });
}

/**
 * Whether the embedding and the loss count as pipeline layers (Megatron-LM's
 * --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split): as the
 * plan says; when it says nothing, both exactly when pp x virtualStages exceeds the layers (the
 * case the flags exist for: Llama 3 405B's 126 layers on 16 x 8 chunks, Llama 3 §3.3.2).
 */
export function pipelineSplitOf(plan: Pick<PlanSpec, 'pp' | 'virtualStages' | 'pipelineSplit'> & Partial<Pick<PlanSpec, 'schedule'>>, layers: number): PipelineSplitSpec {
  if (plan.pipelineSplit !== undefined) return plan.pipelineSplit;
  const needed = layerBlocks(plan.schedule ?? '1f1b', plan.pp, plan.virtualStages) > layers;
  return { embeddingAsLayer: needed, lossAsLayer: needed };
}

/** Layers plus the embedding and the loss where they count as layers: what the split spreads over the virtual stages. */
const pipelineUnits = (layers: number, split: PipelineSplitSpec): number =>
  layers + (split.embeddingAsLayer ? 1 : 0) + (split.lossAsLayer ? 1 : 0);

/** Units (layers, plus the embedding or loss where it counts as a layer) stage `stage` of `pp` splits over its chunks. */
const stageUnits = (layers: number, stage: number, lossStage: number, split: PipelineSplitSpec): number =>
  layers + (stage === 0 && split.embeddingAsLayer ? 1 : 0) + (stage === lossStage && split.lossAsLayer ? 1 : 0);

/**
 * Default layers per stage: {@link balancedLayers} of the model's layers, or, when the embedding
 * or the loss counts as a layer, of the layers plus those, the first stage then holding one layer
 * fewer for the embedding and the last one fewer for the loss (126 layers on 16 stages: 7, 8 x 14, 7);
 * under a V (ZBV, DualPipeV) the loss is on the first stage (`lossStage` 0), which then holds one fewer for each.
 */
export function defaultLayersPerStage(layers: number, pp: number, split: PipelineSplitSpec, lossStage = pp - 1): number[] {
  const out = balancedLayers(pipelineUnits(layers, split), pp);
  if (split.embeddingAsLayer) out[0]! -= 1;
  if (split.lossAsLayer) out[lossStage]! -= 1;
  return out;
}

function resolveLayersPerStage(scenario: Scenario, plan: PlanSpec, issues: InputIssue[], at: (key: string) => string): number[] {
  const given = plan.placement?.layersPerStage;
  const layers = scenario.model.layers;
  const split = pipelineSplitOf(plan, layers);
  const lossStage = outputStageOf(plan.schedule, plan.pp);
  if (given === undefined) return defaultLayersPerStage(layers, plan.pp, split, lossStage);
  if (given.length !== plan.pp) {
    issues.push({ path: at('placement.layersPerStage'), message: `lists ${given.length} stages, pp is ${plan.pp}` });
  } else if (given.reduce((sum, n) => sum + n, 0) !== layers) {
    issues.push({ path: at('placement.layersPerStage'), message: `adds up to ${given.reduce((s, n) => s + n, 0)} layers, the model has ${layers}` });
  }
  // DualPipe lists the pp model stages, each one chunk of two GPUs.
  const chunks = isBidirectional(plan.schedule) ? 1 : plan.virtualStages;
  given.forEach((n, stage) => {
    const units = stageUnits(n, stage, lossStage, split);
    if (units < chunks) {
      const counted = units > n ? ` (with the embedding/loss counted as layers, ${units})` : '';
      issues.push({ path: at(`placement.layersPerStage[${stage}]`), message: `${n} layers${counted} cannot fill ${chunks} virtual chunks` });
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
    // tp-cp-ep-pp-dp's send and ring tiers take a replica's whole pipeline at one site (docs/cost-model.md §3).
    if (rankOrderOf(plan) === 'tp-cp-ep-pp-dp' && new Set(stageSite).size > 1) {
      issues.push({ path: at(`${path}.stageSites`), message: "spans sites, and rank order 'tp-cp-ep-pp-dp' is modelled for replicas whole on one site: place each replica on one site or use the default rank order" });
    }
    groups.push({ replicas: group.replicas, stageSite, microbatches: group.microbatches ?? defaultMicrobatches });
  });
  if (replicas !== plan.dp) {
    issues.push({ path: at('placement.replicaGroups'), message: `hold ${replicas} replicas in all, dp is ${plan.dp}` });
  }
  return groups;
}

/**
 * The stages of a plan. Each stage's layers are split over its `v` chunks as evenly as possible;
 * where the embedding (loss) counts as a layer it is one unit of the first stage's (last stage's)
 * split and takes the place of a layer in the first (last) chunk: the first virtual stage of the
 * chain holds the embedding and one layer fewer, the last the output layer and loss and one fewer
 * (Megatron-LM's --account-for-*-in-pipeline-split; Llama 3 §3.3.2: chunks of the embedding alone
 * and of the output and loss alone). Under ZBV and DualPipeV the chain is folded into a V (schedule-chain.ts):
 * the last virtual stage, with the output layer and loss, is stage 0's second chunk.
 */
export function buildStages(
  scenario: Scenario, plan: Pick<PlanSpec, 'pp' | 'virtualStages'> & Partial<Pick<PlanSpec, 'pipelineSplit' | 'schedule'>>, layersPerStage: readonly number[],
): StageLayout[] {
  const v = plan.virtualStages;
  const schedule = plan.schedule ?? '1f1b';
  if (isBidirectional(schedule)) return buildBidirectionalStages(scenario, plan.pp, layersPerStage);
  const lossStage = outputStageOf(schedule, plan.pp);
  // The plan's split as given (layOutPlan writes in the one it chooses); none when absent.
  const split = plan.pipelineSplit ?? { embeddingAsLayer: false, lossAsLayer: false };
  const chunkLayers = layersPerStage.map((layers, stage) => {
    const chunks = balancedLayers(stageUnits(layers, stage, lossStage, split), v);
    if (stage === 0 && split.embeddingAsLayer) chunks[0]! -= 1;
    if (stage === lossStage && split.lossAsLayer) chunks[v - 1]! -= 1;
    return chunks;
  });
  // Virtual stage q runs the q-th contiguous block of layers: q = chunk * pp + stage, or the V (schedule-chain.ts).
  const firstLayer: number[][] = layersPerStage.map(() => []);
  let next = 0;
  for (let q = 0; q < v * plan.pp; q++) {
    const { stage, chunk } = stageOfVirtualStage(schedule, q, plan.pp);
    firstLayer[stage]![chunk] = next;
    next += chunkLayers[stage]![chunk]!;
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
      hasOutputLayer: stage === lossStage,
      // Only where holding both ends does not mean a one-stage pipeline: stage 0 of a V.
      ...(stage === 0 && stage === lossStage && plan.pp > 1 ? { pipelinePeers: true } : {}),
    };
  });
}

/**
 * GPUs each site holds under a laid-out plan (tp x cp per replica of each stage it hosts) and
 * replicas of each stage at each site: the occupancy both the timing (critical-group.ts) and the
 * link traffic (link-traffic.ts) start from.
 */
export function siteOccupancy(scenario: Scenario, layout: PlanLayout): { readonly usedPerSite: number[]; readonly replicasOfStageAtSite: number[][] } {
  const { plan, stages, groups } = layout;
  const usedPerSite = scenario.sites.map(() => 0);
  const replicasOfStageAtSite = stages.map(() => scenario.sites.map(() => 0));
  for (const group of groups) {
    group.stageSite.forEach((site, stage) => {
      usedPerSite[site]! += group.replicas * plan.tp * plan.cp;
      replicasOfStageAtSite[stage]![site]! += group.replicas;
    });
  }
  return { usedPerSite, replicasOfStageAtSite };
}
