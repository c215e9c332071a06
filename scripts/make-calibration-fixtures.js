// Writes fixtures/calibration/*.json from the published tables in ../shared/data/calibration.md.
// Configuration details not in those tables come from the cited launch scripts; where a detail
// is unknown, the assumption is written into the row's `assumptions`.
const fs = require('fs');
const path = require('path');

const out = path.join(__dirname, '..', 'fixtures', 'calibration');
fs.mkdirSync(out, { recursive: true });

function scenario(id, { heads, hidden, layers, vocab, seqLen, batch, gpus, gpuType, mlp = 'gelu', dropout, flash, tpOverlap, dpOverlap, tied }) {
  return {
    version: 1,
    name: id,
    model: { name: id, layers, hidden, ffnHidden: 4 * hidden, heads, kvHeads: heads, vocab, mlp, tiedEmbeddings: tied, dropout },
    training: { seqLen, globalBatchSeqs: batch, precision: 'bf16', flashAttention: flash, overlap: { tensorParallel: tpOverlap, dataParallel: dpOverlap } },
    cluster: { sites: [{ name: 'cluster', gpuType, gpus, gpusPerNode: 8 }], links: [] },
  };
}

// A. Megatron-LM SC'21 Table 1; MBS, interleaving and DDP from examples/sc21/run_table_1.sh.
const sc21 = [
  ['1.7B', 24, 2304, 24, 1, 1, 32, 512, 137, 16, 1, 'torch'],
  ['3.6B', 32, 3072, 30, 2, 1, 64, 512, 138, 16, 1, 'torch'],
  ['7.5B', 32, 4096, 36, 4, 1, 128, 512, 142, 16, 1, 'torch'],
  ['18.4B', 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 1, 'torch'],
  ['39.1B', 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 1, 'local'],
  ['76.1B', 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 3, 'local'],
  ['145.6B', 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 2, 'local'],
  ['310.1B', 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 2, 'local'],
  ['529.6B', 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 3, 'local'],
  ['1008.0B', 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 1, 'local'],
].map(([name, heads, hidden, layers, tp, pp, gpus, batch, tflops, mbs, v, ddp]) => {
  const id = `megatron-sc21-${name}`;
  return {
    id,
    table: 'A',
    source: "Narayanan et al. SC'21 Table 1; MBS, interleaving, DDP impl from Megatron-LM examples/sc21/run_table_1.sh",
    metric: 'recomputeTflopsPerGpu',
    published: tflops,
    assumptions: 'fp16 (same peak as bf16), no fused attention (2021), no TP overlap; torch DDP overlaps gradients, local DDP does not; ZeRO 0',
    scenario: scenario(id, { heads, hidden, layers, vocab: 51200, seqLen: 2048, batch, gpus, gpuType: 'A100-80GB', dropout: true, flash: false, tpOverlap: false, dpOverlap: ddp === 'torch', tied: true }),
    plan: { tp, cp: 1, ep: 1, pp, dp: gpus / (tp * pp), microBatchSeqs: mbs, schedule: v > 1 ? 'interleaved' : '1f1b', virtualStages: v, recompute: 'full', zero: 0 },
  };
});

