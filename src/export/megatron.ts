/**
 * Megatron-LM launch arguments for a plan (flag names as in megatron/training/arguments.py;
 * the list checked by the tests is test/fixtures/megatron-flags.txt). Pure.
 */
import { evaluateLayout } from '../model/evaluate';
import { interleavedGroupSize } from '../model/pipeline';
import type { PlanLayout } from '../model/placement';
import { expertTpOf, type Schedule } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { microbatchesPerReplica, networkNote } from './common';
import { criticalReplicas } from './critical-replicas';
import type { ExportMessage, FrameworkExport } from './export-types';
import { rankToSiteMap } from './rank-map';

/** A flag and its value; a list is passed as separate words (argparse nargs). */
type Arg = readonly [flag: string, value?: string | number | readonly string[]];

export function exportMegatron(scenario: Scenario, layout: PlanLayout): FrameworkExport {
  const { plan } = layout;
  const { model, training } = scenario;
  const messages: ExportMessage[] = [];
  const args: Arg[] = [];
  const m = microbatchesPerReplica(scenario, layout, messages);

  args.push(['--num-layers', model.layers], ['--hidden-size', model.hidden], ['--ffn-hidden-size', model.ffnHidden], ['--num-attention-heads', model.heads]);
  if (model.kvHeads < model.heads) args.push(['--group-query-attention'], ['--num-query-groups', model.kvHeads]);
  if (model.moe) {
    args.push(['--num-experts', model.moe.experts], ['--moe-router-topk', model.moe.topK], ['--moe-ffn-hidden-size', model.moe.expertFfnHidden]);
    if (model.moe.sharedExperts > 0) args.push(['--moe-shared-expert-intermediate-size', model.moe.sharedExperts * model.moe.expertFfnHidden]);
    if (model.moe.denseLayers > 0) args.push(['--moe-layer-freq', `([0]*${model.moe.denseLayers}+[1]*${model.layers - model.moe.denseLayers})`]);
  }
  args.push(['--seq-length', training.seqLen]);

  args.push(['--tensor-model-parallel-size', plan.tp], ['--pipeline-model-parallel-size', plan.pp], ['--context-parallel-size', plan.cp]);
  if (plan.ep > 1 || model.moe) args.push(['--expert-model-parallel-size', plan.ep]);
  if (model.moe) args.push(['--expert-tensor-parallel-size', expertTpOf(plan)]);
  if (plan.tp > 1) args.push(['--sequence-parallel']);
  args.push(...layerArgs(layout, messages));

  switch (plan.schedule) {
    case '1f1b':
      break;
    case 'interleaved': {
      // Megatron-LM's microbatch groups per model chunk: default pp; the cost model's N otherwise (docs/cost-model.md §5).
      const groupSize = interleavedGroupSize(m, plan.pp);
      if (groupSize === undefined) messages.push({ severity: 'error', message: `Megatron-LM's interleaved schedule needs at least pp = ${plan.pp} microbatches per data-parallel rank, the plan has ${m}` });
      else if (groupSize !== plan.pp) args.push(['--microbatch-group-size-per-virtual-pipeline-stage', groupSize]);
      break;
    }
    case 'gpipe':
      messages.push({ severity: 'warning', message: 'Megatron-LM has no GPipe schedule; it runs 1F1B, which the cost model times the same and which holds fewer microbatches in flight' });
      break;
    default:
      messages.push({ severity: 'error', message: UNRUNNABLE_SCHEDULES[plan.schedule] });
  }

  args.push(['--micro-batch-size', plan.microBatchSeqs], ['--global-batch-size', training.globalBatchSeqs]);

  if (plan.recompute === 'full') args.push(['--recompute-granularity', 'full'], ['--recompute-method', 'uniform'], ['--recompute-num-layers', 1]);
  if (plan.recompute === 'selective') {
    args.push(['--recompute-granularity', 'selective']);
    // Megatron-LM's default module list is the plan's default (core_attn): passed only when the plan lists its own.
    const modules = plan.recomputeModules;
    if (modules !== undefined) {
      args.push(['--recompute-modules', modules]);
      if (modules.includes('moe_act')) {
        messages.push({ severity: 'warning', message: 'Megatron-LM accepts moe_act recomputation only with grouped expert GEMMs (TransformerConfig: moe_grouped_gemm), which the cost model assumes for the routed experts: add --moe-grouped-gemm' });
      }
      if (training.precision === 'fp8' && (modules.includes('moe_act') || modules.includes('layernorm'))) {
        messages.push({ severity: 'error', message: 'Megatron-LM rejects moe_act and layernorm recomputation with fp8 delayed scaling, its default fp8 recipe (TransformerConfig; other recipes need Transformer Engine 2.6 or later): choose a current-scaling or block-scaling fp8 recipe' });
      }
    }
  }

  switch (plan.zero) {
    case 0:
      messages.push({ severity: 'note', message: 'ZeRO-0: plain data parallelism, no --use-distributed-optimizer' });
      break;
    case 1:
      args.push(['--use-distributed-optimizer']);
      break;
    case 2: {
      // ZeRO-2 is Megatron FSDP's optim_grads strategy; the distributed optimizer would keep a full fp32 gradient buffer per GPU.
      args.push(['--use-megatron-fsdp'], ['--data-parallel-sharding-strategy', 'optim_grads']);
      const asZero1 = evaluateLayout(scenario, { ...layout, plan: { ...plan, zero: 1 } });
      const zero1 = asZero1.fits
        ? `it would also fit with --use-distributed-optimizer (ZeRO-1 memory, a full fp32 gradient buffer per GPU: peak ${asZero1.predicted.memoryGiBPerGpu.toFixed(1)} GiB per GPU)`
        : `with --use-distributed-optimizer instead (a full fp32 gradient buffer per GPU) it would not fit: ${asZero1.violations[0]}`;
      messages.push({ severity: 'warning', message: `ZeRO-2 maps to Megatron FSDP with optim_grads (--use-megatron-fsdp); check that your Megatron-LM version supports it together with pipeline parallelism; ${zero1}` });
      break;
    }
    case 3:
      args.push(['--use-megatron-fsdp'], ['--data-parallel-sharding-strategy', 'optim_grads_params']);
      messages.push({ severity: 'warning', message: 'ZeRO-3 maps to Megatron FSDP (--use-megatron-fsdp); check that your Megatron-LM version supports it together with pipeline parallelism' });
      break;
  }
  if (training.overlap.dataParallel) {
    args.push(['--overlap-grad-reduce']);
    if (plan.zero === 1) args.push(['--overlap-param-gather']);
  }
  if (training.overlap.tensorParallel && plan.tp > 1) args.push(['--tp-comm-overlap']);
  args.push(['--bf16']);
  if (training.precision === 'fp8') args.push(['--fp8-format', 'hybrid']);

  networkNote(layout, 'Megatron-LM', messages);
  const critical = criticalReplicas(scenario, layout, messages);
  const rankMap = rankToSiteMap(scenario, layout, 'Megatron-LM default order tp-cp-ep-dp-pp');
  for (const problem of rankMap.problems) messages.push({ severity: 'error', message: problem });
  messages.push({ severity: 'note', message: `${m} microbatches per data-parallel rank per iteration (global batch / (dp x micro batch))` });

  const text = args.map(([flag, value]) => (value === undefined ? flag
    : `${flag} ${typeof value === 'object' ? value.map(shellQuote).join(' ') : shellQuote(String(value))}`)).join(' \\\n  ');
  return { framework: 'megatron', text, keys: args.map(([flag]) => flag), rankMap, critical, messages };
}

