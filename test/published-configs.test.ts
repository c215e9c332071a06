/**
 * Configurations published runs trained with are judged to fit, term by term (docs/cost-model.md
 * §6): Llama 3 405B on 16,384 H100s (Llama 3 paper, section 3.3: TP 8, CP 1, PP 16, DP 128,
 * sequence 8192, 16M-token batch, interleaved 16 x 8 chunks with the embedding and the loss as
 * chunks of their own, no activation checkpointing, optimizer state and gradients sharded), and
 * NVIDIA's Llama-3-70B FP8 recipe on 64 H100s (calibration.md section E: TP 4, PP 8, VP 5, MBS 1,
 * GBS 256, sequence 8192; distributed optimizer; recomputation not published, none assumed).
 */
import { exportMegatron } from '../src/export/megatron';
import { readJsonFile } from '../src/io/files';
import { evaluate } from '../src/model/evaluate';
import { stageMemory } from '../src/model/memory';
import { layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { fixturePath, readPlanFixture } from './helpers/fixtures';

const GIB = 2 ** 30;
const load = (name: string) => parseScenario(readJsonFile(fixturePath(`published/${name}.json`)), name);

describe('Llama 3 405B, TP 8 PP 16 DP 128 on 80 GB H100s', () => {
  const scenario = load('llama3-405b-16k-h100');
  const plan = readPlanFixture('llama3-405b-published');
  const result = evaluate(scenario, plan);
  const peak = result.predicted.peakMemory;
  const h = 16384, f = 53248, kv = 1024, t = 8, s = 8192;
  const perLayerPerGpu = (2 * h * h + 2 * h * kv + 3 * h * f + 4 * h) / t;

  it('evaluates and fits, with 16 microbatches per replica (16M tokens / 128 replicas / 8192)', () => {
    expect(result.violations).toEqual([]);
    expect(result.fits).toBe(true);
    expect(result.predicted.microbatchesPerReplica).toBe(16);
    expect(peak.totalGiB).toBeLessThanOrEqual(80);
  });

  it('the peak is a middle stage of 8 layers holding all 16 microbatches (Megatron\'s interleaved warm-up covers the whole batch when m = p)', () => {
    expect(peak.stage).toBeGreaterThan(0);
    expect(peak.stage).toBeLessThan(15);
    // Korthikanti et al. eq. 2 with TP and sequence parallelism, fused attention, GQA, SwiGLU: (12.25 h + 6 f) bytes per token per layer / t.
    const layerBytes = (s * (12.25 * h + 6 * f)) / t;
    expect(peak.activationsGiB).toBeCloseTo((16 * 8 * layerBytes) / GIB, 6);
    expect(peak.fragmentationGiB).toBeCloseTo(0.05 * peak.activationsGiB, 6);
  });

  it('model state: bf16 weights, fp32 gradients sharded over dp plus one layer awaiting its reduce-scatter, 12 bytes of optimizer state over dp', () => {
    expect(peak.weightsGiB).toBeCloseTo((2 * 8 * perLayerPerGpu) / GIB, 6);
    expect(peak.gradientsGiB).toBeCloseTo((4 * 8 * perLayerPerGpu / 128 + 4 * perLayerPerGpu) / GIB, 6);
    expect(peak.optimizerGiB).toBeCloseTo((12 * 8 * perLayerPerGpu / 128) / GIB, 6);
    expect(peak.fp8WeightCopiesGiB).toBe(0);
    expect(peak.embeddingOutputGiB).toBe(0);
    expect(peak.cudaContextGiB).toBe(1);
    expect(peak.ncclBuffersGiB).toBe(1.5); // tensor, pipeline and data-parallel communicators
    const parts = peak.weightsGiB + peak.gradientsGiB + peak.optimizerGiB + peak.fp8WeightCopiesGiB + peak.activationsGiB
      + peak.embeddingOutputGiB + peak.cudaContextGiB + peak.ncclBuffersGiB + peak.fragmentationGiB;
    expect(parts).toBeCloseTo(peak.totalGiB, 9);
  });

  it('with Megatron\'s distributed optimizer instead (a full fp32 gradient buffer per GPU, ZeRO-1) it would not fit', () => {
    const zero1 = evaluate(scenario, { ...plan, zero: 1 });
    expect(zero1.fits).toBe(false);
    expect(zero1.predicted.peakMemory.gradientsGiB).toBeCloseTo((4 * 8 * perLayerPerGpu) / GIB, 6);
  });

  it('the first stage holds the embedding in place of a layer: 7 layers, plus the embedding matrix\'s state and output', () => {
    const layout = layOutPlan(scenario, plan);
    const first = stageMemory(scenario, layout.plan, layout.stages[0]!, 16);
    expect(layout.stages[0]!.layers).toBe(7);
    expect(first.activationsGiB).toBeCloseTo((16 * 7 * (s * (12.25 * h + 6 * f)) / t) / GIB, 6);
    const vocab = (128256 * h) / t;
    expect(first.embeddingOutputGiB).toBeCloseTo((vocab * (2 + 4 / 128 + 12 / 128) + (s / t) * h * 2) / GIB, 6);
    // ZeRO-2's unsharded gradient: the larger of a layer's and the embedding matrix's (a layer's, 399M against 263M per GPU).
    expect(perLayerPerGpu).toBeGreaterThan(vocab);
    expect(first.gradientsGiB).toBeCloseTo((4 * 7 * perLayerPerGpu / 128 + 4 * perLayerPerGpu) / GIB, 6);
    expect(first.totalGiB).toBeLessThan(peak.totalGiB);
  });

  it('exports to Megatron-LM with the embedding and loss split flags, ZeRO-2 as Megatron FSDP, and no errors', () => {
    const exported = exportMegatron(scenario, layOutPlan(scenario, plan));
    expect(exported.keys).toEqual(expect.arrayContaining([
      '--account-for-embedding-in-pipeline-split', '--account-for-loss-in-pipeline-split', '--num-virtual-stages-per-pipeline-rank', '--use-megatron-fsdp',
    ]));
    expect(exported.text).toMatch(/--data-parallel-sharding-strategy optim_grads\b/);
    expect(exported.text).toMatch(/--num-virtual-stages-per-pipeline-rank 8\b/);
    expect(exported.messages.filter((m) => m.severity === 'error')).toEqual([]);
    expect(exported.messages.some((m) => m.severity === 'warning' && /--use-distributed-optimizer.*would not fit/.test(m.message))).toBe(true);
  });
});

describe('Llama-3-70B FP8, TP 4 PP 8 VP 5 on 64 H100s (Megatron-Bridge)', () => {
  const scenario = load('llama3-70b-fp8-64-h100');
  const plan = readPlanFixture('llama3-70b-fp8-published');
  const result = evaluate(scenario, plan);
  const peak = result.predicted.peakMemory;
  const h = 8192, f = 28672, kv = 1024, t = 4, s = 8192, V = 128256;
  const linearPerLayerPerGpu = (2 * h * h + 2 * h * kv + 3 * h * f) / t;

  it('evaluates and fits on 80 GB', () => {
    expect(result.violations).toEqual([]);
    expect(result.predicted.microbatchesPerReplica).toBe(128);
    expect(peak.totalGiB).toBeLessThanOrEqual(80);
  });

  it('the first stage peaks: 10 layers and the embedding, 9.4 microbatches in flight (2(p-1) + (v-1)p + 1 chunks over v)', () => {
    expect(peak.stage).toBe(0);
    // fp8: the QKV, FC1 and FC2 inputs are kept as fp8, the output projection's input once more as fp8: (12.5 h + 6 f - h - f) bytes per token.
    const layerBytes = (s * (12.5 * h + 6 * f - h - f)) / t;
    expect(peak.activationsGiB).toBeCloseTo((9.4 * 10 * layerBytes) / GIB, 6);
    // bf16 weights, bf16 gradients (Megatron-Bridge's performance configurations reduce in bf16), fp32 optimizer state over dp 2.
    expect(peak.embeddingOutputGiB).toBeCloseTo(((V * h / t) * (2 + 2 + 12 / 2) + (s / t) * h * 2) / GIB, 6);
  });

  it('its gradients are held in bf16 as Megatron-Bridge runs it (grad_reduce_in_fp32 off): 2 bytes per parameter, fp32 would be 4', () => {
    expect(scenario.training.gradientDtype).toBe('bf16');
    const fp32 = evaluate({ ...scenario, training: { ...scenario.training, gradientDtype: 'fp32' } }, plan).predicted.peakMemory;
    expect(fp32.gradientsGiB / peak.gradientsGiB).toBeCloseTo(2, 9);
    expect(fp32.totalGiB - peak.totalGiB).toBeCloseTo(peak.gradientsGiB + (V * h / t) * 2 / GIB, 6);
  });

  it('fp8 keeps an fp8 weight and its transpose for every linear layer (2 bytes per parameter) on top of the bf16 weights', () => {
    expect(peak.fp8WeightCopiesGiB).toBeCloseTo((2 * 10 * linearPerLayerPerGpu) / GIB, 6);
    const bf16 = evaluate({ ...scenario, training: { ...scenario.training, precision: 'bf16' } }, plan).predicted.peakMemory;
    expect(bf16.fp8WeightCopiesGiB).toBe(0);
    expect(bf16.activationsGiB / peak.activationsGiB).toBeCloseTo((12.5 * h + 6 * f) / (12.5 * h + 6 * f - h - f), 9);
    expect(peak.ncclBuffersGiB - bf16.ncclBuffersGiB).toBe(0.5); // Transformer Engine's amax reduction
  });
});

describe('memory per site', () => {
  it('every used site reports the named terms of its largest stage, which add up to the site\'s memory per GPU', () => {
    const scenario = parseScenario(readJsonFile(fixturePath('llama3-405b-two-buildings.json')), 'two-buildings');
    const result = evaluate(scenario, readPlanFixture('llama3-405b-pp-across-no-recompute'));
    expect(result.predicted.sites).toHaveLength(2);
    const stagesBySite = result.predicted.sites.map((site) => site.stages.map((s) => s.stage));
    result.predicted.sites.forEach((site, s) => {
      const peak = site.peakMemory!;
      expect(peak.totalGiB).toBe(site.memoryGiBPerGpu);
      expect(stagesBySite[s]).toContain(peak.stage);
      const parts = peak.weightsGiB + peak.gradientsGiB + peak.optimizerGiB + peak.fp8WeightCopiesGiB + peak.activationsGiB
        + peak.embeddingOutputGiB + peak.cudaContextGiB + peak.ncclBuffersGiB + peak.fragmentationGiB;
      expect(parts).toBeCloseTo(peak.totalGiB, 9);
    });
    // Stages 0-7 at bldg-a and 8-15 at bldg-b: the first stages hold more microbatches in flight.
    expect(result.predicted.sites[0]!.peakMemory!.activationsGiB).toBeGreaterThan(result.predicted.sites[1]!.peakMemory!.activationsGiB);
  });
});
