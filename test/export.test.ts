/** Exports to Megatron-LM and torchtitan: every emitted name is a documented one, values follow the plan, and unsupported combinations are reported. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../src/cli/run';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan, torchtitanSplit } from '../src/export/torchtitan';
import { modelFromHfConfig } from '../src/model/hf-config';
import { layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { fixturePath, loadFixture, readPlanFixture, ROOT } from './helpers/fixtures';

const documented = (file: string): Set<string> => new Set(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', file), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));
const megatronFlags = documented('megatron-flags.txt');
const torchtitanKeys = documented('torchtitan-keys.txt');

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
  return { code, out, err };
}

const CASES = [
  ['llama3-405b-two-buildings', 'llama3-405b-two-buildings'],
  ['llama3-405b-two-buildings', 'llama3-405b-pp-across-no-recompute'],
  ['llama3-70b-three-regions', 'llama3-70b-three-regions'],
  ['llama3-8b-one-site', 'llama3-8b-one-site'],
  ['deepseek-v3-moe-two-sites', 'deepseek-v3-moe-two-sites'],
] as const;

describe.each(CASES)('%s with plan %s', (scenarioName, planName) => {
  const scenario = loadFixture(scenarioName);
  const layout = layOutPlan(scenario, readPlanFixture(planName));

  it('Megatron-LM: every flag is documented, the degrees and batch are the plan\'s, the rank map covers every GPU', () => {
    const result = exportMegatron(scenario, layout);
    expect(result.keys.length).toBeGreaterThan(5);
    for (const flag of result.keys) expect(megatronFlags).toContain(flag);
    const value = (flag: string) => result.text.match(new RegExp(`${flag} (\\S+)`))?.[1];
    expect(value('--tensor-model-parallel-size')).toBe(String(layout.plan.tp));
    expect(value('--pipeline-model-parallel-size')).toBe(String(layout.plan.pp));
    expect(value('--micro-batch-size')).toBe(String(layout.plan.microBatchSeqs));
    expect(value('--global-batch-size')).toBe(String(scenario.training.globalBatchSeqs));
    expect(value('--num-layers')).toBe(String(scenario.model.layers));
    const ranks = result.rankMap.ranges.reduce((sum, r) => sum + r.lastRank - r.firstRank + 1, 0);
    expect(ranks).toBe(layout.plan.tp * layout.plan.cp * layout.plan.pp * layout.plan.dp);
    expect(new Set(result.rankMap.ranges.map((r) => r.site))).toEqual(new Set(layout.groups.flatMap((g) => g.stageSite.map((s) => scenario.sites[s]!.name))));
  });

  it('torchtitan: every key is a documented job-config field, the schedule a documented name, the batch the plan\'s', () => {
    const result = exportTorchtitan(scenario, layout);
    for (const key of result.keys) expect(torchtitanKeys).toContain(key);
    const schedule = result.text.match(/pipeline_parallel_schedule = "(\w+)"/)?.[1];
    if (layout.plan.pp > 1) expect(torchtitanKeys).toContain(`schedule:${schedule}`);
    expect(result.text).toContain(`tensor_parallel_degree = ${layout.plan.tp}`);
    expect(result.text).toContain(`global_batch_size = ${scenario.training.globalBatchSeqs}`);
    const shard = Number(result.text.match(/data_parallel_shard_degree = (\d+)/)![1]);
    const replicate = Number(result.text.match(/data_parallel_replicate_degree = (\d+)/)![1]);
    expect(shard * replicate).toBe(layout.plan.dp);
  });
});

describe('what the frameworks cannot express', () => {
  it('per-replica-group microbatch counts (three regions) are an error in both', () => {
    const scenario = loadFixture('llama3-70b-three-regions');
    const layout = layOutPlan(scenario, readPlanFixture('llama3-70b-three-regions'));
    for (const result of [exportMegatron(scenario, layout), exportTorchtitan(scenario, layout)]) {
      expect(result.messages.filter((m) => m.severity === 'error').map((m) => m.message).join('\n')).toMatch(/different microbatch counts \(20 \/ 6 \/ 18\)/);
    }
  });

  it('ZB-H1 is an error in both; Megatron\'s first/last flags reproduce the two-building plan\'s stage totals', () => {
    const moe = loadFixture('deepseek-v3-moe-two-sites');
    const layout = layOutPlan(moe, readPlanFixture('deepseek-v3-moe-two-sites'));
    expect(exportMegatron(moe, layout).messages.some((m) => m.severity === 'error' && /ZB-H1/.test(m.message))).toBe(true);
    expect(exportTorchtitan(moe, layout).messages.some((m) => m.severity === 'error' && /zero-bubble/.test(m.message))).toBe(true);
    const scenario = loadFixture('llama3-405b-two-buildings');
    const twoBuildings = layOutPlan(scenario, readPlanFixture('llama3-405b-two-buildings'));
    const text = exportMegatron(scenario, twoBuildings).text;
    const first = Number(text.match(/--decoder-first-pipeline-num-layers (\d+)/)![1]);
    const last = Number(text.match(/--decoder-last-pipeline-num-layers (\d+)/)![1]);
    // Virtual chain of pp x v = 32: first, 30 equal middle chunks, last; stage 0 holds first + one middle chunk.
    const middle = (scenario.model.layers - first - last) / 30;
    expect(Number.isInteger(middle)).toBe(true);
    expect(first + middle).toBe(twoBuildings.stages[0]!.layers);
    expect(last + middle).toBe(twoBuildings.stages[15]!.layers);
  });

  it('torchtitan\'s first/last-less-layers split reproduces its documented example and uneven plans use them', () => {
    // generate_llm_fqn_per_model_part(2, 3, input_weight=2, output_weight=2): 7 effective layers over 2 stages -> 4 and 3, less 2 each.
    expect(torchtitanSplit(3, 2, 2, 2)).toEqual([2, 1]);
    const scenario = loadFixture('llama3-405b-two-buildings');
    const plan = { ...readPlanFixture('llama3-405b-two-buildings'), schedule: '1f1b', virtualStages: 1 };
    const result = exportTorchtitan(scenario, layOutPlan(scenario, plan));
    const firstLess = Number(result.text.match(/pipeline_parallel_first_stage_less_layers = (\d+)/)![1]);
    const lastLess = Number(result.text.match(/pipeline_parallel_last_stage_less_layers = (\d+)/)![1]);
    expect(torchtitanSplit(126, 16, firstLess, lastLess)).toEqual([7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7]);
  });
});

describe('Megatron-LM: the model\'s architecture', () => {
  // Each family's published config.json (fixtures/hf-configs) on one node of 8 H100s, one stage per GPU group.
  const argsOf = (config: string, plan: Record<string, unknown> = { tp: 1, pp: 1, dp: 8, microBatchSeqs: 1, zero: 1 }) => {
    const model = modelFromHfConfig(JSON.parse(fs.readFileSync(fixturePath(`hf-configs/${config}.json`), 'utf8')), config);
    const scenario = parseScenario({ version: 1, name: config, model, training: { seqLen: 4096, globalBatchSeqs: 64, precision: 'bf16' }, cluster: { sites: [{ name: 'a', gpuType: 'H100-SXM', gpus: 8, gpusPerNode: 8 }], links: [] } }, config);
    const result = exportMegatron(scenario, layOutPlan(scenario, plan));
    for (const flag of result.keys) expect(megatronFlags).toContain(flag);
    return { text: result.text, keys: result.keys, value: (flag: string) => result.text.match(new RegExp(`${flag} (\\S+)`))?.[1] };
  };

  it('Qwen3: SwiGLU, untied embeddings, head dim 128 with hidden 2048 (--kv-channels), GQA, grouped expert GEMMs; no dropout', () => {
    const { keys, value } = argsOf('Qwen3-30B-A3B', { tp: 1, pp: 1, ep: 8, dp: 8, microBatchSeqs: 1, zero: 1 });
    for (const flag of ['--swiglu', '--untie-embeddings-and-output-weights', '--group-query-attention', '--moe-grouped-gemm']) expect(keys).toContain(flag);
    expect(value('--kv-channels')).toBe('128');
    expect(value('--num-query-groups')).toBe('4');
    expect(value('--attention-dropout')).toBe('0');
    expect(value('--max-position-embeddings')).toBe('4096');
  });

  it('DeepSeek-V3: multi-head latent attention with its ranks and head dims, one MTP layer, group-limited routing', () => {
    const { keys, value } = argsOf('DeepSeek-V3', { tp: 1, pp: 1, ep: 8, dp: 8, microBatchSeqs: 1, zero: 1 });
    expect(keys).toContain('--multi-latent-attention');
    expect(keys).not.toContain('--kv-channels');
    expect([value('--q-lora-rank'), value('--kv-lora-rank'), value('--qk-head-dim'), value('--qk-pos-emb-head-dim'), value('--v-head-dim')]).toEqual(['1536', '512', '128', '64', '128']);
    expect(value('--mtp-num-layers')).toBe('1');
    expect([value('--moe-router-num-groups'), value('--moe-router-group-topk')]).toEqual(['8', '4']);
  });

  it('Nemotron-4: squared ReLU without gating; Llama 3 8B: no head-dim flag (4096 / 32 = 128 is the default)', () => {
    const nemotron = argsOf('Nemotron-4-340B', { tp: 8, pp: 1, dp: 1, microBatchSeqs: 1, zero: 1 });
    expect(nemotron.keys).toContain('--squared-relu');
    expect(nemotron.keys).not.toContain('--swiglu');
    expect(argsOf('Meta-Llama-3-8B').keys).not.toContain('--kv-channels');
  });

  it('gpt-oss: a 128-token window on every second layer', () => {
    const { value } = argsOf('gpt-oss-120b', { tp: 1, pp: 1, ep: 8, dp: 8, microBatchSeqs: 1, zero: 1 });
    expect(value('--window-size')).toBe('127,0');
    expect(value('--window-attn-skip-freq')).toBe('2');
  });
});

describe('plans that do not fit the scenario', () => {
  const scenario = loadFixture('small/one-site');
  const errors = (plan: Record<string, unknown>) => [exportMegatron, exportTorchtitan].map((exporter) =>
    exporter(scenario, layOutPlan(scenario, plan)).messages.filter((m) => m.severity === 'error').map((m) => m.message).join('\n'));

  it('more GPUs than the site has: an error in both, naming the site', () => {
    for (const text of errors({ tp: 4, pp: 1, dp: 8, microBatchSeqs: 1, schedule: '1f1b', recompute: 'none', zero: 1 })) {
      expect(text).toMatch(/does not fit the scenario: dc has 16 GPUs, the plan uses 32/);
    }
  });

  it('more memory than a GPU has: an error in both, naming the stage', () => {
    const heavy = loadFixture('infeasible/memory');
    const layout = layOutPlan(heavy, { tp: 8, pp: 2, dp: 1, microBatchSeqs: 1, recompute: 'full', zero: 1 });
    for (const result of [exportMegatron(heavy, layout), exportTorchtitan(heavy, layout)]) {
      expect(result.messages.some((m) => m.severity === 'error' && /does not fit the scenario: stage \d+ at .* needs [\d.]+ GiB per GPU/.test(m.message))).toBe(true);
    }
  });

  it('a fitting plan carries no such error', () => {
    for (const text of errors({ tp: 2, pp: 1, dp: 8, microBatchSeqs: 1, schedule: '1f1b', recompute: 'none', zero: 1 })) expect(text).not.toMatch(/does not fit/);
  });
});

describe('selective recomputation by module', () => {
  // The DeepSeek-V3 fixture with the calibration row's multi-latent attention, on the 1F1B schedule Megatron-LM runs.
  const spec = JSON.parse(fs.readFileSync(fixturePath('deepseek-v3-moe-two-sites.json'), 'utf8'));
  spec.model.attention = { kind: 'mla', qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 };
  const scenario = parseScenario(spec, 'deepseek-v3-mla');
  const planWith = (extra: object) => layOutPlan(scenario, { ...readPlanFixture('deepseek-v3-moe-two-sites'), schedule: '1f1b', recompute: 'selective', ...extra });

  it('Megatron-LM: --recompute-granularity selective --recompute-modules with each module a word; none without a list (Megatron\'s default is core_attn)', () => {
    const listed = exportMegatron(scenario, planWith({ recomputeModules: ['mla_up_proj', 'mlp'] }));
    expect(listed.text).toMatch(/--recompute-granularity selective \\\n  --recompute-modules mla_up_proj mlp( |$)/m);
    for (const flag of listed.keys) expect(megatronFlags).toContain(flag);
    // No error about the modules (the fixture's placement at 1F1B does not fit memory with MLA: fit errors aside).
    expect(listed.messages.filter((m) => m.severity === 'error' && !m.message.startsWith('the plan does not fit the scenario'))).toEqual([]);
    const defaulted = exportMegatron(scenario, planWith({}));
    expect(defaulted.text).toContain('--recompute-granularity selective');
    expect(defaulted.keys).not.toContain('--recompute-modules');
    // moe_act needs grouped expert GEMMs, passed for every MoE model.
    expect(exportMegatron(scenario, planWith({ recomputeModules: ['moe_act'] })).keys).toContain('--moe-grouped-gemm');
  });

  it('torchtitan refuses modules other than core_attn (its selective checkpointing is op-level), and takes core_attn alone as before', () => {
    const refused = exportTorchtitan(scenario, planWith({ recomputeModules: ['core_attn', 'mla_up_proj', 'moe_act'] }));
    expect(refused.messages.filter((m) => m.severity === 'error').map((m) => m.message).join('\n')).toMatch(/cannot recompute mla_up_proj, moe_act alone/);
    const attentionOnly = exportTorchtitan(scenario, planWith({ recomputeModules: ['core_attn'] }));
    expect(attentionOnly.messages.filter((m) => /recompute/.test(m.message) && m.severity === 'error')).toEqual([]);
    expect(attentionOnly.text).toContain('selective_ac_option = "op"');
  });
});

describe('scaleacross export', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-export-'));
  const scenario = fixturePath('llama3-405b-two-buildings.json');

  it('prints Megatron arguments and the rank map, exit 0; accepts plan --json output; exit 4 when unfaithful', async () => {
    const ok = await run('export', fixturePath('plans/llama3-405b-two-buildings.plan.json'), '--scenario', scenario, '--format', 'megatron');
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('--tensor-model-parallel-size 8');
    expect(ok.out).toMatch(/0-511\s+0-63\s+bldg-a/);
    const wrapped = path.join(tmp, 'plan-result.json');
    fs.writeFileSync(wrapped, JSON.stringify({ status: 'optimal', plan: readPlanFixture('llama3-405b-two-buildings') }));
    const fromResult = await run('export', wrapped, '--scenario', scenario, '--format', 'torchtitan', '--json');
    expect(fromResult.code).toBe(0);
    expect(JSON.parse(fromResult.out).keys).toContain('parallelism.pipeline_parallel_schedule');
    const unfaithful = await run('export', fixturePath('plans/llama3-70b-three-regions.plan.json'), '--scenario', fixturePath('llama3-70b-three-regions.json'), '--format', 'torchtitan');
    expect(unfaithful.code).toBe(4);
    expect(unfaithful.err).toMatch(/^error: replica groups run different microbatch counts/m);
  });

  it('bad input: one line naming the file and JSON path, exit 2', async () => {
    const bad = path.join(tmp, 'bad-plan.json');
    fs.writeFileSync(bad, JSON.stringify({ ...readPlanFixture('llama3-405b-two-buildings'), schedule: 'looped' }));
    const result = await run('export', bad, '--scenario', scenario, '--format', 'megatron');
    expect(result.code).toBe(2);
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.err).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: plan\\.schedule: `));
    expect(result.err).not.toMatch(/\n\s+at /);
  });
});
