/**
 * Megatron-LM launch arguments for a plan (flag names as in megatron/training/arguments.py;
 * the list checked by the tests is test/fixtures/megatron-flags.txt). Pure.
 */
import { evaluateLayout } from '../model/evaluate';
import { interleavedGroupSize } from '../model/pipeline-schedule-rules';
import type { PlanLayout } from '../model/placement';
import { FP32_MASTER_BYTES, gathersParamsInFp8, masterWeightBytesPerParam } from '../model/memory';
import { megatronLayerSplit } from '../model/framework-issues';
import { expertTpOf, rankOrderOf } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import type { Fp8Recipe } from '../model/scenario-schema';
import { capabilityMessages, fitMessages, microbatchesPerReplica, networkNote } from './common';
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
  // Everything Megatron-LM cannot run as planned, from its capability table (src/model/framework-capabilities.ts).
  fitMessages(scenario, layout, messages);
  capabilityMessages('megatron', scenario, layout, messages);
  const m = microbatchesPerReplica(layout);

  args.push(['--num-layers', model.layers], ['--hidden-size', model.hidden], ['--ffn-hidden-size', model.ffnHidden], ['--num-attention-heads', model.heads]);
  args.push(...architectureArgs(scenario, messages));
  args.push(['--seq-length', training.seqLen], ['--max-position-embeddings', training.seqLen]);

  args.push(['--tensor-model-parallel-size', plan.tp], ['--pipeline-model-parallel-size', plan.pp], ['--context-parallel-size', plan.cp]);
  if (plan.ep > 1 || model.moe) args.push(['--expert-model-parallel-size', plan.ep]);
  if (model.moe) args.push(['--expert-tensor-parallel-size', expertTpOf(plan)]);
  if (plan.tp > 1) args.push(['--sequence-parallel']);
  // A replica's stages side by side (docs/cost-model.md §3): Megatron-Core's order tp-cp-ep-pp-dp.
  if (rankOrderOf(plan) === 'tp-cp-ep-pp-dp') args.push(['--use-tp-pp-dp-mapping']);
  args.push(...layerArgs(layout, messages));

  if (plan.schedule === 'interleaved') {
    // Megatron-LM's microbatch groups per model chunk: default pp; the cost model's N otherwise (docs/cost-model.md §5).
    const groupSize = interleavedGroupSize(m, plan.pp);
    if (groupSize !== undefined && groupSize !== plan.pp) args.push(['--microbatch-group-size-per-virtual-pipeline-stage', groupSize]);
  }

  args.push(['--micro-batch-size', plan.microBatchSeqs], ['--global-batch-size', training.globalBatchSeqs]);

  if (plan.recompute === 'full') args.push(['--recompute-granularity', 'full'], ['--recompute-method', 'uniform'], ['--recompute-num-layers', 1]);
  if (plan.recompute === 'selective') {
    args.push(['--recompute-granularity', 'selective']);
    // Megatron-LM's default module list is the plan's default (core_attn): passed only when the plan lists its own.
    const modules = plan.recomputeModules;
    if (modules !== undefined) {
      // moe_act needs grouped expert GEMMs (TransformerConfig: moe_grouped_gemm), which architectureArgs passes for every MoE model.
      args.push(['--recompute-modules', modules]);
      const recipe = training.fp8Recipe ?? 'delayed';
      if (training.precision === 'fp8' && recipe === 'delayed' && (modules.includes('moe_act') || modules.includes('layernorm'))) {
        messages.push({ severity: 'error', message: 'Megatron-LM rejects moe_act and layernorm recomputation with fp8 delayed scaling, its default fp8 recipe (TransformerConfig; other recipes need Transformer Engine 2.6 or later): set training.fp8Recipe to tensorwise, blockwise or mxfp8' });
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
      // ZeRO-2 is Megatron FSDP's optim_grads strategy (the table's warning); the distributed optimizer would keep a full fp32 gradient buffer per GPU.
      args.push(['--use-megatron-fsdp'], ['--data-parallel-sharding-strategy', 'optim_grads']);
      const asZero1 = evaluateLayout(scenario, { ...layout, plan: { ...plan, zero: 1 } });
      const zero1 = asZero1.fits
        ? `ZeRO-2 would also fit with --use-distributed-optimizer (ZeRO-1 memory, a full fp32 gradient buffer per GPU: peak ${asZero1.predicted.memoryGiBPerGpu.toFixed(1)} GiB per GPU)`
        : `with --use-distributed-optimizer instead of ZeRO-2 (a full fp32 gradient buffer per GPU) it would not fit: ${asZero1.violations[0]}`;
      messages.push({ severity: 'warning', message: zero1 });
      break;
    }
    case 3:
      // The table's warning: Megatron FSDP.
      args.push(['--use-megatron-fsdp'], ['--data-parallel-sharding-strategy', 'optim_grads_params']);
      break;
  }
  if (training.overlap.dataParallel) {
    args.push(['--overlap-grad-reduce']);
    if (plan.zero === 1) args.push(['--overlap-param-gather']);
  }
  if (training.overlap.tensorParallel && plan.tp > 1) args.push(['--tp-comm-overlap']);
  args.push(['--bf16']);
  if (training.gradientDtype === 'bf16') args.push(['--grad-reduce-in-bf16']);
  // Adam's moments in bf16: the precision-aware optimizer, part of the distributed optimizer (ZeRO >= 1).
  if (training.optimizerMomentsDtype === 'bf16') {
    if (plan.zero >= 1) args.push(['--use-precision-aware-optimizer'], ['--exp-avg-dtype', 'bf16'], ['--exp-avg-sq-dtype', 'bf16']);
    else messages.push({ severity: 'note', message: "training.optimizerMomentsDtype bf16 is not exported: with ZeRO 0 Megatron-LM has no distributed optimizer, which its precision-aware optimizer needs, and the plan was costed with fp32 moments" });
  }
  // The master weight as remainders or none at all is Apex's DistributedFusedAdam (NeMo 1.x), which Megatron-LM does not run.
  const masterBytes = masterWeightBytesPerParam(scenario, plan.zero);
  if (masterBytes < FP32_MASTER_BYTES) {
    messages.push({ severity: 'warning', message: `training.masterWeights ${training.masterWeights} cannot be expressed: Megatron-LM's distributed optimizer keeps an fp32 master copy of every weight, so its optimizer state takes ${FP32_MASTER_BYTES - masterBytes} bytes per parameter more (sharded over data parallelism) than the plan's memory counts` });
  }
  if (training.precision === 'fp8') args.push(...megatronFp8Args(training.fp8Recipe, messages));
  // The linear layers' weights kept in fp8 alone and gathered in fp8 (needs the distributed optimizer or FSDP: ZeRO >= 1).
  if (gathersParamsInFp8(scenario, plan)) args.push(['--fp8-param-gather']);
  else if (training.fp8ParamGather === true) {
    messages.push({ severity: 'note', message: 'training.fp8ParamGather is not exported: with ZeRO 0 Megatron-LM has no distributed optimizer to hold the fp32 master weights --fp8-param-gather needs, and the plan was costed without it' });
  }

  networkNote(layout, 'Megatron-LM', messages);
  const critical = criticalReplicas(scenario, layout, messages);
  // Its problems (ranks of two sites on one node) are capability errors already.
  const rankMap = rankToSiteMap(scenario, layout, rankOrderOf(plan) === 'tp-cp-ep-pp-dp' ? 'Megatron-LM order tp-cp-ep-pp-dp (--use-tp-pp-dp-mapping)' : 'Megatron-LM default order tp-cp-ep-dp-pp');
  messages.push({ severity: 'note', message: `${m} microbatches per data-parallel rank per iteration (global batch / (dp x micro batch))` });

  const text = args.map(([flag, value]) => (value === undefined ? flag
    : `${flag} ${typeof value === 'object' ? value.map(shellQuote).join(' ') : shellQuote(String(value))}`)).join(' \\\n  ');
  return { framework: 'megatron', text, keys: args.map(([flag]) => flag), rankMap, critical, messages };
}