/** Layers per stage as Megatron's uneven first/last flags, or an error when they cannot express it. */
function layerArgs(layout: PlanLayout, messages: ExportMessage[]): Arg[] {
  const { plan, stages } = layout;
  const p = plan.pp;
  const v = plan.virtualStages;
  const args: Arg[] = [];
  if (v > 1) args.push(['--num-virtual-stages-per-pipeline-rank', v]);
  if (p === 1) return args;
  const split = plan.pipelineSplit;
  if (split !== undefined && (split.embeddingAsLayer || split.lossAsLayer)) return [...args, ...accountedSplitArgs(layout, messages)];
  const layers = stages.map((s) => s.layers);
  const total = layers.reduce((a, b) => a + b, 0);
  // Megatron splits the chain of p*v virtual stages: the first and last may differ, the rest are equal (M layers each).
  const middle = p >= 3 ? layers.slice(1, -1) : [];
  let perVirtual: number;
  if (middle.length > 0) {
    if (middle.some((n) => n !== middle[0]) || middle[0]! % v !== 0) {
      messages.push({ severity: 'error', message: `layers per stage ${layers.join(', ')} cannot be expressed with Megatron's first/last stage flags (the middle stages must hold equal whole chunks); --pipeline-model-parallel-layout can express any split` });
      return args;
    }
    perVirtual = middle[0]! / v;
  } else {
    perVirtual = Math.floor(total / (p * v));
  }
  const first = layers[0]! - (v - 1) * perVirtual;
  const last = layers[p - 1]! - (v - 1) * perVirtual;
  if (first < 1 || last < 1) {
    messages.push({ severity: 'error', message: `layers per stage ${layers.join(', ')} leave the first or last virtual stage empty under Megatron's split` });
    return args;
  }
  if (first !== perVirtual) args.push(['--decoder-first-pipeline-num-layers', first]);
  if (last !== perVirtual && (p > 2 || first === perVirtual)) args.push(['--decoder-last-pipeline-num-layers', last]);
  if (v > 1 && (first !== perVirtual || last !== perVirtual)) {
    messages.push({ severity: 'warning', message: `with ${v} virtual stages the first/last flags set the first and last virtual stage (${first} and ${last} layers, ${perVirtual} elsewhere); the plan's per-stage totals are the same, check the split your Megatron-LM version prints` });
  }
  return args;
}

