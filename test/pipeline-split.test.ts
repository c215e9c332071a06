/**
 * The embedding and the loss counted as pipeline layers (plan.pipelineSplit; Megatron-LM's
 * --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split): stage and
 * chunk layouts, the automatic choice when pp x virtualStages exceeds the layers, and the exports.
 */
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan, torchtitanSplit } from '../src/export/torchtitan';
import { balancedLayers, defaultLayersPerStage, layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { clone, fixturePath, loadFixture, readPlanFixture } from './helpers/fixtures';
import { readJsonFile } from '../src/io/files';

type Json = any; // plans mutated by hand

const llama405 = parseScenario(readJsonFile(fixturePath('published/llama3-405b-16k-h100.json')), 'llama3-405b-16k-h100');
const published = readPlanFixture('llama3-405b-published') as Json;

describe('stage layouts with the embedding and loss counted as layers', () => {
  it('126 layers on 16 x 8 chunks: the first chunk holds only the embedding, the last only the output and loss (Llama 3 §3.3.2)', () => {
    const { stages, plan } = layOutPlan(llama405, published);
    expect(plan.pipelineSplit).toEqual({ embeddingAsLayer: true, lossAsLayer: true });
    expect(stages.map((s) => s.layers)).toEqual([7, ...Array.from({ length: 14 }, () => 8), 7]);
    expect(stages[0]!.chunkLayers).toEqual([0, 1, 1, 1, 1, 1, 1, 1]);
    expect(stages[15]!.chunkLayers).toEqual([1, 1, 1, 1, 1, 1, 1, 0]);
    for (const stage of stages.slice(1, 15)) expect(stage.chunkLayers).toEqual(Array.from({ length: 8 }, () => 1));
    expect(stages[0]!.hasEmbedding && stages[15]!.hasOutputLayer).toBe(true);
  });

  it('is chosen automatically when pp x virtualStages exceeds the layers, and written into the plan', () => {
    const { pipelineSplit, ...withoutSplit } = published;
    const auto = layOutPlan(llama405, withoutSplit);
    expect(auto.plan.pipelineSplit).toEqual({ embeddingAsLayer: true, lossAsLayer: true });
    expect(auto.stages).toEqual(layOutPlan(llama405, published).stages);
  });

  it('is off by default otherwise: a plan without it is laid out as before (balanced, extra layers in the middle)', () => {
    const plan = { ...published, virtualStages: 7, pipelineSplit: undefined };
    const { stages, plan: laidOut } = layOutPlan(llama405, plan);
    expect(laidOut.pipelineSplit).toBeUndefined();
    expect(stages.map((s) => s.layers)).toEqual(balancedLayers(126, 16));
    for (const stage of stages) expect(stage.chunkLayers).toEqual(balancedLayers(stage.layers, 7));
  });

  it('by choice with pp x v below the layers: only the chosen end gives up a layer, and every layer is placed once', () => {
    // 30 layers + the embedding = 31 units: 8, 8, 8, 7 (balanced), the first giving one up to the embedding.
    expect(defaultLayersPerStage(30, 4, { embeddingAsLayer: true, lossAsLayer: false })).toEqual([7, 8, 8, 7]);
    expect(defaultLayersPerStage(30, 4, { embeddingAsLayer: false, lossAsLayer: false })).toEqual(balancedLayers(30, 4));
    const scenario = loadFixture('llama3-8b-one-site');
    for (const [embeddingAsLayer, lossAsLayer] of [[true, false], [false, true], [true, true]] as const) {
      const { stages } = layOutPlan(scenario, { tp: 8, pp: 4, dp: 1, microBatchSeqs: 1, schedule: 'interleaved', virtualStages: 2, pipelineSplit: { embeddingAsLayer, lossAsLayer } });
      expect(stages.reduce((sum, s) => sum + s.layers, 0)).toBe(scenario.model.layers);
      for (const stage of stages) expect(stage.chunkLayers.reduce((a, b) => a + b, 0)).toBe(stage.layers);
      const units = stages.flatMap((s, j) => s.chunkLayers.map((n, c) => n + (embeddingAsLayer && j === 0 && c === 0 ? 1 : 0) + (lossAsLayer && j === 3 && c === 1 ? 1 : 0)));
      expect(Math.max(...units) - Math.min(...units)).toBeLessThanOrEqual(1);
    }
  });

});

describe('exports of the split', () => {
  it('Megatron-LM: the 405B split (16 x 8 chunks) emits both flags and no first/last stage flags, without errors', () => {
    // The published plan (ZeRO 2: Megatron FSDP's optim_grads, a warning) fits at 77.0 GiB.
    const result = exportMegatron(llama405, layOutPlan(llama405, published));
    expect(result.keys).toEqual(expect.arrayContaining(['--account-for-embedding-in-pipeline-split', '--account-for-loss-in-pipeline-split', '--num-virtual-stages-per-pipeline-rank']));
    expect(result.keys).not.toContain('--decoder-first-pipeline-num-layers');
    expect(result.keys).not.toContain('--decoder-last-pipeline-num-layers');
    expect(result.text).toMatch(/--num-virtual-stages-per-pipeline-rank 8/);
    expect(result.messages.filter((m) => m.severity === 'error')).toEqual([]);
    // With the distributed optimizer (ZeRO 1) the full fp32 gradient buffer does not fit 80 GB: refused, naming the memory.
    const zero1 = exportMegatron(llama405, layOutPlan(llama405, { ...published, zero: 1 }));
    expect(zero1.keys).toContain('--account-for-embedding-in-pipeline-split');
    expect(zero1.messages.filter((m) => m.severity === 'error').map((m) => m.message)).toContain('the plan does not fit the scenario: stage 1 at rsc needs 87.3 GiB per GPU, has 80 (H100-SXM)');
  });

  it('Megatron-LM: only the embedding flag when only the embedding counts', () => {
    const scenario = loadFixture('llama3-8b-one-site');
    // 32 layers + the embedding = 33 units cannot split evenly over 4 x 2 chunks: an error naming the layout flag.
    const uneven = exportMegatron(scenario, layOutPlan(scenario, { tp: 8, pp: 4, dp: 1, microBatchSeqs: 1, schedule: 'interleaved', virtualStages: 2, pipelineSplit: { embeddingAsLayer: true, lossAsLayer: false } }));
    expect(uneven.messages.some((m) => m.severity === 'error' && /--pipeline-model-parallel-layout/.test(m.message))).toBe(true);
    expect(uneven.keys).not.toContain('--account-for-embedding-in-pipeline-split');
    // 31 layers + the embedding = 32 units over 4 x 2 chunks: even.
    const spec = clone(readJsonFile(fixturePath('llama3-8b-one-site.json'))) as Json;
    spec.model.layers = 31;
    const odd = parseScenario(spec);
    const even = exportMegatron(odd, layOutPlan(odd, { tp: 8, pp: 4, dp: 1, microBatchSeqs: 1, schedule: 'interleaved', virtualStages: 2, pipelineSplit: { embeddingAsLayer: true, lossAsLayer: false } }));
    expect(even.keys).toContain('--account-for-embedding-in-pipeline-split');
    expect(even.keys).not.toContain('--account-for-loss-in-pipeline-split');
    expect(even.messages.filter((m) => m.severity === 'error')).toEqual([]);
  });

  it('torchtitan: the embedding and the output head are model parts of their own', () => {
    const result = exportTorchtitan(llama405, layOutPlan(llama405, published));
    expect(result.text).toContain('  ["tok_embeddings"],\n  ["layers.0"],');
    expect(result.text).toContain('  ["layers.125"],\n  ["norm", "output"],');
    expect(result.messages.filter((m) => m.severity === 'error')).toEqual([]);
  });

  it('torchtitan without interleaving: its first/last stage "less layers" settings reproduce the split', () => {
    const scenario = loadFixture('llama3-8b-one-site');
    const layout = layOutPlan(scenario, { tp: 8, pp: 4, dp: 1, microBatchSeqs: 1, pipelineSplit: { embeddingAsLayer: true, lossAsLayer: true } });
    expect(layout.stages.map((s) => s.layers)).toEqual([7, 9, 9, 7]);
    const result = exportTorchtitan(scenario, layout);
    const first = Number(result.text.match(/pipeline_parallel_first_stage_less_layers = (\d+)/)![1]);
    const last = Number(result.text.match(/pipeline_parallel_last_stage_less_layers = (\d+)/)![1]);
    expect(torchtitanSplit(32, 4, first, last)).toEqual([7, 9, 9, 7]);
  });
});
