/**
 * Why a framework cannot run a plan as planned, read from its capability table
 * (framework-capabilities.ts): the exports print these as their `error:` / `warning:` lines,
 * `plan` lists the frameworks with no error, and `plan --framework` searches only configurations
 * without any (docs/formulation.md §8). Pure.
 */
import { FRAMEWORKS, capabilitiesOf, type Framework, type FrameworkCapabilities, type Support } from './framework-capabilities';
import { interleavedGroupSize, scheduleMicrobatchProblem, zeroBubbleRoundSize } from './pipeline-schedule-rules';
import { buildStages, defaultLayersPerStage, pipelineSplitOf, type PlanLayout, type StageLayout } from './placement';
import { expertTpOf, rankOrderOf, type PlanSpec } from './plan-schema';
import type { Scenario } from './scenario';
import { outputStageOf } from './schedule-chain';

/** error: the framework cannot run it (export exits 4); warning: it runs, not as predicted. */
export interface FrameworkIssue {
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

/** The plan fields the degree-level checks read (no placement; dp optional). */
export type PlanDegrees = Pick<PlanSpec, 'tp' | 'cp' | 'ep' | 'pp' | 'schedule' | 'virtualStages' | 'recompute' | 'zero' | 'expertTp' | 'pipelineSplit'> & Partial<Pick<PlanSpec, 'recomputeModules' | 'rankOrder'>> & { readonly dp?: number };

const whyOf = (support: Support): string => (support.level === 'native' ? '' : support.why);

function push(issues: FrameworkIssue[], support: Support, message?: string): void {
  if (support.level === 'native') return;
  issues.push({ severity: support.level === 'unsupported' ? 'error' : 'warning', message: message ?? support.why });
}

/** Megatron-LM's expression of a plan's layers per stage (its first/last flags or the even accounted split), or why it has none. */
export type MegatronLayerSplit =
  | { readonly kind: 'single-stage' }
  | { readonly kind: 'first-last'; readonly first: number; readonly last: number; readonly perVirtual: number }
  | { readonly kind: 'accounted'; readonly embedding: boolean; readonly loss: boolean }
  | { readonly kind: 'problem'; readonly message: string };

/**
 * Megatron-LM splits the chain of pp x v virtual stages evenly but for the first and the last
 * (--decoder-first/last-pipeline-num-layers), or, with the embedding and/or loss counted as
 * layers (--account-for-embedding/loss-in-pipeline-split), spreads layers + 1 (+ 1) units evenly.
 */
export function megatronLayerSplit(plan: Pick<PlanSpec, 'pp' | 'virtualStages' | 'pipelineSplit'>, stages: readonly StageLayout[]): MegatronLayerSplit {
  const p = plan.pp;
  const v = plan.virtualStages;
  if (p === 1) return { kind: 'single-stage' };
  const split = plan.pipelineSplit;
  if (split !== undefined && (split.embeddingAsLayer || split.lossAsLayer)) {
    const units = stages.flatMap((stage, j) => stage.chunkLayers.map((n, chunk) =>
      n + (j === 0 && chunk === 0 && split.embeddingAsLayer ? 1 : 0) + (j === p - 1 && chunk === v - 1 && split.lossAsLayer ? 1 : 0)));
    if (units.some((n) => n !== units[0])) {
      const perStage = stages.map((s) => s.layers).join(', ');
      return { kind: 'problem', message: `layers per stage ${perStage} with the embedding/loss counted as layers are not an even split of ${units.reduce((a, b) => a + b, 0)} units over ${p} x ${v} virtual stages, which --account-for-embedding/loss-in-pipeline-split require; --pipeline-model-parallel-layout can express any split` };
    }
    return { kind: 'accounted', embedding: split.embeddingAsLayer, loss: split.lossAsLayer };
  }
  const layers = stages.map((s) => s.layers);
  const total = layers.reduce((a, b) => a + b, 0);
  // The first and last may differ, the rest hold equal whole chunks (perVirtual layers each).
  const middle = p >= 3 ? layers.slice(1, -1) : [];
  let perVirtual: number;
  if (middle.length > 0) {
    if (middle.some((n) => n !== middle[0]) || middle[0]! % v !== 0) {
      return { kind: 'problem', message: `layers per stage ${layers.join(', ')} cannot be expressed with Megatron's first/last stage flags (the middle stages must hold equal whole chunks); --pipeline-model-parallel-layout can express any split` };
    }
    perVirtual = middle[0]! / v;
  } else {
    perVirtual = Math.floor(total / (p * v));
  }
  const first = layers[0]! - (v - 1) * perVirtual;
  const last = layers[p - 1]! - (v - 1) * perVirtual;
  if (first < 1 || last < 1) {
    return { kind: 'problem', message: `layers per stage ${layers.join(', ')} leave the first or last virtual stage empty under Megatron's split` };
  }
  return { kind: 'first-last', first, last, perVirtual };
}

/**
 * torchtitan's expert mesh: context_parallel_degree <= expert_parallel_degree <=
 * data_parallel_shard_degree x context_parallel_degree. Without dp, only the first half.
 */
export function torchtitanExpertMeshProblem(plan: Pick<PlanDegrees, 'cp' | 'ep' | 'zero' | 'dp'>): string | undefined {
  if (plan.ep <= 1) return undefined;
  const shard = plan.dp === undefined ? Infinity : plan.zero === 0 ? 1 : plan.dp;
  if (plan.cp <= plan.ep && plan.ep <= shard * plan.cp) return undefined;
  return `torchtitan needs context_parallel_degree <= expert_parallel_degree <= data_parallel_shard_degree x context_parallel_degree (${plan.cp} <= ${plan.ep} <= ${shard * plan.cp} fails)`;
}

/** What the framework cannot run (or runs differently) in a plan's degrees, schedule, memory savings and stage split. */
export function degreeIssues(framework: Framework, scenario: Scenario, plan: PlanDegrees, stages: readonly StageLayout[]): FrameworkIssue[] {
  const caps = capabilitiesOf(framework);
  const issues: FrameworkIssue[] = [];
  push(issues, caps.schedules[plan.schedule]);
  push(issues, caps.zero[plan.zero]);
  if (plan.zero === 0 && (plan.tp > 1 || plan.cp > 1 || plan.ep > 1 || plan.pp > 1)) push(issues, caps.replicatedWithModelParallel);
  push(issues, caps.recompute[plan.recompute]);
  const otherModules = plan.recompute === 'selective' ? (plan.recomputeModules ?? []).filter((module) => module !== 'core_attn') : [];
  if (framework === 'torchtitan' && otherModules.length > 0) {
    issues.push({ severity: 'error', message: `torchtitan's selective activation checkpointing is op-level (its save list) or every n-th layer, not by module: it cannot recompute ${otherModules.join(', ')} alone as the plan does (Megatron-LM --recompute-modules); export to Megatron-LM, or plan with recompute 'full' or the attention core alone` });
  }
  if (scenario.model.moe && expertTpOf(plan) !== plan.tp) push(issues, caps.foldedExpertTp, `${whyOf(caps.foldedExpertTp)} (plan expertTp ${expertTpOf(plan)}, tp ${plan.tp})`);
  if (plan.cp > 1) push(issues, caps.contextParallel, `${caps.label} has no context parallelism`);
  if (plan.ep > 1) push(issues, caps.expertParallel, `${caps.label} has no expert parallelism`);
  if (scenario.training.precision === 'fp8') push(issues, caps.fp8, `${caps.label} has no fp8 training`);
  if (framework === 'megatron' && rankOrderOf(plan) === 'tp-cp-ep-pp-dp' && plan.zero >= 2) {
    issues.push({ severity: 'error', message: `Megatron-LM's --use-tp-pp-dp-mapping does not run with Megatron FSDP, which its ZeRO-${plan.zero} export uses; plan with ZeRO 0-1 or the default rank order` });
  }
  if (framework === 'torchtitan' && rankOrderOf(plan) === 'tp-cp-ep-pp-dp') {
    issues.push({ severity: 'error', message: "torchtitan's device mesh [pp, dp_replicate, dp_shard, cp, tp] puts pipeline stages outermost: it cannot number a replica's stages side by side as the plan's rank order tp-cp-ep-pp-dp does; export to Megatron-LM (--use-tp-pp-dp-mapping), or plan with the default order" });
  }
  if (framework === 'torchtitan') {
    const problem = torchtitanExpertMeshProblem(plan);
    if (problem !== undefined) issues.push({ severity: 'error', message: problem });
  }
  if (caps.layerSplit === 'first-last') {
    const split = megatronLayerSplit(plan, stages);
    if (split.kind === 'problem') issues.push({ severity: 'error', message: split.message });
  }
  return issues;
}

/** The whole number of microbatches every replica runs, or undefined when the groups differ or the batch does not split evenly. */
export function equalMicrobatches(layout: PlanLayout): number | undefined {
  const counts = [...new Set(layout.groups.map((g) => g.microbatches))];
  return counts.length === 1 && Number.isInteger(counts[0]) ? counts[0] : undefined;
}

/** What the framework cannot run in a plan's placement: microbatch counts, schedule rounds, network settings, ranks on nodes. */
export function placementIssues(framework: Framework, scenario: Scenario, layout: PlanLayout): FrameworkIssue[] {
  const caps = capabilitiesOf(framework);
  const { plan } = layout;
  const issues: FrameworkIssue[] = [];
  const counts = [...new Set(layout.groups.map((g) => g.microbatches))];
  if (counts.length > 1) {
    push(issues, caps.perGroupMicrobatches,
      `replica groups run different microbatch counts (${layout.groups.map((g) => g.microbatches).join(' / ')}); ${whyOf(caps.perGroupMicrobatches)}, so this plan cannot be launched as planned`);
  }
  const m = counts[0]!;
  if (!Number.isInteger(m)) {
    issues.push({ severity: 'error', message: `globalBatchSeqs ${scenario.training.globalBatchSeqs} is not dp x microBatchSeqs x a whole number of microbatches` });
  }
  const perReplica = Math.max(1, Math.round(m));
  issues.push(...scheduleRoundIssues(caps, plan, perReplica));
  if (plan.network?.some((s) => s.gradientCompression !== 'none')) push(issues, caps.gradientCompression);
  for (const problem of nodeAlignmentProblems(scenario, layout)) issues.push({ severity: 'error', message: problem });
  return issues;
}

/**
 * Why the framework's implementation of a schedule it runs refuses m microbatches per replica on
 * pp stages, or undefined: Megatron-LM's interleaved schedule needs m >= pp (its microbatch
 * groups); torch.distributed.pipelining's Interleaved1F1B and InterleavedZeroBubble run
 * max(1, floor(m / pp)) rounds and raise unless they divide m.
 */
export function scheduleRoundProblem(framework: Framework, schedule: PlanSpec['schedule'], m: number, pp: number): string | undefined {
  if (capabilitiesOf(framework).schedules[schedule].level !== 'native' || pp === 1) return undefined;
  if (framework === 'megatron' && schedule === 'interleaved' && interleavedGroupSize(m, pp) === undefined) {
    return `Megatron-LM's interleaved schedule needs at least pp = ${pp} microbatches per data-parallel rank, the plan has ${m}`;
  }
  if (framework === 'torchtitan' && schedule === 'interleaved-zb') {
    const problem = scheduleMicrobatchProblem(schedule, m, pp);
    if (problem !== undefined) return `${problem}; the plan has ${m}`;
  }
  if (framework === 'torchtitan' && schedule === 'interleaved' && zeroBubbleRoundSize(m, pp) === undefined) {
    return `torch's Interleaved1F1B runs max(1, floor(m / pp)) = ${Math.max(1, Math.floor(m / pp))} rounds, which must divide the microbatches; the plan has ${m}`;
  }
  return undefined;
}

function scheduleRoundIssues(caps: FrameworkCapabilities, plan: PlanSpec, m: number): FrameworkIssue[] {
  const problem = scheduleRoundProblem(caps.framework, plan.schedule, m, plan.pp);
  return problem === undefined ? [] : [{ severity: 'error', message: problem }];
}

/** Every issue of a laid-out plan in a framework: its export prints exactly these as errors and warnings. */
export function frameworkIssues(framework: Framework, scenario: Scenario, layout: PlanLayout): FrameworkIssue[] {
  return [...degreeIssues(framework, scenario, layout.plan, layout.stages), ...placementIssues(framework, scenario, layout)];
}

/**
 * The frameworks that run a laid-out plan with no error (their export exits 0), what each of the
 * others lacks (its errors), and where one that runs it differs from the prediction (its capability warnings).
 */
export function frameworkFit(scenario: Scenario, layout: PlanLayout): {
  runnable: Framework[]; missing: Partial<Record<Framework, string[]>>; differences: Partial<Record<Framework, string[]>>;
} {
  const runnable: Framework[] = [];
  const missing: Partial<Record<Framework, string[]>> = {};
  const differences: Partial<Record<Framework, string[]>> = {};
  for (const framework of FRAMEWORKS) {
    const issues = frameworkIssues(framework, scenario, layout);
    const errors = issues.filter((i) => i.severity === 'error').map((i) => i.message);
    if (errors.length > 0) { missing[framework] = errors; continue; }
    runnable.push(framework);
    const warnings = issues.map((i) => i.message);
    if (warnings.length > 0) differences[framework] = warnings;
  }
  return { runnable, missing, differences };
}

/** The stages a plan without `placement.layersPerStage` gets (layOutPlan's default split), with the split it writes in. */
export function defaultPlanStages(scenario: Scenario, plan: Pick<PlanSpec, 'pp' | 'virtualStages' | 'schedule' | 'pipelineSplit'>): { plan: typeof plan; stages: StageLayout[] } {
  const split = pipelineSplitOf(plan, scenario.model.layers);
  const withSplit = plan.pipelineSplit === undefined && (split.embeddingAsLayer || split.lossAsLayer) ? { ...plan, pipelineSplit: split } : plan;
  const layers = defaultLayersPerStage(scenario.model.layers, plan.pp, split, outputStageOf(plan.schedule, plan.pp));
  return { plan: withSplit, stages: buildStages(scenario, withSplit, layers) };
}

/**
 * A run of consecutive global ranks on one site: rank = ((stage x dp + replica) x cp + cpRank) x tp
 * + tpRank under the default order (tp-cp-ep-dp-pp), ((replica x pp + stage) x cp + cpRank) x tp +
 * tpRank under tp-cp-ep-pp-dp, replicas through the groups in order.
 */
export interface SiteRankRun {
  readonly site: number;
  readonly first: number;
  readonly last: number;
  readonly stages: readonly number[];
  readonly replicas: readonly number[];
}

/**
 * The (stage, replica) blocks of tp x cp consecutive ranks in the plan's rank order: stage-major
 * under the default tp-cp-ep-dp-pp (rank = ((stage x dp + replica) x cp + cpRank) x tp + tpRank),
 * replica-major under tp-cp-ep-pp-dp (((replica x pp + stage) x cp + cpRank) x tp + tpRank); block
 * i holds ranks i x tp x cp onward. The one order the rank map and ranks.csv both follow.
 */
export function rankBlocks(plan: Pick<PlanSpec, 'pp' | 'rankOrder'>, replicas: number): [stage: number, replica: number][] {
  const blocks: [number, number][] = [];
  if (rankOrderOf(plan) === 'tp-cp-ep-pp-dp') {
    for (let replica = 0; replica < replicas; replica++) for (let stage = 0; stage < plan.pp; stage++) blocks.push([stage, replica]);
  } else {
    for (let stage = 0; stage < plan.pp; stage++) for (let replica = 0; replica < replicas; replica++) blocks.push([stage, replica]);
  }
  return blocks;
}

/**
 * The plan's rank order (Megatron-LM's default tp-cp-ep-dp-pp, the same as torchtitan's mesh [pp,
 * dp_replicate, dp_shard, cp, tp]; or tp-cp-ep-pp-dp, Megatron-LM --use-tp-pp-dp-mapping) as runs
 * of ranks per site.
 */
export function siteRankRuns(layout: PlanLayout): SiteRankRun[] {
  const { plan, groups } = layout;
  const ranksPerReplicaStage = plan.tp * plan.cp;
  const replicaSite: (readonly number[])[] = [];
  for (const group of groups) for (let r = 0; r < group.replicas; r++) replicaSite.push(group.stageSite);
  const raw: { site: number; first: number; last: number; stages: Set<number>; replicas: Set<number> }[] = [];
  rankBlocks(plan, replicaSite.length).forEach(([stage, replica], block) => {
    const site = replicaSite[replica]![stage]!;
    const first = block * ranksPerReplicaStage;
    const last = first + ranksPerReplicaStage - 1;
    const previous = raw[raw.length - 1];
    if (previous && previous.site === site && previous.last + 1 === first) {
      previous.last = last;
      previous.stages.add(stage);
      previous.replicas.add(replica);
    } else {
      raw.push({ site, first, last, stages: new Set([stage]), replicas: new Set([replica]) });
    }
  });
  return raw.map((r) => ({ site: r.site, first: r.first, last: r.last, stages: [...r.stages].sort((a, b) => a - b), replicas: [...r.replicas].sort((a, b) => a - b) }));
}

/**
 * Runs that would put ranks of two sites on one node (a run not made of whole nodes), as one
 * problem: how many runs, the first two by rank and site (a plan with many replicas has one such
 * run per stage and site, and one line each would bury the reason).
 */
export function nodeAlignmentProblems(scenario: Scenario, layout: PlanLayout, runs: readonly SiteRankRun[] = siteRankRuns(layout)): string[] {
  const misaligned = runs.filter((run) => {
    const perNode = scenario.sites[run.site]!.gpusPerNode;
    return run.first % perNode !== 0 || (run.last - run.first + 1) % perNode !== 0;
  });
  if (misaligned.length === 0) return [];
  const shown = misaligned.slice(0, 2).map((run) => {
    const site = scenario.sites[run.site]!;
    return `ranks ${run.first}-${run.last} (${site.name}, ${site.gpusPerNode}-GPU nodes)`;
  });
  const others = misaligned.length - shown.length;
  const more = others > 0 ? ` and ${others} more run${others === 1 ? '' : 's'} of ranks` : '';
  const subject = misaligned.length === 1 ? `${shown[0]} do not` : `${shown.join(', ')}${more} do not each`;
  return [`${subject} fill whole nodes, so a node would hold ranks of two sites`];
}