/**
 * The embedding and/or the loss counted as pipeline layers: Megatron-LM then spreads layers + 1
 * (+ 1) units evenly over the p x v virtual stages (arguments.py: the total must divide by pp and
 * each stage's share by its chunks), so the plan's chunks must all hold that many units.
 */
function accountedSplitArgs(layout: PlanLayout, messages: ExportMessage[]): Arg[] {
  const { plan, stages } = layout;
  const split = plan.pipelineSplit!;
  const units = stages.flatMap((stage, j) => stage.chunkLayers.map((n, chunk) =>
    n + (j === 0 && chunk === 0 && split.embeddingAsLayer ? 1 : 0) + (j === plan.pp - 1 && chunk === plan.virtualStages - 1 && split.lossAsLayer ? 1 : 0)));
  if (units.some((n) => n !== units[0])) {
    const perStage = stages.map((s) => s.layers).join(', ');
    messages.push({ severity: 'error', message: `layers per stage ${perStage} with the embedding/loss counted as layers are not an even split of ${units.reduce((a, b) => a + b, 0)} units over ${plan.pp} x ${plan.virtualStages} virtual stages, which --account-for-embedding/loss-in-pipeline-split require; --pipeline-model-parallel-layout can express any split` });
    return [];
  }
  const args: Arg[] = [];
  if (split.embeddingAsLayer) args.push(['--account-for-embedding-in-pipeline-split']);
  if (split.lossAsLayer) args.push(['--account-for-loss-in-pipeline-split']);
  return args;
}

/** Why Megatron-LM cannot run each schedule it lacks (the export's error for a plan using it). */
const UNRUNNABLE_SCHEDULES: Readonly<Record<Exclude<Schedule, 'gpipe' | '1f1b' | 'interleaved'>, string>> = {
  'zb-h1': 'Megatron-LM has no zero-bubble (ZB-H1) schedule; it would run 1F1B with three times the planned bubble',
  'interleaved-zb': 'Megatron-LM has no interleaved zero-bubble schedule (it does not split the backward into input- and weight-gradient passes); it would run interleaved 1F1B with a larger bubble; export to torchtitan (InterleavedZeroBubble) instead',
  zbv: 'Megatron-LM has no V-shaped zero-bubble (ZBV) schedule: it places chunks in a loop, not a V, and does not split the backward; export to torchtitan (ZBVZeroBubble) instead',
  dualpipev: 'Megatron-LM (upstream) has no DualPipeV schedule: it places chunks in a loop, not a V, and does not split the backward; export to torchtitan (DualPipeV) instead',
};

function shellQuote(value: string): string {
  return /^[\w.,+=:/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