/**
 * The model's architecture as Megatron-LM arguments (megatron/training/arguments.py; defaults:
 * GeLU without gating, tied embeddings, head dimension hidden / heads, dropout 0.1): the MLP's
 * activation, untied embeddings, the head dimension, grouped-query or multi-head latent
 * attention, the sliding window, multi-token prediction, dropout, and the experts with their
 * grouped GEMMs (which the cost model prices) and group-limited routing. What the scenario does
 * not describe (normalization, position embedding, linear biases, the tokenizer that sets the
 * vocabulary) is a note.
 */
function architectureArgs(scenario: Scenario, messages: ExportMessage[]): Arg[] {
  const { model } = scenario;
  const args: Arg[] = [];
  if (model.mlp === 'swiglu') args.push(['--swiglu']);
  if (model.mlp === 'squared-relu') args.push(['--squared-relu']);
  if (!model.tiedEmbeddings) args.push(['--untie-embeddings-and-output-weights']);
  if (model.attention) {
    const mla = model.attention;
    args.push(['--multi-latent-attention']);
    if (mla.qLoraRank !== undefined) args.push(['--q-lora-rank', mla.qLoraRank]);
    args.push(['--kv-lora-rank', mla.kvLoraRank], ['--qk-head-dim', mla.qkNopeHeadDim], ['--qk-pos-emb-head-dim', mla.qkRopeHeadDim], ['--v-head-dim', mla.vHeadDim]);
  } else {
    if (model.headDim !== undefined && model.headDim * model.heads !== model.hidden) args.push(['--kv-channels', model.headDim]);
    if (model.kvHeads < model.heads) args.push(['--group-query-attention'], ['--num-query-groups', model.kvHeads]);
  }
  if (model.slidingWindow) {
    // Each query attends to `tokens` keys, itself included: (tokens - 1) to its left, none to its right.
    args.push(['--window-size', `${model.slidingWindow.tokens - 1},0`]);
    const windowLayers = model.slidingWindow.layers ?? model.layers;
    if (windowLayers < model.layers) {
      if (2 * windowLayers === model.layers) {
        // Every second layer attends to the whole sequence (gpt-oss: window, full, window, ...).
        args.push(['--window-attn-skip-freq', 2]);
      } else {
        messages.push({ severity: 'warning', message: `${windowLayers} of ${model.layers} layers use the sliding window, and the scenario does not say which: add --window-attn-skip-freq with your model's pattern (1 window, 0 full attention, one entry per layer)` });
      }
    }
  }
  if (model.mtpLayers) args.push(['--mtp-num-layers', model.mtpLayers]);
  if (!model.dropout) args.push(['--attention-dropout', 0], ['--hidden-dropout', 0]);
  if (model.moe) {
    args.push(['--num-experts', model.moe.experts], ['--moe-router-topk', model.moe.topK], ['--moe-ffn-hidden-size', model.moe.expertFfnHidden], ['--moe-grouped-gemm']);
    if (model.moe.sharedExperts > 0) args.push(['--moe-shared-expert-intermediate-size', model.moe.sharedExperts * model.moe.expertFfnHidden]);
    if (model.moe.denseLayers > 0) args.push(['--moe-layer-freq', `([0]*${model.moe.denseLayers}+[1]*${model.layers - model.moe.denseLayers})`]);
    if (model.moe.routingGroups) args.push(['--moe-router-num-groups', model.moe.routingGroups.count], ['--moe-router-group-topk', model.moe.routingGroups.perToken]);
  }
  messages.push({ severity: 'note', message: `the scenario does not describe the normalization, position embedding, linear biases or tokenizer: add your model's (Llama, Qwen, DeepSeek: --normalization RMSNorm --position-embedding-type rope --disable-bias-linear; the tokenizer sets the vocabulary, ${model.vocab} in the plan)` });
  return args;
}

