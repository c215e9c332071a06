/**
 * torchtitan job-config TOML for a plan (field names as in torchtitan/config/job_config.py and
 * schedule names as in torch.distributed.pipelining's get_schedule_class; the list checked by
 * the tests is test/fixtures/torchtitan-keys.txt). Pure.
 */
import type { PlanLayout } from '../model/placement';
import { FP32_MASTER_BYTES, gathersParamsInFp8, masterWeightBytesPerParam, optimizerStateBytesPerParam } from '../model/memory';
import { TORCHTITAN } from '../model/framework-capabilities';
import type { Scenario } from '../model/scenario';
import type { Fp8Recipe } from '../model/scenario-schema';
import { isBidirectional, layerBlocks, stageOfVirtualStage } from '../model/schedule-chain';
import { architectureSummary, capabilityMessages, fitMessages, microbatchesPerReplica, networkNote } from './common';
import { criticalReplicas } from './critical-replicas';
import type { ExportMessage, FrameworkExport } from './export-types';
import { rankToSiteMap } from './rank-map';

type TomlValue = string | number | boolean | readonly (readonly string[])[] | readonly string[];

export function exportTorchtitan(scenario: Scenario, layout: PlanLayout): FrameworkExport {
  const { plan } = layout;
  const { training } = scenario;
  const messages: ExportMessage[] = [];
  // Everything torchtitan cannot run as planned, from its capability table (src/model/framework-capabilities.ts).
  fitMessages(scenario, layout, messages);
  capabilityMessages('torchtitan', scenario, layout, messages);
  const m = microbatchesPerReplica(layout);
  const sections: [string, [string, TomlValue][]][] = [];

  const modelKeys: [string, TomlValue][] = [];
  const fp8 = training.precision === 'fp8' ? torchtitanFp8(training.fp8Recipe, messages) : undefined;
  if (fp8) modelKeys.push(['converters', [fp8.converter]]);
  if (modelKeys.length > 0) sections.push(['model', modelKeys]);
  const fp8Keys: [string, TomlValue][] = fp8?.recipeName ? [['recipe_name', fp8.recipeName]] : [];
  if (gathersParamsInFp8(scenario, plan)) {
    // FSDP2's float8 all-gather: torchao gathers the float8 linear weights in fp8 (tensorwise scaling only).
    if (fp8?.converter === 'float8' && (training.fp8Recipe ?? 'tensorwise') === 'tensorwise') {
      fp8Keys.push(['enable_fsdp_float8_all_gather', true], ['precompute_float8_dynamic_scale_for_fsdp', true]);
    } else {
      messages.push({ severity: 'warning', message: `torchtitan gathers weights in fp8 only with the tensorwise float8 recipe ([float8] enable_fsdp_float8_all_gather): with ${training.fp8Recipe} the weights are gathered in bf16, twice the bytes of the parameter gather the plan was costed with (training.fp8ParamGather)` });
    }
  } else if (training.fp8ParamGather === true) {
    messages.push({ severity: 'note', message: 'training.fp8ParamGather is not exported: with ZeRO 0 the plan has no sharded parameters to gather (torchtitan\'s float8 all-gather is FSDP\'s), and it was costed without it' });
  }
  if (fp8 && fp8Keys.length > 0) sections.push([fp8.converter, fp8Keys]);

  if (training.optimizerMomentsDtype === 'bf16' && plan.zero >= 1) {
    messages.push({ severity: 'warning', message: `torchtitan keeps AdamW's moments in the parameters' dtype (float32 under FSDP2's mixed precision): the scenario's bf16 moments (training.optimizerMomentsDtype) cannot be expressed, and its optimizer state takes 12 bytes per parameter where the plan's memory counts ${optimizerStateBytesPerParam(scenario, plan.zero)}` });
  }
  const masterBytes = masterWeightBytesPerParam(scenario, plan.zero);
  if (masterBytes < FP32_MASTER_BYTES) {
    messages.push({ severity: 'warning', message: `training.masterWeights ${training.masterWeights} cannot be expressed: torchtitan's FSDP2 keeps the sharded parameters themselves in float32, so its optimizer state takes ${FP32_MASTER_BYTES - masterBytes} bytes per parameter more than the plan's memory counts` });
  }
  if (training.gradientDtype === 'bf16') {
    messages.push({ severity: 'warning', message: "torchtitan reduces gradients in float32 only ([training] mixed_precision_reduce accepts \"float32\"): the scenario's bf16 gradient buffer (training.gradientDtype) cannot be expressed, and its gradients take twice the bytes the plan's memory counts" });
  }
  sections.push(['training', [
    ['local_batch_size', plan.microBatchSeqs * m],
    ['global_batch_size', training.globalBatchSeqs],
    ['seq_len', training.seqLen],
  ]]);

  const parallelism: [string, TomlValue][] = [];
  if (plan.zero === 0) {
    parallelism.push(['data_parallel_replicate_degree', plan.dp], ['data_parallel_shard_degree', 1]);
  } else {
    parallelism.push(['data_parallel_replicate_degree', 1], ['data_parallel_shard_degree', plan.dp]);
    // ZeRO-1 and -2 (the table's warning): FSDP2 gathering weights once per iteration.
    if (plan.zero < 3) parallelism.push(['fsdp_reshard_after_forward', 'never']);
  }
  parallelism.push(
    ['tensor_parallel_degree', plan.tp],
    ['context_parallel_degree', plan.cp],
    ['expert_parallel_degree', plan.ep],
    ['pipeline_parallel_degree', plan.pp],
  );
  // torchtitan's job config at the pinned commit (test/fixtures/torchtitan-keys.txt) has no expert tensor-parallel degree of its own (a capability error when folded).
  if (plan.pp > 1) {
    // ZB-H1 (a capability error) would run as 1F1B.
    parallelism.push(['pipeline_parallel_schedule', TORCHTITAN.schedules[plan.schedule].name ?? '1F1B'], ['pipeline_parallel_microbatch_size', plan.microBatchSeqs]);
    parallelism.push(...stageSplit(scenario, layout, messages));
  }
  sections.push(['parallelism', parallelism]);

  const checkpoint: [string, TomlValue][] = [['mode', plan.recompute]];
  // Selective: op-level (the table's warning: it saves a different set of activations; module lists are the table's error).
  if (plan.recompute === 'selective') checkpoint.push(['selective_ac_option', 'op']);
  sections.push(['activation_checkpoint', checkpoint]);

  // torchtitan builds the model from its own definitions ([model] name and flavor), not from the job config.
  messages.push({ severity: 'note', message: `the model is torchtitan's own definition: set [model] name and flavor to the one matching ${architectureSummary(scenario)}, which the plan was costed for` });
  networkNote(layout, 'torchtitan', messages);
  const critical = criticalReplicas(scenario, layout, messages);
  // Its problems (ranks of two sites on one node) are capability errors already.
  const rankMap = rankToSiteMap(scenario, layout, 'torchtitan device mesh [pp, dp_replicate, dp_shard, cp, tp]');

  const text = sections.map(([name, keys]) => `[${name}]\n${keys.map(([k, v]) => `${k} = ${tomlValue(v)}`).join('\n')}`).join('\n\n');
  const keys = sections.flatMap(([name, entries]) => entries.map(([k]) => `${name}.${k}`));
  return { framework: 'torchtitan', text, keys, rankMap, critical, messages };
}