// B. Megatron-LM README H100 weak scaling. Micro batch size, schedule and recomputation are not
// published in text; assumed: MBS 1, 1F1B, no recomputation, distributed optimizer, GPT (GELU, MHA).
const h100 = [
  ['1.7B', 16, 2048, 24, 1, 1, 48, 48, 192, 408.8],
  ['7.1B', 32, 4096, 30, 2, 1, 48, 96, 192, 465.9],
  ['16B', 48, 6144, 32, 4, 1, 48, 192, 192, 489.1],
  ['32B', 56, 7168, 48, 8, 1, 48, 384, 192, 459.6],
  ['70B', 64, 8192, 84, 8, 2, 48, 768, 384, 419.7],
  ['119B', 80, 10240, 92, 8, 4, 48, 1536, 768, 420.5],
  ['177B', 96, 12288, 96, 8, 6, 48, 2304, 1152, 432.8],
  ['314B', 128, 16384, 96, 8, 8, 48, 3072, 1536, 474.4],
  ['462B', 144, 18432, 112, 8, 16, 48, 6144, 3072, 459.9],
].map(([name, heads, hidden, layers, tp, pp, dp, gpus, batch, tflops]) => {
  const id = `megatron-h100-${name}`;
  return {
    id,
    table: 'B',
    source: 'Megatron-LM README (2024), H100 weak scaling table',
    metric: 'modelTflopsPerGpu',
    published: tflops,
    assumptions: 'MBS 1, 1F1B, no recomputation, ZeRO 1 (distributed optimizer), GELU FFN 4h, MHA, fused attention, TP and DP overlap on (README: communication overlap on)',
    scenario: scenario(id, { heads, hidden, layers, vocab: 131072, seqLen: 4096, batch, gpus, gpuType: 'H100-SXM', dropout: false, flash: true, tpOverlap: true, dpOverlap: true, tied: false }),
    plan: { tp, cp: 1, ep: 1, pp, dp, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 },
  };
});

// C. Korthikanti et al. 2022 Table 5: iteration time, full recomputation vs sequence parallel + selective.
const korthikanti = [
  ['22B', 64, 6144, 48, 8, 1, 8, 4, 4, 1, 1.42, 1.10],
  ['175B', 96, 12288, 96, 8, 8, 64, 64, 1, 3, 18.13, 13.75],
  ['530B', 128, 20480, 105, 8, 35, 280, 280, 1, 3, 49.05, 37.83],
  ['1T', 160, 25600, 128, 8, 64, 512, 512, 1, 1, 94.42, 71.49],
].flatMap(([name, heads, hidden, layers, tp, pp, gpus, batch, mbs, v, fullS, selS]) =>
  [['full', fullS], ['selective', selS]].map(([recompute, seconds]) => {
    const id = `korthikanti-${name}-${recompute}`;
    return {
      id,
      table: 'C',
      source: 'Korthikanti et al. 2022 (arXiv 2205.05198) Table 5',
      metric: 'iterationTimeS',
      published: seconds,
      assumptions: 'no fused attention, no TP overlap (2022 Megatron), ZeRO 0, DP 1',
      scenario: scenario(id, { heads, hidden, layers, vocab: 51200, seqLen: 2048, batch, gpus, gpuType: 'A100-80GB', dropout: true, flash: false, tpOverlap: false, dpOverlap: true, tied: true }),
      plan: { tp, cp: 1, ep: 1, pp, dp: 1, microBatchSeqs: mbs, schedule: v > 1 ? 'interleaved' : '1f1b', virtualStages: v, recompute, zero: 0 },
    };
  }));