/** Layers per stage as Megatron's uneven first/last flags or its accounted even split (megatronLayerSplit; a split it cannot express is a capability error). */
function layerArgs(layout: PlanLayout, messages: ExportMessage[]): Arg[] {
  const { plan } = layout;
  const v = plan.virtualStages;
  const args: Arg[] = [];
  if (v > 1) args.push(['--num-virtual-stages-per-pipeline-rank', v]);
  const split = megatronLayerSplit(plan, layout.stages);
  switch (split.kind) {
    case 'single-stage':
    case 'problem':
      return args;
    case 'accounted':
      if (split.embedding) args.push(['--account-for-embedding-in-pipeline-split']);
      if (split.loss) args.push(['--account-for-loss-in-pipeline-split']);
      return args;
    case 'first-last': {
      const { first, last, perVirtual } = split;
      if (first !== perVirtual) args.push(['--decoder-first-pipeline-num-layers', first]);
      if (last !== perVirtual && (plan.pp > 2 || first === perVirtual)) args.push(['--decoder-last-pipeline-num-layers', last]);
      if (v > 1 && (first !== perVirtual || last !== perVirtual)) {
        messages.push({ severity: 'warning', message: `with ${v} virtual stages the first/last flags set the first and last virtual stage (${first} and ${last} layers, ${perVirtual} elsewhere); the plan's per-stage totals are the same, check the split your Megatron-LM version prints` });
      }
      return args;
    }
  }
}

function shellQuote(value: string): string {
  return /^[\w.,+=:/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Megatron-LM's fp8 arguments (--fp8-format, --fp8-recipe in megatron/training/arguments.py):
 * E4M3 forward and E5M2 backward (hybrid) with delayed or per-tensor current scaling; block
 * recipes quantize every tensor to E4M3 (DeepSeek-V3's 1x128 / 128x128 blocks, MX 32-element
 * blocks). Without a recipe in the scenario, Megatron-LM's default (delayed) is left implicit.
 */
function megatronFp8Args(recipe: Fp8Recipe | undefined, messages: ExportMessage[]): [string, string][] {
  switch (recipe) {
    case undefined:
    case 'delayed':
      return [['--fp8-format', 'hybrid']];
    case 'tensorwise':
      return [['--fp8-format', 'hybrid'], ['--fp8-recipe', 'tensorwise']];
    case 'blockwise':
    case 'mxfp8':
      return [['--fp8-format', 'e4m3'], ['--fp8-recipe', recipe]];
    case 'rowwise':
      messages.push({ severity: 'error', message: "Megatron-LM has no rowwise fp8 recipe (torchtitan's float8 rowwise; --fp8-recipe takes delayed, tensorwise, blockwise or mxfp8): set training.fp8Recipe to one of those" });
      return [['--fp8-format', 'hybrid']];
  }
}