/**
 * torchtitan's split (generate_llm_fqn_per_model_part): with weights a and b for the embedding
 * and output, `layers + a + b` effective layers spread evenly over the stages, the remainder on
 * the first; the first stage then holds a fewer transformer layers and the last b fewer.
 */
export function torchtitanSplit(layers: number, stages: number, firstLess: number, lastLess: number): number[] | undefined {
  if (stages === 1) return [layers];
  const effective = layers + firstLess + lastLess;
  const per = Math.floor(effective / stages);
  const extra = effective % stages;
  if (per < 1 || firstLess > per || lastLess > per) return undefined;
  return Array.from({ length: stages }, (_, i) => (per + (i < extra ? 1 : 0)) - (i === 0 ? firstLess : 0) - (i === stages - 1 ? lastLess : 0));
}

function stageSplit(scenario: Scenario, layout: PlanLayout, messages: ExportMessage[]): [string, TomlValue][] {
  const { plan, stages } = layout;
  const layers = stages.map((s) => s.layers);
  if (plan.virtualStages === 1) {
    for (let firstLess = 0; firstLess <= scenario.model.layers; firstLess++) {
      for (let lastLess = 0; lastLess <= scenario.model.layers; lastLess++) {
        const split = torchtitanSplit(scenario.model.layers, plan.pp, firstLess, lastLess);
        if (split && split.every((n, j) => n === layers[j])) {
          return [['pipeline_parallel_first_stage_less_layers', firstLess], ['pipeline_parallel_last_stage_less_layers', lastLess]];
        }
      }
    }
  }
  // Any other split, and every interleaved one: name the modules of each virtual stage in chain order (loop: rank r
  // holds stages r, r + pp, ...; ZBV's V: rank r holds stages r and 2pp - 1 - r, torch's style "v"; DualPipe,
  // which the table refuses, its pp model stages, chunk 0 of each rank).
  const p = plan.pp;
  const parts: string[][] = [];
  let next = 0;
  for (let q = 0; q < layerBlocks(plan.schedule, p, plan.virtualStages); q++) {
    {
      const { stage, chunk } = isBidirectional(plan.schedule) ? { stage: q, chunk: 0 } : stageOfVirtualStage(plan.schedule, q, p);
      const count = stages[stage]!.chunkLayers[chunk]!;
      const part = Array.from({ length: count }, (_, k) => `layers.${next + k}`);
      next += count;
      parts.push(part);
    }
  }
  parts[0]!.unshift('tok_embeddings');
  parts[parts.length - 1]!.push('norm', 'output');
  messages.push({ severity: 'note', message: `stage split given as module_fqns_per_model_part (${parts.length} model parts), with torchtitan's Llama module names (tok_embeddings, layers.N, norm, output)` });
  return [['module_fqns_per_model_part', parts]];
}