// E and F. FP8 Llama rows on DGX H100 from the Megatron-Bridge and NeMo performance tables (dense
// Llama only: the MoE, multi-head-latent-attention, squared-ReLU and GPT rows are left out). The
// published metric is tokens/s/GPU, which does not depend on a FLOP-counting convention (the
// tables' TFLOP/s/GPU columns use different ones: NeMo 24.07 the full attention square,
// Megatron-Bridge the causal half). Shapes: calibration.md section E; Llama 2 70B from its model
// card (as Llama 3 70B with vocabulary 32,000).
const LLAMA = {
  'llama3-8b': { layers: 32, hidden: 4096, heads: 32, kvHeads: 8, ffnHidden: 14336, vocab: 128256 },
  'llama3-70b': { layers: 80, hidden: 8192, heads: 64, kvHeads: 8, ffnHidden: 28672, vocab: 128256 },
  'llama2-70b': { layers: 80, hidden: 8192, heads: 64, kvHeads: 8, ffnHidden: 28672, vocab: 32000 },
};
// Rows whose framework configuration reduces and holds the gradients in bf16 (scenario
// training.gradientDtype 'bf16': the gradient buffer's memory; the reduction is timed in bf16 for
// every row), each with the configuration that says so. The other rows keep fp32 main gradients
// (Megatron-LM's default for bf16 training).
const NEMO_LAUNCHER_FP8_EXAMPLES = 'gradients reduced and held in bf16 (the NeMo Framework Launcher H100 fp8 examples of these models pass optim.grad_sync_dtype=bf16 to distributed_fused_adam with a contiguous gradient buffer)';
const LLAMA2_7B_LAUNCHER_FP8 = 'gradients reduced and held in bf16 (the NeMo Framework Launcher H100 fp8 example of Llama 2 7B, examples/training/llama/h100/llama2_7b_fp8.sh, passes optim.grad_sync_dtype=bf16 to distributed_fused_adam with a contiguous gradient buffer; these long-context runs are the same model in the same framework)';
// Nemotron-4 340B in NeMo's performance table: the launcher's nemotron_340b.yaml in its
// distributed_fused_adam form, which NVIDIA's DGX Cloud benchmark of the model also runs
// (dgxc-benchmarking nemotron/nemotron4-340b-synth.yaml, the same TP 8, PP 8, VP 12, MBS 1).
const NEMOTRON_340B_NEMO_PERF = 'gradients reduced and held in bf16, Adam moments in bf16 and no master copy, selective recomputation (NeMo Framework Launcher conf/training/nemotron/nemotron_340b.yaml in its distributed_fused_adam form, as NVIDIA\'s DGX Cloud benchmark of this model, dgxc-benchmarking nemotron/nemotron4-340b-synth.yaml, with the same TP 8, PP 8, VP 12, MBS 1: optim grad_sync_dtype bf16 and dtype bf16, for which NeMo keeps no master weights since the optimizer dtype is the weights\', and activations_checkpoint_granularity selective; the launcher\'s later mcore_distributed_optim form without recomputation keeps fp32 master weights and moments, 12 bytes per parameter, which the memory model judges not to fit on 80 GB at 88.6 GiB)';
const NEMOTRON_340B_LAUNCHER = 'gradients reduced and held in bf16 (NeMo Framework Launcher conf/training/nemotron/nemotron_340b.yaml, the Nemotron-4 340B pretraining configuration: optim mcore_distributed_optim with grad_sync_dtype bf16)';
const BRIDGE_PERF_CONFIGS = 'gradients reduced and held in bf16 (Megatron-Bridge scripts/performance/configs set mixed_precision.grad_reduce_in_fp32 and ddp.grad_reduce_in_fp32 to False: set_llama3_common_configs, set_qwen3_common_configs, and the DeepSeek-V3 configuration)';
const BF16_GRADIENTS = new Map([
  ['fp8-nemo-24.07-llama3-8b', NEMO_LAUNCHER_FP8_EXAMPLES],
  ['fp8-nemo-24.07-llama3-70b', NEMO_LAUNCHER_FP8_EXAMPLES],
  ['fp8-nemo-24.07-gpt3-175b', NEMO_LAUNCHER_FP8_EXAMPLES],
  ['fp8-nemo-24.07-llama2-70b', NEMO_LAUNCHER_FP8_EXAMPLES],
  ['fp8-nemo-24.07-nemotron-340b', NEMOTRON_340B_NEMO_PERF],
  ...['4k', '16k', '32k', '64k', '128k', '256k', '512k', '1m'].map((name) => [`fp8-nemo-long-llama2-7b-${name}`, LLAMA2_7B_LAUNCHER_FP8]),
  ...['1536', '3072', '6144'].map((gpus) => [`nemotron4-340b-${gpus}gpus`, NEMOTRON_340B_LAUNCHER]),
  ...['fp8-bridge-26.04.01-llama3-70b', 'fp8-bridge-25.11-llama3-70b', 'fp8-bridge-25.11-llama3-8b', 'fp8-bridge-26.04.01-qwen3-30b-a3b-ep16',
    'fp8-bridge-26.02.01-qwen3-30b-a3b-pp2', 'fp8-bridge-26.04.01-deepseek-v3-b200'].map((id) => [id, BRIDGE_PERF_CONFIGS]),
]);
/** The assumption note of a row with bf16 gradients ('' otherwise). */
const bf16GradientsNote = (id) => (BF16_GRADIENTS.has(id) ? `; ${BF16_GRADIENTS.get(id)}` : '');
// Rows run with Megatron-Bridge's fp8 current-scaling precision (scripts/performance/utils/precision.py:
// fp8_cs is bf16_with_fp8_current_scaling_mixed, which sets fp8_param_gather): the linear layers'
// weights kept and gathered in fp8 only (scenario training.fp8ParamGather). The other fp8 rows'
// recipes do not say (the 26.02.01 Qwen3 recipe is not in the repository; Llama-3-70B 26.04.01 is
// published as plain FP8; MXFP8's mixed-precision recipe has set it both ways across releases).
const FP8_PARAM_GATHER = new Set(['fp8-bridge-25.11-llama3-70b', 'fp8-bridge-25.11-llama3-8b', 'fp8-bridge-26.04.01-qwen3-30b-a3b-ep16']);
const FP8_PARAM_GATHER_NOTE = '; weights kept and gathered in fp8 only (Megatron-Bridge fp8_cs precision: bf16_with_fp8_current_scaling_mixed sets fp8_param_gather)';
const fp8ParamGatherNote = (id) => (FP8_PARAM_GATHER.has(id) ? FP8_PARAM_GATHER_NOTE : '');

