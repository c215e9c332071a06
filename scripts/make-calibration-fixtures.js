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
    source: section === 'E'
      ? 'NVIDIA-NeMo/Megatron-Bridge docs/performance-summary(-archive).md, DGX H100 (calibration.md section E)'
      : 'NVIDIA/NeMo docs/source/performance/performance_summary.md 24.07, DGX H100 (calibration.md section F)',
    metric: 'tokensPerSecondPerGpu',
    published: tokens,
    assumptions: `${note}; recomputation not published, assumed none (the plan fits without); distributed optimizer${zero === 3 ? ' with FSDP' : ' (ZeRO 1)'}; fused attention; TP and DP overlap on; SwiGLU, GQA, untied embeddings`,
    scenario: {
      version: 1,
      name: id,
      model: { name: id, ...shape, mlp: 'swiglu', tiedEmbeddings: false, dropout: false },
      training: { seqLen, globalBatchSeqs: batch, precision: 'fp8', flashAttention: true, overlap: { tensorParallel: true, dataParallel: true } },
      cluster: { sites: [{ name: 'cluster', gpuType: 'H100-SXM', gpus, gpusPerNode: 8 }], links: [] },
    },
    plan: { tp, cp, ep: 1, pp, dp: gpus / (tp * pp * cp), microBatchSeqs: mbs, schedule: v > 1 ? 'interleaved' : '1f1b', virtualStages: v, recompute: 'none', zero },
  };
});

for (const [file, rows] of [['megatron-sc21.json', sc21], ['megatron-h100.json', h100], ['korthikanti-2022.json', korthikanti], ['nvidia-fp8-h100.json', fp8]]) {
  fs.writeFileSync(path.join(out, file), JSON.stringify(rows, null, 2) + '\n');
}
console.log(`wrote ${sc21.length + h100.length + korthikanti.length + fp8.length} calibration rows to ${out}`);
