/**
 * Framework-aware search (`plan --framework megatron|torchtitan`): the capability tables and the
 * exports agree entry by entry; a plan searched for a framework exports to it without an error
 * (the three multi-site fixtures, both frameworks, baselines included); the framework-free plan's
 * `frameworks` list is exactly the frameworks whose export accepts it.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../src/cli/run';
import { buildBundle } from '../src/export/bundle';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import type { FrameworkExport } from '../src/export/export-types';
import { FRAMEWORKS, capabilitiesOf, type Framework, type Support } from '../src/model/framework-capabilities';
import { frameworkFit, nodeAlignmentProblems } from '../src/model/framework-issues';
import { layOutPlan } from '../src/model/placement';
import { SCHEDULES, type PlanSpec } from '../src/model/plan-schema';
import type { Scenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { zero3GatherLowerBound } from '../src/formulation/closed-form-bounds';
import { FULL_SPACE, withFramework } from '../src/formulation/search-space';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { htmlReport } from '../src/report/html-report';
import { reportFromPlanResult } from '../src/report/report-data';
import { defaultBackends, plan } from '../src/solve/plan';
import type { PlanResult } from '../src/solve/plan-result';
import { clone, fixturePath, loadFixture, readFixture } from './helpers/fixtures';
import { parseScenario } from '../src/model/scenario';

const exportTo = (framework: Framework, scenario: Scenario, spec: PlanSpec): FrameworkExport =>
  (framework === 'megatron' ? exportMegatron : exportTorchtitan)(scenario, layOutPlan(scenario, spec));
// The frameworks' capability errors: a plan that does not fit its scenario (GPipe's all-microbatches memory here) is an error of its own (export/common.ts fitMessages), not a capability's.
const errorsOf = (result: FrameworkExport): string[] => result.messages.filter((m) => m.severity === 'error' && !m.message.startsWith('the plan does not fit the scenario')).map((m) => m.message);

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
  return { code, out, err };
}

describe('capability tables and exports agree', () => {
  const scenario = loadFixture('llama3-8b-one-site');
  // 32 layers on 4 stages of 8, 16 microbatches per replica: every schedule's chunks and rounds work.
  const base = { tp: 2, pp: 4, dp: 32, microBatchSeqs: 1, recompute: 'none', zero: 1 } as const;
  const chunks = (schedule: string) => (['interleaved', 'interleaved-zb', 'zbv', 'dualpipev', 'dualpipe'].includes(schedule) ? 2 : 1);
  const expectSupport = (result: FrameworkExport, support: Support) => {
    if (support.level === 'native') return;
    const severity = support.level === 'unsupported' ? 'error' : 'warning';
    expect(result.messages.filter((m) => m.severity === severity).map((m) => m.message)).toContain(support.why);
  };

  describe.each(FRAMEWORKS)('%s', (framework) => {
    const caps = capabilitiesOf(framework);
    it.each(SCHEDULES)('schedule %s: an export error exactly when the table says unsupported, a warning when approximated', (schedule) => {
      const result = exportTo(framework, scenario, { ...base, schedule, virtualStages: chunks(schedule) } as PlanSpec);
      expectSupport(result, caps.schedules[schedule]);
      expect(errorsOf(result).length > 0).toBe(caps.schedules[schedule].level === 'unsupported');
    });
    it.each([0, 1, 2, 3] as const)('ZeRO-%i with tp 2 and pp 4', (zero) => {
      const result = exportTo(framework, scenario, { ...base, zero, schedule: '1f1b', virtualStages: 1 } as PlanSpec);
      expectSupport(result, caps.zero[zero]);
      const unsupported = caps.zero[zero].level === 'unsupported' || (zero === 0 && caps.replicatedWithModelParallel.level === 'unsupported');
      expect(errorsOf(result).length > 0).toBe(unsupported);
    });
    it.each(['none', 'selective', 'full'] as const)('recompute %s', (recompute) => {
      const result = exportTo(framework, scenario, { ...base, recompute, schedule: '1f1b', virtualStages: 1 } as PlanSpec);
      expectSupport(result, caps.recompute[recompute]);
      expect(errorsOf(result).length > 0).toBe(caps.recompute[recompute].level === 'unsupported');
    });
  });

  it('torch\'s Interleaved1F1B rounds must divide the microbatches (9 on 4 stages: 2 rounds); Megatron-LM\'s groups need only m >= pp', () => {
    const spec = clone(readFixture('llama3-8b-one-site')) as { training: { globalBatchSeqs: number } };
    spec.training.globalBatchSeqs = 9 * 32;
    const nine = parseScenario(spec);
    const interleaved = { ...base, schedule: 'interleaved', virtualStages: 2 } as PlanSpec;
    expect(errorsOf(exportTo('torchtitan', nine, interleaved)).join('\n')).toMatch(/Interleaved1F1B runs max\(1, floor\(m \/ pp\)\) = 2 rounds, which must divide the microbatches; the plan has 9/);
    expect(errorsOf(exportTo('megatron', nine, interleaved))).toEqual([]);
    expect(errorsOf(exportTo('torchtitan', scenario, interleaved))).toEqual([]);
  });

  it('different microbatch counts per replica group are an error in both, as the tables say', () => {
    const moe = loadFixture('llama3-70b-three-regions');
    const spec = {
      tp: 8, pp: 1, dp: 512, microBatchSeqs: 1, schedule: '1f1b', recompute: 'none', zero: 1,
      placement: { replicaGroups: [
        { replicas: 128, microbatches: 2, stageSites: [{ site: 'east', stages: 1 }] },
        { replicas: 256, microbatches: 1, stageSites: [{ site: 'central', stages: 1 }] },
        { replicas: 128, microbatches: 4, stageSites: [{ site: 'west', stages: 1 }] },
      ] },
    } as unknown as PlanSpec;
    for (const framework of FRAMEWORKS) {
      expect(capabilitiesOf(framework).perGroupMicrobatches.level).toBe('unsupported');
      expect(errorsOf(exportTo(framework, moe, spec)).join('\n')).toMatch(/different microbatch counts \(2 \/ 1 \/ 4\)/);
    }
  });
});

const MULTI_SITE = ['llama3-405b-two-buildings', 'llama3-70b-three-regions', 'deepseek-v3-moe-two-sites'] as const;

describe('plan --framework: the plan and its baselines export without an error', () => {
  const backends = defaultBackends();
  const results = new Map<string, PlanResult>();
  afterAll(async () => { await Promise.all(backends.map((b) => b.close())); });

  describe.each(MULTI_SITE)('%s', (name) => {
    const scenario = loadFixture(name);
    it.each(FRAMEWORKS)('%s', async (framework) => {
      const result = await plan(scenario, { framework, timeLimitS: 4, backends });
      results.set(`${name}/${framework}`, result);
      expect(result.framework).toBe(framework);
      expect(result.plan).toBeDefined();
      const exported = exportTo(framework, scenario, result.plan!);
      expect(errorsOf(exported)).toEqual([]);
      expect(result.frameworks).toContain(framework);
      // Every replica runs the same number of microbatches (the framework splits the batch evenly).
      expect(new Set(result.plan!.placement!.replicaGroups.map((g) => g.microbatches)).size).toBe(1);
      // The bound is a bound on the plan it reports, and the baselines lie in the same space.
      expect(result.bound.lowerBoundS).toBeLessThanOrEqual(result.evaluation!.predicted.iterationTimeS);
      for (const baseline of result.baselines) {
        if (baseline.plan) expect(errorsOf(exportTo(framework, scenario, baseline.plan))).toEqual([]);
      }
      // The launch bundle of that plan: ranks.csv holds exactly the GPUs the plan uses at each site.
      const layout = layOutPlan(scenario, result.plan!);
      const bundle = buildBundle(scenario, layout, exported, 'plan.json');
      if (!bundle.ok) throw new Error(`no bundle: ${bundle.errors.join('; ')}`);
      const rows = bundle.files.find((f) => f.path === 'ranks.csv')!.content.trim().split('\n').slice(1);
      const ranksPerSite = new Map<string, number>();
      for (const row of rows) { const site = row.split(',')[1]!; ranksPerSite.set(site, (ranksPerSite.get(site) ?? 0) + 1); }
      const usedPerSite = new Map<string, number>();
      const gpusPerStage = result.plan!.tp * (result.plan!.cp ?? 1);
      for (const group of result.plan!.placement!.replicaGroups) {
        for (const run of group.stageSites) usedPerSite.set(run.site, (usedPerSite.get(run.site) ?? 0) + group.replicas * run.stages * gpusPerStage);
      }
      expect(Object.fromEntries(ranksPerSite)).toEqual(Object.fromEntries(usedPerSite));
      expect(rows.map((r) => Number(r.split(',')[0]))).toEqual(rows.map((_, i) => i));
    }, 60_000);
  });

  it('Megatron-LM\'s space lies inside the framework-free space: its plan is no faster than the free bound', async () => {
    const scenario = loadFixture('llama3-405b-two-buildings');
    const free = await plan(scenario, { timeLimitS: 4, backends, baselines: false });
    const megatron = results.get('llama3-405b-two-buildings/megatron') ?? await plan(scenario, { framework: 'megatron', timeLimitS: 4, backends });
    expect(free.plan).toBeDefined();
    expect(megatron.evaluation!.predicted.iterationTimeS).toBeGreaterThanOrEqual(free.bound.lowerBoundS * (1 - 1e-9));
    // The free plan states which frameworks run it, and each export agrees.
    expectFrameworksAgreeWithExports(scenario, free);
  }, 60_000);

  it('the report says which framework the plan is for and which run it', () => {
    const result = results.get('llama3-70b-three-regions/megatron')!;
    const html = htmlReport(reportFromPlanResult(loadFixture('llama3-70b-three-regions'), result));
    expect(html).toMatch(/<tr id="plan-framework"><th>framework<\/th><td>planned for Megatron-LM: searched only what it runs as planned<\/td><\/tr>/);
    expect(html).toMatch(/<tr id="plan-frameworks"><th>frameworks<\/th><td>runs as is in Megatron-LM/);
    expect(html).toContain('on every plan in Megatron-LM&#39;s search space');
  });

  it('every plan\'s frameworks list is exactly the frameworks whose export has no error', () => {
    expect(results.size).toBe(MULTI_SITE.length * FRAMEWORKS.length);
    for (const [key, result] of results) expectFrameworksAgreeWithExports(loadFixture(key.split('/')[0]!), result);
  });
});

function expectFrameworksAgreeWithExports(scenario: Scenario, result: PlanResult): void {
  expect(result.frameworks).toBeDefined();
  for (const framework of FRAMEWORKS) {
    const errors = errorsOf(exportTo(framework, scenario, result.plan!));
    expect(result.frameworks!.includes(framework)).toBe(errors.length === 0);
    expect(result.frameworkGaps?.[framework] ?? []).toEqual(errors);
  }
}

describe('framework-free plans name the frameworks that run them', () => {
  it.each(MULTI_SITE)('%s: the checked-in plan\'s fit matches both exports', (name) => {
    const scenario = loadFixture(name);
    const spec = readFixture(`plans/${name}.plan`) as PlanSpec;
    const fit = frameworkFit(scenario, layOutPlan(scenario, spec));
    for (const framework of FRAMEWORKS) {
      const errors = errorsOf(exportTo(framework, scenario, spec));
      expect(fit.runnable.includes(framework)).toBe(errors.length === 0);
      expect(fit.missing[framework] ?? []).toEqual(errors);
    }
  });
});

describe('a framework\'s bound is a bound over its space: plan against the exhaustive enumeration of the same space', () => {
  const backends = defaultBackends();
  afterAll(async () => { await Promise.all(backends.map((b) => b.close())); });
  it.each([
    ['small/two-sites', 'megatron'], ['small/moe-two-sites', 'megatron'],
    ['small/two-sites', 'torchtitan'], ['small/moe-two-sites', 'torchtitan'],
  ] as const)('%s, %s', async (name, framework) => {
    const spec = clone(readFixture(name)) as { search?: Record<string, unknown> };
    // These fixtures search ZeRO-1 only, which torchtitan does not run: its FSDP2 instead.
    spec.search = { ...spec.search, framework, ...(framework === 'torchtitan' ? { zero: [3] } : {}) };
    const scenario = parseScenario(spec);
    const reference = exhaustiveSearch(scenario, withFramework(FULL_SPACE, framework));
    expect(reference.complete).toBe(true);
    const result = await plan(scenario, { timeLimitS: 5, backends });
    expect(result.framework).toBe(framework);
    if (!reference.plan) { expect(result.plan).toBeUndefined(); return; }
    expect(errorsOf(exportTo(framework, scenario, reference.plan))).toEqual([]);
    const optimumS = reference.evaluation!.predicted.iterationTimeS;
    const timeS = result.evaluation!.predicted.iterationTimeS;
    expect(timeS).toBeGreaterThanOrEqual(optimumS * (1 - 1e-9));
    expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimumS * (1 + 1e-9));
    if (result.status === 'optimal') expect(timeS).toBeLessThanOrEqual(optimumS * (1 + 0.01) + 1e-12);
  }, 120_000);
});

describe('ZeRO-3\'s per-microbatch gather floor', () => {
  it.each(['small/two-sites', 'small/moe-two-sites', 'llama3-8b-one-site'])('%s: at most every candidate\'s least time, enumerated plan by plan', (name) => {
    const spec = clone(readFixture(name)) as { search?: Record<string, unknown> };
    spec.search = { ...spec.search, framework: 'torchtitan', zero: [3], pp: [1, 2], microBatchSeqs: [1] };
    const scenario = parseScenario(spec);
    let positive = 0;
    let compared = 0;
    exhaustiveSearch(scenario, withFramework(FULL_SPACE, 'torchtitan'), 60, (candidate, leastTimeS) => {
      const floorS = zero3GatherLowerBound(candidate.coefficients());
      if (floorS > 0) positive++;
      if (!Number.isFinite(leastTimeS)) return;
      compared++;
      expect(floorS).toBeLessThanOrEqual(leastTimeS * (1 + 1e-9));
    });
    expect(compared).toBeGreaterThan(0);
    expect(positive).toBeGreaterThan(0);
  }, 120_000);
});

describe('search.framework in the scenario', () => {
  it('a search list with nothing the framework runs is an input error at its path', () => {
    const spec = clone(readFixture('llama3-405b-two-buildings')) as Record<string, unknown>;
    spec['search'] = { schedules: ['zb-h1'], framework: 'torchtitan' };
    let caught: unknown;
    try { parseScenario(spec, 'two.json'); } catch (error) { caught = error; }
    expect(caught).toBeInstanceOf(ScenarioValidationError);
    expect((caught as Error).message).toMatch(/^two\.json: search\.schedules: torchtitan runs none of zb-h1 as planned \(it runs gpipe, 1f1b, interleaved, interleaved-zb, zbv, dualpipev\)/);
    spec['search'] = { schedules: ['zb-h1', '1f1b'], framework: 'megatron' };
    expect(parseScenario(spec).search?.framework).toBe('megatron');
    spec['search'] = { framework: 'deepspeed' };
    expect(() => parseScenario(spec, 'two.json')).toThrow(/^two\.json: search\.framework: /);
  });

  it('the CLI: --framework overrides the spec, the text says which framework; a bad value exits 2 with one line', async () => {
    const megatron = await run('plan', fixturePath('llama3-70b-three-regions.json'), '--framework', 'megatron', '--time-limit', '3', '--quiet');
    expect(megatron.code).toBe(0);
    expect(megatron.out).toMatch(/^Planned for Megatron-LM \(searched only what it runs as planned\)\. Runs as is in: Megatron-LM/m);
    expect(megatron.out).toMatch(/Bound: every plan in Megatron-LM's search space takes at least/);
    expect(megatron.out).not.toMatch(/undefined/);
    const free = await run('plan', fixturePath('llama3-405b-two-buildings.json'), '--json', '--time-limit', '3', '--quiet');
    const json = JSON.parse(free.out) as { framework: unknown; frameworks: string[]; frameworkGaps: Record<string, string[]> };
    expect(json.framework).toBeNull();
    expect(Object.keys(json.frameworkGaps).sort()).toEqual(FRAMEWORKS.filter((f) => !json.frameworks.includes(f)).sort());
    const text = await run('plan', fixturePath('llama3-405b-two-buildings.json'), '--time-limit', '3', '--quiet');
    // One line: the frameworks that run it as is, then what each other one lacks.
    const line = text.out.split('\n').find((l) => l.startsWith('Runs as is in: '));
    expect(line).toBeDefined();
    // Each framework is named: as one that runs it, one that runs it with differences, or one that lacks something.
    for (const framework of FRAMEWORKS) expect(line).toContain(capabilitiesOf(framework).label);
    expect(line).not.toMatch(/undefined|: ;|: $/);
    // Each framework that cannot run it as planned is offered as a --framework value to plan for.
    const missing = FRAMEWORKS.filter((f) => !json.frameworks.includes(f));
    if (missing.length > 0) expect(line).toContain(`plan --framework ${missing.join('|')}`);
    else expect(line).not.toContain('plan --framework');
    // plan --framework torchtitan --json, then export --format torchtitan: exit 0, no error line.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'framework-'));
    const planned = await run('plan', fixturePath('llama3-405b-two-buildings.json'), '--framework', 'torchtitan', '--json', '--time-limit', '3', '--quiet');
    expect(planned.code).toBe(0);
    expect(JSON.parse(planned.out).framework).toBe('torchtitan');
    fs.writeFileSync(path.join(dir, 'plan.json'), planned.out);
    const exported = await run('export', path.join(dir, 'plan.json'), '--scenario', fixturePath('llama3-405b-two-buildings.json'), '--format', 'torchtitan');
    expect(exported.code).toBe(0);
    expect(exported.err).not.toMatch(/^error:/m);
    fs.rmSync(dir, { recursive: true, force: true });
    const bad = await run('plan', fixturePath('llama3-405b-two-buildings.json'), '--framework', 'deepspeed');
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toMatch(/Argument: framework, Given: "deepspeed", Choices: "megatron", "torchtitan"/);
  }, 60_000);
});

describe('ranks of two sites on one node', () => {
  it('one problem naming the first two runs and how many more, whatever the replica count', () => {
    const scenarioOf = (gpusPerSite: number) => parseScenario({
      version: 1, name: 'split-nodes',
      model: { name: 'm', layers: 8, hidden: 1024, ffnHidden: 4096, heads: 8, vocab: 32000, mlp: 'gelu' },
      training: { seqLen: 1024, globalBatchSeqs: 64, precision: 'bf16' },
      cluster: {
        sites: [{ name: 'east', gpuType: 'A100-80GB', gpus: gpusPerSite, gpusPerNode: 8 }, { name: 'west', gpuType: 'A100-80GB', gpus: gpusPerSite, gpusPerNode: 8 }],
        links: [{ between: ['east', 'west'], bandwidthGbps: 100, rttMs: 10 }],
      },
    });
    // pp 2 x dp 8, half the replicas at each site: Megatron's order puts stage 0's replicas 0-3 (east) and 4-7 (west) on node 0.
    const planOf = (replicasPerSite: number) => ({
      tp: 1, pp: 2, dp: 2 * replicasPerSite, microBatchSeqs: 1, schedule: '1f1b', recompute: 'none', zero: 0,
      placement: { replicaGroups: ['east', 'west'].map((site) => ({ replicas: replicasPerSite, microbatches: 64 / (2 * replicasPerSite), stageSites: [{ site, stages: 2 }] })) },
    });
    const split = nodeAlignmentProblems(scenarioOf(8), layOutPlan(scenarioOf(8), planOf(4)));
    expect(split).toEqual(['ranks 0-3 (east, 8-GPU nodes), ranks 4-7 (west, 8-GPU nodes) and 2 more runs of ranks do not each fill whole nodes, so a node would hold ranks of two sites']);
    // Three runs (pp 1, replica groups east 3, west 2, east 3): ranks 0-2, 3-4 and 5-7 share node 0, '1 more run'.
    const three = nodeAlignmentProblems(scenarioOf(8), layOutPlan(scenarioOf(8), {
      ...planOf(4), pp: 1,
      placement: { replicaGroups: [['east', 3], ['west', 2], ['east', 3]].map(([site, replicas]) => ({ replicas, microbatches: 8, stageSites: [{ site, stages: 1 }] })) },
    }));
    expect(three).toEqual(['ranks 0-2 (east, 8-GPU nodes), ranks 3-4 (west, 8-GPU nodes) and 1 more run of ranks do not each fill whole nodes, so a node would hold ranks of two sites']);
    // Eight replicas per site fill whole nodes: no problem.
    expect(nodeAlignmentProblems(scenarioOf(16), layOutPlan(scenarioOf(16), planOf(8)))).toEqual([]);
  });
});