const fp8 = [
  // id, source, model, GPUs, GBS, MBS, seq, TP, PP, CP, VP, ZeRO, tokens/s/GPU, scaling note
  ['bridge-26.04.01-llama3-70b', 'E', 'llama3-70b', 64, 256, 1, 8192, 4, 8, 1, 5, 1, 1664, 'FP8'],
  ['bridge-25.11-llama3-70b', 'E', 'llama3-70b', 64, 128, 1, 8192, 4, 8, 1, 5, 1, 1602, 'FP8 current scaling'],
  ['bridge-25.11-llama3-8b', 'E', 'llama3-8b', 8, 128, 1, 8192, 1, 1, 1, 1, 3, 14451, 'FP8 current scaling, FSDP 8 (ZeRO 3)'],
  ['nemo-24.07-llama3-8b', 'F', 'llama3-8b', 8, 128, 1, 8192, 1, 1, 2, 1, 1, 12273, 'FP8'],
  ['nemo-24.07-llama3-70b', 'F', 'llama3-70b', 64, 128, 1, 8192, 4, 4, 2, 5, 1, 1524, 'FP8'],
  ['nemo-24.07-llama2-70b', 'F', 'llama2-70b', 64, 128, 1, 4096, 4, 4, 1, 20, 1, 1728, 'FP8'],
].map(([name, section, model, gpus, batch, mbs, seqLen, tp, pp, cp, v, zero, tokens, note]) => {
  const id = `fp8-${name}`;
  const shape = LLAMA[model];
  return {
    id,
    table: section === 'E' ? 'E' : 'F1',
    source: section === 'E'
      ? 'NVIDIA-NeMo/Megatron-Bridge docs/performance-summary(-archive).md, DGX H100 (calibration.md section E)'
      : 'NVIDIA/NeMo docs/source/performance/performance_summary.md 24.07, DGX H100 (calibration.md section F)',
    metric: 'tokensPerSecondPerGpu',
    published: tokens,
    assumptions: `${note}; recomputation not published, assumed none (the plan fits without); distributed optimizer${zero === 3 ? ' with FSDP' : ' (ZeRO 1)'}; fused attention; TP and DP overlap on; SwiGLU, GQA, untied embeddings${bf16GradientsNote(id)}${fp8ParamGatherNote(id)}`,
    scenario: {
      version: 1,
      name: id,
      model: { name: id, ...shape, mlp: 'swiglu', tiedEmbeddings: false, dropout: false },
      training: { seqLen, globalBatchSeqs: batch, precision: 'fp8', flashAttention: true, overlap: { tensorParallel: true, dataParallel: true }, ...(BF16_GRADIENTS.has(id) ? { gradientDtype: 'bf16' } : {}), ...(FP8_PARAM_GATHER.has(id) ? { fp8ParamGather: true } : {}) },
      cluster: { sites: [{ name: 'cluster', gpuType: 'H100-SXM', gpus, gpusPerNode: 8 }], links: [] },
    },
    plan: { tp, cp, ep: 1, pp, dp: gpus / (tp * pp * cp), microBatchSeqs: mbs, schedule: v > 1 ? 'interleaved' : '1f1b', virtualStages: v, recompute: 'none', zero },
  };
});

