/**
 * The bidirectional DualPipe (`dualpipe`) through evaluate, report's timeline and the exports: the
 * DeepSeek-V3 two-zone fixture's plan run as DualPipe (DeepSeek's own schedule for that model,
 * DeepSeek-V3 report §3.2.1), and the CLI round trip. Evaluate-only: the exports refuse it.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import { evaluateLayout } from '../src/model/evaluate';
import { groupTimeline } from '../src/model/pipeline-timeline';
import { layOutPlan } from '../src/model/placement';
import { fixturePath, loadFixture, readPlanFixture } from './helpers/fixtures';
import { run } from './helpers/run-cli';

const scenario = loadFixture('deepseek-v3-moe-two-sites');
const base = readPlanFixture('deepseek-v3-moe-two-sites');
const dualPlan = { ...base, schedule: 'dualpipe', virtualStages: 2 };

describe('the DeepSeek-V3 two-zone plan as DualPipe', () => {
  const layout = layOutPlan(scenario, dualPlan);
  const result = evaluateLayout(scenario, layout);

  it('evaluates and fits; each GPU holds its two stages of the fixture\'s split, both ends the embedding and the output layer', () => {
    expect(result.violations).toEqual([]);
    expect(result.fits).toBe(true);
    const split = (base['placement'] as { layersPerStage: number[] }).layersPerStage;
    expect(layout.stages.map((s) => s.chunkLayers)).toEqual(split.map((_, j) => [split[j], split[split.length - 1 - j]]));
    expect(layout.stages.filter((s) => s.hasEmbedding && s.hasOutputLayer).map((s) => s.index)).toEqual([0, 15]);
    const parts = Object.values(result.predicted.breakdown).reduce((sum, x) => sum + x, 0);
    expect(parts).toBeCloseTo(result.predicted.iterationTimeS, 9);
  });

  it('the phase is the larger of the closed form and the simulated span of both chains, which cross the zones once each', () => {
    const { pipeline, timeline } = groupTimeline(scenario, layout);
    expect(pipeline.hops.map((h) => h.virtualStage)).toEqual([7, 23]);
    expect(pipeline.phaseS).toBeCloseTo(Math.max(pipeline.closedFormS, timeline.spanS), 9);
    expect(new Set(timeline.sends.map((s) => s.hop))).toEqual(new Set([0, 1]));
    expect(timeline.ops.filter((op) => op.kind === 'forward')).toHaveLength(16 * 32);
  });

  it('the same work as ZB-H1 on the same degrees: hardware FLOPs per iteration agree, each GPU\'s stage step covers two stages', () => {
    const zb = evaluateLayout(scenario, layOutPlan(scenario, base));
    const flops = (r: typeof zb) => r.predicted.hardwareTflopsPerGpu * r.predicted.iterationTimeS;
    expect(flops(result) / flops(zb)).toBeCloseTo(1, 9);
    // Two copies of every stage: about twice the optimizer step.
    expect(result.predicted.breakdown.optimizerS / zb.predicted.breakdown.optimizerS).toBeGreaterThan(1.8);
  });

  it('the exports refuse it with the framework\'s reason', () => {
    const errors = (messages: readonly { severity: string; message: string }[]) => messages.filter((m) => m.severity === 'error').map((m) => m.message).join('\n');
    expect(errors(exportMegatron(scenario, layout).messages)).toMatch(/Megatron-LM \(upstream\) has no bidirectional DualPipe schedule/);
    expect(errors(exportTorchtitan(scenario, layout).messages)).toMatch(/torchtitan \(torch\.distributed\.pipelining\) has no bidirectional DualPipe schedule, only its one-copy half DualPipeV/);
  });
});

describe('scaleacross CLI with a dualpipe plan', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-dualpipe-'));
  const scenarioFile = fixturePath('deepseek-v3-moe-two-sites.json');
  const planFile = path.join(tmp, 'dualpipe.json');
  fs.writeFileSync(planFile, JSON.stringify(dualPlan));

  it('evaluate --json gives evaluateLayout\'s time; export exits 4 for both frameworks', async () => {
    const evaluated = await run('evaluate', scenarioFile, '--plan', planFile, '--json');
    expect(evaluated.code).toBe(0);
    const json = JSON.parse(evaluated.out) as { predicted: { iterationTimeS: number } };
    expect(json.predicted.iterationTimeS).toBeCloseTo(evaluateLayout(scenario, layOutPlan(scenario, dualPlan)).predicted.iterationTimeS, 9);
    for (const format of ['megatron', 'torchtitan']) {
      const exported = await run('export', planFile, '--scenario', scenarioFile, '--format', format);
      expect(exported.code).toBe(4);
      expect(exported.err).toMatch(/^error: .*has no bidirectional DualPipe schedule/m);
    }
  });
});