function tomlValue(value: TomlValue): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value.length > 0 && Array.isArray(value[0])) {
    return `[\n${(value as readonly (readonly string[])[]).map((part) => `  [${part.map((s) => JSON.stringify(s)).join(', ')}]`).join(',\n')},\n]`;
  }
  return `[${(value as readonly string[]).map((s) => JSON.stringify(s)).join(', ')}]`;
}

/**
 * torchtitan's fp8 converter and recipe ([float8] recipe_name: tensorwise or rowwise; [mx]
 * recipe_name: mxfp8; torchtitan/config/job_config.py). Without a recipe in the scenario the
 * float8 converter's default (tensorwise dynamic scaling) is left implicit; delayed and blockwise
 * scaling are not torchtitan recipes.
 */
function torchtitanFp8(recipe: Fp8Recipe | undefined, messages: ExportMessage[]): { converter: 'float8' | 'mx'; recipeName?: string } {
  switch (recipe) {
    case undefined:
      return { converter: 'float8' };
    case 'tensorwise':
    case 'rowwise':
      return { converter: 'float8', recipeName: recipe };
    case 'mxfp8':
      return { converter: 'mx', recipeName: 'mxfp8' };
    case 'delayed':
    case 'blockwise':
      messages.push({ severity: 'error', message: `torchtitan has no ${recipe} fp8 scaling ([float8] recipe_name takes tensorwise or rowwise, [mx] mxfp8): set training.fp8Recipe to one of those` });
      return { converter: 'float8' };
  }
}