// Sections E (MoE and Blackwell rows), F (the NeMo rows not covered above and the long-context
// table), G and H. Model shapes are those of calibration.md, written as `scaleacross import-model`
// maps the Hugging Face configs in fixtures/hf-configs (Qwen3-30B-A3B, DeepSeek-V3,
// Qwen2-57B-A14B, Nemotron-4-340B); Mixtral-8x22B and Llama-2-7B from calibration.md.
const MODELS = {
  'qwen3-30b-a3b': { layers: 48, hidden: 2048, ffnHidden: 6144, heads: 32, kvHeads: 4, headDim: 128, vocab: 151936, mlp: 'swiglu', moe: { experts: 128, topK: 8, expertFfnHidden: 768, sharedExperts: 0, denseLayers: 0 } },
  'deepseek-v3': {
    layers: 61, hidden: 7168, ffnHidden: 18432, heads: 128, kvHeads: 128, vocab: 129280, mlp: 'swiglu',
    attention: { kind: 'mla', qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 },
    moe: { experts: 256, topK: 8, expertFfnHidden: 2048, sharedExperts: 1, denseLayers: 3, routingGroups: { count: 8, perToken: 4 } }, mtpLayers: 1,
  },
  'nemotron-4-340b': { layers: 96, hidden: 18432, ffnHidden: 73728, heads: 96, kvHeads: 8, vocab: 256000, mlp: 'squared-relu' },
  'gpt3-175b': { layers: 96, hidden: 12288, ffnHidden: 4 * 12288, heads: 96, kvHeads: 96, vocab: 51200, mlp: 'gelu' },
  'llama2-7b': { layers: 32, hidden: 4096, ffnHidden: 11008, heads: 32, kvHeads: 32, vocab: 32000, mlp: 'swiglu' },
  // The shared expert of FFN 20480 is written as 8 shared experts of 2560 (same FLOPs, parameters and activations).
  'qwen2-57b-a14b': { layers: 28, hidden: 3584, ffnHidden: 18944, heads: 28, kvHeads: 4, vocab: 151936, mlp: 'swiglu', moe: { experts: 64, topK: 8, expertFfnHidden: 2560, sharedExperts: 8, denseLayers: 0 } },
  'mixtral-8x22b': { layers: 56, hidden: 6144, ffnHidden: 16384, heads: 48, kvHeads: 8, vocab: 32000, mlp: 'swiglu', moe: { experts: 8, topK: 2, expertFfnHidden: 16384, sharedExperts: 0, denseLayers: 0 } },
};

