/**
 * training.fp8Recipe: validated against precision and the sites' GPUs, costed like every other
 * recipe (docs/cost-model.md §2), and written by each export as its framework spells it or
 * reported where the framework has no such recipe.
 */
import * as fs from 'fs';
import * as path from 'path';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import { evaluateLayout } from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { htmlReport } from '../src/report/html-report';
import { reportFromGivenPlan } from '../src/report/report-data';
import { ScenarioValidationError } from '../src/model/validation-error';
import { clone, readFixture, readPlanFixture, ROOT } from './helpers/fixtures';

type Json = any; // a scenario document being edited

const base = readFixture('llama3-8b-one-site') as Json;
const plan = readPlanFixture('llama3-8b-one-site');
const documented = (file: string): Set<string> => new Set(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', file), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));

function withRecipe(recipe: string | undefined, gpuType?: string): Json {
  const spec = clone(base);
  spec.training.precision = 'fp8';
  if (recipe === undefined) delete spec.training.fp8Recipe;
  else spec.training.fp8Recipe = recipe;
  if (gpuType) for (const site of spec.cluster.sites) site.gpuType = gpuType;
  return spec;
}

function issuesOf(spec: Json): { path: string; message: string }[] {
  try {
    parseScenario(spec);
    return [];
  } catch (error) {
    if (error instanceof ScenarioValidationError) return [...error.issues];
    throw error;
  }
}

describe('validation', () => {
  it('a recipe without fp8 precision names training.fp8Recipe', () => {
    const spec = clone(base);
    spec.training.precision = 'bf16';
    spec.training.fp8Recipe = 'tensorwise';
    expect(issuesOf(spec)).toEqual([{ path: 'training.fp8Recipe', message: 'tensorwise applies to precision fp8 only (training.precision is bf16)' }]);
  });

  it('mxfp8 needs GPUs with MX block scaling: refused on H100, accepted on B200 and on a custom GPU that declares it', () => {
    const h100 = issuesOf(withRecipe('mxfp8', 'H100-SXM'));
    expect(h100).toHaveLength(1);
    expect(h100[0]!.path).toBe('cluster.sites[0]');
    expect(h100[0]!.message).toContain('H100-SXM has no MX block-scaling tensor cores');
    expect(issuesOf(withRecipe('mxfp8', 'B200'))).toEqual([]);
    const custom = withRecipe('mxfp8');
    custom.cluster.sites[0].gpu = { name: 'next-gen', peakBf16Tflops: 2000, peakFp8Tflops: 4000, memoryGiB: 192, scaleUpGBps: 900, nicGbps: 800, mxfp8: true };
    delete custom.cluster.sites[0].gpuType;
    expect(issuesOf(custom)).toEqual([]);
    custom.cluster.sites[0].gpu.mxfp8 = false;
    expect(issuesOf(custom).map((i) => i.path)).toEqual(['cluster.sites[0]']);
  });

  it('an unknown recipe is a schema error at its path', () => {
    expect(issuesOf(withRecipe('nvfp4')).map((i) => i.path)).toEqual(['training.fp8Recipe']);
  });
});

describe('cost', () => {
  it('every recipe costs the same (the cast traffic of docs/cost-model.md §2), and fp8 is faster than bf16', () => {
    const times = [undefined, 'delayed', 'tensorwise', 'rowwise', 'blockwise', 'mxfp8'].map((recipe) => {
      const scenario = parseScenario(withRecipe(recipe, 'B200'));
      return evaluateLayout(scenario, layOutPlan(scenario, plan)).predicted.iterationTimeS;
    });
    for (const t of times) expect(t).toBe(times[0]);
    const bf16 = clone(base);
    for (const site of bf16.cluster.sites) site.gpuType = 'B200';
    const scenario = parseScenario(bf16);
    expect(evaluateLayout(scenario, layOutPlan(scenario, plan)).predicted.iterationTimeS).toBeGreaterThan(times[0]!);
  });
});

describe('exports', () => {
  const megatronFlags = documented('megatron-flags.txt');
  const torchtitanKeys = documented('torchtitan-keys.txt');
  const exportsOf = (recipe: string | undefined) => {
    const scenario = parseScenario(withRecipe(recipe, 'B200'));
    const layout = layOutPlan(scenario, plan);
    return { megatron: exportMegatron(scenario, layout), torchtitan: exportTorchtitan(scenario, layout) };
  };
  const errors = (messages: readonly { severity: string; message: string }[]) => messages.filter((m) => m.severity === 'error').map((m) => m.message);

  it.each([
    ['no recipe', undefined, '--fp8-format hybrid', 'converters = ["float8"]', undefined],
    ['delayed', 'delayed', '--fp8-format hybrid', undefined, 'torchtitan has no delayed fp8 scaling'],
    ['tensorwise', 'tensorwise', '--fp8-format hybrid --fp8-recipe tensorwise', '[float8]\nrecipe_name = "tensorwise"', undefined],
    ['rowwise', 'rowwise', undefined, '[float8]\nrecipe_name = "rowwise"', 'Megatron-LM has no rowwise fp8 recipe'],
    ['blockwise', 'blockwise', '--fp8-format e4m3 --fp8-recipe blockwise', undefined, 'torchtitan has no blockwise fp8 scaling'],
    ['mxfp8', 'mxfp8', '--fp8-format e4m3 --fp8-recipe mxfp8', 'converters = ["mx"]', undefined],
  ] as const)('%s: the Megatron-LM arguments, the torchtitan converter and recipe, or the error', (_label, recipe, megatronArgs, torchtitanText, error) => {
    const { megatron, torchtitan } = exportsOf(recipe);
    for (const flag of megatron.keys) expect(megatronFlags).toContain(flag);
    for (const key of torchtitan.keys) expect(torchtitanKeys).toContain(key);
    if (megatronArgs) expect(megatron.text.replace(/\s*\\\n\s*/g, ' ')).toContain(megatronArgs);
    if (torchtitanText) expect(torchtitan.text).toContain(torchtitanText);
    if (recipe === 'mxfp8') expect(torchtitan.text).toContain('[mx]\nrecipe_name = "mxfp8"');
    if (recipe === undefined || recipe === 'delayed' || recipe === 'rowwise') expect(megatron.text).not.toContain('--fp8-recipe');
    const all = [...errors(megatron.messages), ...errors(torchtitan.messages)];
    if (error) expect(all.some((m) => m.includes(error))).toBe(true);
    else expect(all.filter((m) => /fp8/.test(m))).toEqual([]);
  });

  it("Megatron-LM's refusal of moe_act and layernorm recomputation applies to delayed scaling only", () => {
    const withModules = (recipe: string) => {
      const scenario = parseScenario(withRecipe(recipe, 'B200'));
      const layout = layOutPlan(scenario, { ...plan, recompute: 'selective', recomputeModules: ['core_attn', 'layernorm'] });
      return errors(exportMegatron(scenario, layout).messages).filter((m) => m.includes('layernorm recomputation'));
    };
    expect(withModules('delayed')).toHaveLength(1);
    expect(withModules('delayed')[0]).toContain('set training.fp8Recipe to tensorwise, blockwise or mxfp8');
    expect(withModules('mxfp8')).toEqual([]);
  });
});

describe('report', () => {
  it("the scenario table names the recipe beside the precision", () => {
    const html = htmlReport(reportFromGivenPlan(parseScenario(withRecipe('mxfp8', 'B200')), plan, 'plan.json'));
    expect(html).toContain('<td>fp8 (mxfp8 scaling); fp32 gradients</td>');
    expect(htmlReport(reportFromGivenPlan(parseScenario(withRecipe(undefined, 'B200')), plan, 'plan.json'))).toMatch(/precision<\/th><td>fp8; fp32 gradients<\/td>/);
    // training.fp8ParamGather and training.gradientDtype are said beside it.
    const gathered = withRecipe('mxfp8', 'B200');
    const both = { ...gathered, training: { ...gathered.training, fp8ParamGather: true, gradientDtype: 'bf16' } };
    expect(htmlReport(reportFromGivenPlan(parseScenario(both), plan, 'plan.json'))).toContain('<td>fp8 (mxfp8 scaling); weights kept and gathered in fp8; bf16 gradients</td>');
  });
});