/** One row from its job and published plan; `c` holds the columns of the published table. */
function row(c) {
  const dp = c.gpus / (c.tp * c.pp * (c.cp ?? 1));
  if (!Number.isInteger(dp)) throw new Error(`${c.id}: GPUs not divisible by TP x PP x CP`);
  return {
    id: c.id,
    table: c.table,
    source: c.source,
    metric: c.metric,
    published: c.published,
    assumptions: c.assumptions,
    scenario: {
      version: 1,
      name: c.id,
      model: { name: c.id, ...MODELS[c.model], tiedEmbeddings: false, dropout: false },
      training: {
        seqLen: c.seq, globalBatchSeqs: c.gbs, precision: c.precision, ...(c.fp8Recipe ? { fp8Recipe: c.fp8Recipe } : {}), flashAttention: true,
        overlap: { tensorParallel: true, dataParallel: true, expertParallel: c.epOverlap ?? false },
        expertDispatcher: c.dispatcher ?? 'alltoall',
        ...(BF16_GRADIENTS.has(c.id) ? { gradientDtype: 'bf16' } : {}),
        ...(FP8_PARAM_GATHER.has(c.id) ? { fp8ParamGather: true } : {}),
        ...(c.optimizerMomentsDtype ? { optimizerMomentsDtype: c.optimizerMomentsDtype } : {}),
        ...(c.masterWeights ? { masterWeights: c.masterWeights } : {}),
      },
      // A job on fewer GPUs than a node (the 4-GPU long-context row) is written as nodes of that many GPUs.
      cluster: { sites: [{ name: 'cluster', gpuType: c.gpuType ?? 'H100-SXM', gpus: c.gpus, gpusPerNode: Math.min(8, c.gpus) }], links: [] },
    },
    plan: {
      tp: c.tp, cp: c.cp ?? 1, ep: c.ep ?? 1, pp: c.pp, dp, microBatchSeqs: c.mbs,
      schedule: (c.vp ?? 1) > 1 ? 'interleaved' : '1f1b', virtualStages: c.vp ?? 1, recompute: c.recompute ?? 'none', ...(c.recomputeModules ? { recomputeModules: c.recomputeModules } : {}), zero: c.zero ?? 1,
      ...(c.layersPerStage ? { placement: { layersPerStage: c.layersPerStage, replicaGroups: [{ replicas: dp, stageSites: [{ site: 'cluster', stages: c.pp }] }] } } : {}),
    },
  };
}

const BRIDGE = 'NVIDIA-NeMo/Megatron-Bridge docs/performance-summary(-archive).md (calibration.md section E)';
// Dispatcher, all-to-all overlap and pipeline layout from the recipes these rows ran
// (Megatron-Bridge scripts/performance/configs: QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1 and
// DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2), as calibration.md section E directs.
const bridgeMoe = [
  {
    id: 'fp8-bridge-26.04.01-qwen3-30b-a3b-ep16', model: 'qwen3-30b-a3b', gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 1, ep: 16, published: 8960,
    dispatcher: 'hybridep', epOverlap: false, recipe: 'recipe QWEN3_30B_A3B H100 FP8_CS: HybridEP dispatcher, all-to-all not overlapped',
  },
  {
    id: 'fp8-bridge-26.02.01-qwen3-30b-a3b-pp2', model: 'qwen3-30b-a3b', gpus: 16, gbs: 1024, mbs: 1, seq: 4096, tp: 1, pp: 2, vp: 12, ep: 8, published: 9058,
    recipe: 'this release\'s recipe not in the current repository: all-to-all dispatcher and no overlap assumed (EP 8 stays inside one node either way)',
  },
  {
    id: 'fp8-bridge-26.04.01-deepseek-v3-b200', model: 'deepseek-v3', gpuType: 'B200', gpus: 256, gbs: 4096, mbs: 1, seq: 4096, tp: 1, pp: 8, vp: 2, ep: 32, published: 3328,
    dispatcher: 'deepep', epOverlap: true, fp8Recipe: 'mxfp8', layersPerStage: [8, 8, 8, 8, 8, 8, 8, 5], recompute: 'selective', recomputeModules: ['mla_up_proj', 'mlp'],
    recipe: 'recipe DEEPSEEK_V3 B200 FP8_MX_V2: DeepEP dispatcher, all-to-all overlap on; pipeline layout Et*4|(t*4|)*14tmL (chunks of 4 layers, the embedding on the first, one layer with the MTP module and the loss on the last: stages of 8 layers, the last 5); selective recomputation of the modules mla_up_proj and mlp (recompute_modules in scripts/performance/configs/deepseek/deepseek_workload_base_configs.py; not in the published table); its CUDA graphs (attention, MoE router and preprocessing) are not modelled',
  },
].map((c) => row({
  ...c, table: 'E', source: BRIDGE, metric: 'tokensPerSecondPerGpu', precision: 'fp8',
  assumptions: `${c.fp8Recipe === 'mxfp8' ? 'MXFP8 (fp8 with training.fp8Recipe mxfp8, at the B200 dense fp8 peak); ' : 'FP8; '}token-dropless with force-balanced routing (every expert gets topK/experts of the tokens); `
    + `${c.recipe}; `
    + (c.model === 'deepseek-v3' ? 'distributed optimizer (ZeRO 1); fused attention; TP and DP overlap on' : 'recomputation not published, assumed none; distributed optimizer (ZeRO 1); fused attention; TP and DP overlap on')
    + bf16GradientsNote(c.id) + fp8ParamGatherNote(c.id),
}));

const NEMO = 'NVIDIA/NeMo docs/source/performance/performance_summary.md 24.07, DGX H100 (calibration.md section F)';
const nemoH100 = [
  { id: 'fp8-nemo-24.07-nemotron-340b', model: 'nemotron-4-340b', gpus: 128, gbs: 32, mbs: 1, seq: 4096, tp: 8, pp: 8, vp: 12, published: 326, recompute: 'selective', optimizerMomentsDtype: 'bf16', masterWeights: 'none' },
  { id: 'fp8-nemo-24.07-gpt3-175b', model: 'gpt3-175b', gpus: 512, gbs: 2048, mbs: 2, seq: 2048, tp: 4, pp: 8, vp: 6, published: 825 },
].map((c) => row({
  ...c, table: 'F1', source: NEMO, metric: 'tokensPerSecondPerGpu', precision: 'fp8',
  assumptions: `FP8; ${c.recompute ? `recomputation ${c.recompute} (below)` : 'recomputation not published, assumed none'}; distributed optimizer (ZeRO 1); fused attention; TP and DP overlap on`
    + (c.model === 'gpt3-175b' ? '; GPT-3 as NeMo trains it: GELU FFN 4h, MHA, vocabulary padded to 51,200, no dropout' : '; Nemotron-4: squared ReLU, GQA 8')
    + bf16GradientsNote(c.id),
}));

// F, long context (NeMo 24.03.01). The published metric is TFLOP/s/GPU; NeMo's FLOP formula of
// that time counts the full attention square (as its 24.07 table does), assumed here. The
// "without CP" column is not a row: its configuration is not published.
const longContext = [
  ['4k', 4096, 4, 1024, 1, 4, 1, 768],
  ['16k', 16384, 16, 256, 2, 8, 1, 660],
  ['32k', 32768, 32, 128, 2, 8, 2, 610],
  ['64k', 65536, 64, 64, 4, 8, 2, 574],
  ['128k', 131072, 128, 32, 4, 8, 4, 555],
  ['256k', 262144, 256, 16, 4, 8, 8, 549],
  ['512k', 524288, 512, 8, 8, 4, 16, 549],
  ['1m', 1048576, 1024, 4, 8, 4, 32, 536],
].map(([name, seq, gpus, gbs, tp, dp, cp, tflops]) => {
  const r = row({
    id: `fp8-nemo-long-llama2-7b-${name}`, table: 'F2', model: 'llama2-7b', gpus, gbs, mbs: 1, seq, tp, pp: 1, cp, precision: 'fp8', masterWeights: 'remainders',
    source: 'NVIDIA/NeMo docs/source/performance/performance_long_sequence.md, NeMo 24.03.01, DGX H100 (calibration.md section F, "with CP" column)',
    metric: 'modelTflopsPerGpu', published: tflops,
    assumptions: (gpus < 8 ? `${gpus} GPUs of one DGX, written as one node of ${gpus}; ` : '') + 'FP8; MBS 1 and recomputation not published, assumed MBS 1 and none; TFLOP/s counted with the full attention square (NeMo formula); distributed optimizer (ZeRO 1); fused attention; TP, DP overlap on; CP as ring attention; master weights as 16-bit remainders (the launcher\'s llama2_7b configuration runs Apex\'s distributed_fused_adam with an fp32 optimizer state, for which NeMo 1.x sets store_param_remainders beside the bf16 weights)' + bf16GradientsNote(`fp8-nemo-long-llama2-7b-${name}`),
  });
  if (r.plan.dp !== dp) throw new Error(`${r.id}: DP ${r.plan.dp} against published ${dp}`);
  return r;
});

// G. MoE Parallel Folding, "MCore" rows (no folding): BF16, capacity factor 1 (token dropping:
// every expert computes at most its balanced share, so the expert FLOPs are those of balanced
// routing). MFU is against 989.5 TFLOP/s with the paper's FLOP count (not stated): assumed
// Megatron-LM's, the full attention square, so the published metric is MFU x 989.5 model TFLOP/s.
const folding = [
  ['mixtral-8x22b', 256, [[128, 46.3]]],
  ['qwen2-57b-a14b', 256, [[64, 35.3]]],
  ['mixtral-8x22b', 1024, [[128, 49.4], [256, 48.0], [512, 45.5], [1024, 42.3]]],
  ['qwen2-57b-a14b', 1024, [[64, 36.2], [128, 36.0], [256, 34.8], [512, 32.5], [1024, 29.8]]],
].flatMap(([model, gbs, runs]) => runs.map(([gpus, mfu]) => row({
  id: `folding-${model}-gbs${gbs}-${gpus}gpus`, table: 'G', model, gpus, gbs, mbs: 1, seq: 4096,
  tp: 2, ep: 4, pp: model === 'mixtral-8x22b' ? 8 : 4, precision: 'bf16',
  source: 'Liu et al., MoE Parallel Folding (arXiv 2504.14960), Tables 3-4, MCore rows (calibration.md section G)',
  metric: 'modelTflopsPerGpu', published: +(mfu * 9.895).toFixed(2),
  assumptions: `MFU ${mfu}% x 989.5 TFLOP/s, counting the full attention square (Megatron-LM convention, assumed); MBS 1, 1F1B (no interleaving), no recomputation, ZeRO 1 assumed (not published); capacity factor 1 written as balanced routing; fused attention; TP and DP overlap on; expert all-to-all not overlapped`,
})));

// H. Nemotron-4 340B technical report, Table 2: iteration time.
const nemotron4 = [[768, 1536, 10.3], [1536, 3072, 10.3], [2304, 6144, 8.0]].map(([gbs, gpus, seconds]) => row({
  id: `nemotron4-340b-${gpus}gpus`, table: 'H', model: 'nemotron-4-340b', gpus, gbs, mbs: 1, seq: 4096, tp: 8, pp: 12, vp: 2, precision: 'bf16',
  source: 'Nemotron-4 340B technical report (arXiv 2406.11704), Table 2 (calibration.md section H)',
  metric: 'iterationTimeS', published: seconds,
  assumptions: 'BF16; virtual stages not published, taken as 2 (four layers per chunk) from the table\'s own scaling: 8.0 s at 36 microbatches per replica against 10.3 s at 48 (ratio 0.777, 0.772-0.782 within the published rounding) is a bubble of about 6 microbatch times, (p - 1)/v = 11/v for PP 12, so v = 2 (the cost model gives the ratio 0.780 at v = 2, 0.770 at 4, 0.764 at 8, 0.798 without interleaving); MBS 1, no recomputation, ZeRO 1, fused attention, TP and DP overlap on (assumed)' + bf16GradientsNote(`nemotron4-340b-${gpus}gpus`),
}));

const files = [
  ['megatron-sc21.json', sc21], ['megatron-h100.json', h100], ['korthikanti-2022.json', korthikanti], ['nvidia-fp8-h100.json', fp8],
  ['megatron-bridge-moe.json', bridgeMoe], ['nemo-h100.json', nemoH100], ['nemo-long-context.json', longContext],
  ['moe-parallel-folding.json', folding], ['nemotron-4-340b.json', nemotron4],
];
let count = 0;
for (const [file, rows] of files) {
  fs.writeFileSync(path.join(out, file), JSON.stringify(rows, null, 2) + '\n');
  count += rows.length;
}
console.log(`wrote ${count} calibration rows to ${out}`);
