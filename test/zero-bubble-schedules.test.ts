/**
 * The zero-bubble schedules torchtitan runs (ZBV, interleaved zero-bubble, DualPipeV): the closed
 * form (docs/cost-model.md eq. 5.5-5.7) against the op-by-op timeline, memory in flight against the op
 * order, ZBV's folded chain, plan validation, evaluation and export.
 */
import fc from 'fast-check';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../src/cli/run';
import { exportMegatron } from '../src/export/megatron';
import { exportTorchtitan } from '../src/export/torchtitan';
import { evaluateLayout } from '../src/model/evaluate';
import { microbatchesInFlight, stageMemory } from '../src/model/memory';
import { chainCrossings, fewestScheduleMicrobatches, pipelinePhaseS, scheduleMicrobatchProblem, zeroBubbleRoundSize } from '../src/model/pipeline';
import { simulateSchedule } from '../src/model/pipeline-timeline';
import { layOutPlan } from '../src/model/placement';
import type { Schedule } from '../src/model/plan-schema';
import { stageOfVirtualStage, virtualStageOf } from '../src/model/schedule-chain';
import { peakMicrobatchesHeld, stageOrder } from '../src/model/schedule-order';
import { ScenarioValidationError } from '../src/model/validation-error';
import { fixturePath, loadFixture, ROOT } from './helpers/fixtures';

const NEW_SCHEDULES = ['zbv', 'interleaved-zb', 'dualpipev'] as const;
const chunksOf = (schedule: Schedule): readonly number[] => (schedule === 'interleaved-zb' ? [2, 3, 4] : [2]);

/** Microbatch counts the schedule runs on p stages, from its fewest to 3p + 4. */
function countsFor(schedule: Schedule, p: number): number[] {
  const counts: number[] = [];
  for (let m = fewestScheduleMicrobatches(schedule, p); m <= 3 * p + 4; m++) if (scheduleMicrobatchProblem(schedule, m, p) === undefined) counts.push(m);
  return counts;
}

/** Simulated span and closed form (steady + bubble) for equal stages: per stage forward `share`, backward 1 - share. */
function spans(schedule: Schedule, p: number, v: number, m: number, share: number) {
  const f = new Array<number>(p).fill(share);
  const b = new Array<number>(p).fill(1 - share);
  const simulated = simulateSchedule({ schedule, virtualStages: v, microbatches: m, forwardS: f, backwardS: b, hops: [] }).spanS;
  const { steadyS, bubbleS } = pipelinePhaseS(new Array<number>(p).fill(1), f, m, { schedule, virtualStages: v });
  return { simulated, formula: steadyS + bubbleS, bubbleS };
}

describe('closed form against the op-by-op timeline, equal stages', () => {
  it.each(NEW_SCHEDULES)('%s: equal within 1e-9 for p 1-8, every v, every runnable m up to 3p + 4, forward share 0.2-1/3', (schedule) => {
    let compared = 0;
    for (let p = 1; p <= 8; p++) for (const v of chunksOf(schedule)) for (const m of countsFor(schedule, p)) for (const share of [0.2, 0.25, 0.3, 1 / 3]) {
      const { simulated, formula } = spans(schedule, p, v, m, share);
      expect({ p, v, m, share, error: Math.abs(formula / simulated - 1) < 1e-9 }).toEqual({ p, v, m, share, error: true });
      compared++;
    }
    expect(compared).toBeGreaterThan(300);
  });

  it('interleaved-zb (ZB-H1\'s fill/drain over v) and dualpipev at forward shares 0.1 and above 1/3 too: exactly', () => {
    for (const schedule of ['interleaved-zb', 'dualpipev'] as const) {
      for (let p = 2; p <= 8; p++) for (const v of schedule === 'dualpipev' ? [2] : [2, 3]) for (const m of countsFor(schedule, p)) for (const share of [0.1, 0.4, 0.5]) {
        const { simulated, formula } = spans(schedule, p, v, m, share);
        expect({ schedule, p, v, m, share, exact: Math.abs(formula / simulated - 1) < 1e-9 }).toEqual({ schedule, p, v, m, share, exact: true });
      }
    }
  });

  it('dualpipev on equal stages: max((p - 1)F, (p - 1)W - F)/2, the forward term at F >= W and the weight term once W - F/(p - 1) > F', () => {
    // Forward share 0.3 (F 0.3, W 0.35 of a step): the weight term takes over from p = 8.
    for (let p = 2; p <= 10; p++) {
      const expected = Math.max((p - 1) * 0.3, (p - 1) * 0.35 - 0.3) / 2;
      expect(spans('dualpipev', p, 2, 3 * p, 0.3).simulated - 3 * p).toBeCloseTo(expected, 9);
    }
    expect(spans('dualpipev', 7, 2, 21, 0.3).bubbleS).toBeCloseTo(6 * 0.3 / 2, 9);
    expect(spans('dualpipev', 8, 2, 24, 0.3).bubbleS).toBeCloseTo((7 * 0.35 - 0.3) / 2, 9);
  });

  it('zbv with a forward share above 1/3 (F > W): the closed form is above the timeline by exactly (F - W)/2', () => {
    for (let p = 2; p <= 8; p++) for (const m of countsFor('zbv', p)) for (const share of [0.36, 0.4, 0.45]) {
      const { simulated, formula } = spans('zbv', p, 2, m, share);
      const forwardS = share;
      const weightS = (1 - share) / 2;
      expect(formula - simulated).toBeCloseTo((forwardS - weightS) / 2, 9);
    }
  });

  it('the published shapes: at F = B = W, ZBV\'s bubble is half of ZB-H1\'s and interleaved-zb\'s is ZB-H1\'s over v (p 8, m 32)', () => {
    const zbh1 = spans('zb-h1', 8, 1, 32, 1 / 3).bubbleS;
    expect(zbh1).toBeCloseTo(7 / 3, 9); // (p - 1)(F + B - W) = (p - 1) S / 3 (Qi et al. 2024)
    expect(spans('zbv', 8, 2, 32, 1 / 3).bubbleS).toBeCloseTo(zbh1 / 2, 9);
    for (const v of [2, 4]) expect(spans('interleaved-zb', 8, v, 32, 1 / 3).bubbleS).toBeCloseTo(zbh1 / v, 9);
    // And the timeline agrees with each of them.
    expect(simulateSchedule({ schedule: 'zbv', virtualStages: 2, microbatches: 32, forwardS: new Array(8).fill(1 / 3), backwardS: new Array(8).fill(2 / 3), hops: [] }).spanS).toBeCloseTo(32 + 7 / 6, 9);
  });

  it('DualPipeV needs 2p microbatches (torch refuses fewer than its virtual stages)', () => {
    expect(scheduleMicrobatchProblem('dualpipev', 7, 4)).toMatch(/at least 2 x pp = 8/);
    expect(scheduleMicrobatchProblem('dualpipev', 8, 4)).toBeUndefined();
    expect(() => stageOrder('dualpipev', 0, 4, 2, 7)).toThrow(/at least 2p = 8/);
  });

  it('ZBV needs 2p - 1 microbatches, interleaved-zb p and rounds that divide m (torch refuses 10 on 4 stages: 2 rounds of 5 is fine, 11 is not)', () => {
    expect(scheduleMicrobatchProblem('zbv', 6, 4)).toMatch(/at least 2 x pp - 1 = 7/);
    expect(scheduleMicrobatchProblem('zbv', 7, 4)).toBeUndefined();
    expect(scheduleMicrobatchProblem('interleaved-zb', 3, 4)).toMatch(/at least pp = 4/);
    expect(zeroBubbleRoundSize(10, 4)).toBe(5);
    expect(scheduleMicrobatchProblem('interleaved-zb', 10, 4)).toBeUndefined();
    expect(scheduleMicrobatchProblem('interleaved-zb', 11, 4)).toMatch(/divisible by its max\(1, floor\(m \/ pp\)\) = 2 rounds/);
    expect(() => stageOrder('interleaved-zb', 0, 4, 2, 11)).toThrow(/rounds/);
  });
});

describe('closed form against the timeline, unequal stages (property)', () => {
  it('never optimistic: ends +-15%, +-5% jitter, two sites up to 1.7x apart, forward share 0.2-0.4', () => {
    fc.assert(fc.property(
      fc.constantFrom(...NEW_SCHEDULES), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 2, max: 4 }), fc.integer({ min: 0, max: 20 }),
      fc.double({ min: 0.2, max: 0.4, noNaN: true }), fc.integer({ min: 0, max: 2 }), fc.double({ min: 0.85, max: 1.15, noNaN: true }),
      fc.double({ min: 0.6, max: 1.7, noNaN: true }), fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 1, maxLength: 10 }),
      (schedule, p, chunks, extra, share, kind, a, c, jitter) => {
        const v = schedule === 'interleaved-zb' ? chunks : 2;
        let m = fewestScheduleMicrobatches(schedule, p) + extra;
        while (scheduleMicrobatchProblem(schedule, m, p) !== undefined) m++;
        const steps = Array.from({ length: p }, (_, j) => {
          if (kind === 0) return j === 0 ? a : j === p - 1 ? 2 - a : 1;
          if (kind === 1) return 1 + 0.05 * jitter[j % jitter.length]!;
          return j < Math.ceil(p / 2) ? 1 : c;
        });
        const f = steps.map((x) => x * share);
        const simulated = simulateSchedule({ schedule, virtualStages: v, microbatches: m, forwardS: f, backwardS: steps.map((x) => x * (1 - share)), hops: [] }).spanS;
        const { steadyS, bubbleS } = pipelinePhaseS(steps, f, m, { schedule, virtualStages: v });
        expect((steadyS + bubbleS) / simulated - 1).toBeGreaterThan(-1e-9);
      },
    ), { numRuns: 600, seed: 1717 });
  });
});

describe('memory in flight per stage', () => {
  it('zbv: p microbatches (2p chunk activations) on every stage, as 1F1B\'s first stage; interleaved-zb: ((v - 1)N + p) / v; dualpipev p + 1/2', () => {
    for (let p = 1; p <= 8; p++) {
      for (const m of countsFor('zbv', p)) {
        for (let j = 0; j < p; j++) {
          expect(microbatchesInFlight({ pp: p, virtualStages: 2, schedule: 'zbv' }, j, m)).toBe(p);
          expect(peakMicrobatchesHeld(stageOrder('zbv', j, p, 2, m), 2)).toBe(p);
        }
      }
      // DualPipeV: 2p + 1 chunk activations on every stage (DeepSeek-V3 Table 2's PP + 1 of its 2p stages).
      for (const m of countsFor('dualpipev', p)) {
        for (let j = 0; j < p; j++) {
          expect(microbatchesInFlight({ pp: p, virtualStages: 2, schedule: 'dualpipev' }, j, m)).toBe(p + 0.5);
          expect(peakMicrobatchesHeld(stageOrder('dualpipev', j, p, 2, m), 2)).toBe(p + 0.5);
        }
      }
      for (const v of [2, 3]) for (const m of countsFor('interleaved-zb', p)) {
        const n = zeroBubbleRoundSize(m, p)!;
        for (let j = 0; j < p; j++) {
          expect(microbatchesInFlight({ pp: p, virtualStages: v, schedule: 'interleaved-zb' }, j, m)).toBeCloseTo(Math.min(m, ((v - 1) * n + p) / v), 12);
          expect(peakMicrobatchesHeld(stageOrder('interleaved-zb', j, p, v, m), v)).toBeCloseTo(Math.min(m, ((v - 1) * n + p) / v), 12);
        }
      }
    }
  });
});

describe('ZBV\'s V: GPU j holds virtual stages j and 2p - 1 - j', () => {
  it('chain positions and crossings follow the V', () => {
    expect([0, 1, 2, 3].map((j) => [virtualStageOf('zbv', j, 0, 4), virtualStageOf('zbv', j, 1, 4)])).toEqual([[0, 7], [1, 6], [2, 5], [3, 4]]);
    for (let q = 0; q < 8; q++) {
      const { stage, chunk } = stageOfVirtualStage('zbv', q, 4);
      expect(virtualStageOf('zbv', stage, chunk, 4)).toBe(q);
    }
    // Stages 0-1 at site 0, 2-3 at site 1: the V crosses twice (1 -> 2 going out, 5 -> 6 coming back), the loop three times.
    expect(chainCrossings([0, 0, 1, 1], { schedule: 'zbv', virtualStages: 2 }).map((c) => c.virtualStage)).toEqual([1, 5]);
    expect(chainCrossings([0, 0, 1, 1], { schedule: 'interleaved', virtualStages: 2 }).map((c) => c.virtualStage)).toEqual([1, 3, 5]);
  });

  it('the output layer and loss are on stage 0, with their memory, and the torchtitan split lists the parts in V order', () => {
    const scenario = loadFixture('llama3-8b-one-site');
    const plan = { tp: 2, pp: 4, dp: 32, microBatchSeqs: 1, schedule: 'zbv', virtualStages: 2 };
    const zbv = layOutPlan(scenario, plan);
    expect(zbv.stages.map((s) => s.hasOutputLayer)).toEqual([true, false, false, false]);
    expect(zbv.stages.map((s) => s.hasEmbedding)).toEqual([true, false, false, false]);
    const looped = layOutPlan(scenario, { ...plan, schedule: 'interleaved-zb' });
    expect(looped.stages.map((s) => s.hasOutputLayer)).toEqual([false, false, false, true]);
    const m = zbv.groups[0]!.microbatches;
    const first = (layout: typeof zbv) => stageMemory(scenario, layout.plan, layout.stages[0]!, m);
    expect(first(zbv).embeddingOutputGiB).toBeGreaterThan(first(looped).embeddingOutputGiB);
    const parts = exportTorchtitan(scenario, zbv).text.match(/module_fqns_per_model_part = \[([\s\S]*?)\n\]/)![1]!.split('\n').filter((l) => l.includes('"'));
    expect(parts).toHaveLength(8);
    expect(parts[0]).toContain('"tok_embeddings", "layers.0"');
    expect(parts[7]).toContain('"layers.31", "norm", "output"');
  });
});

describe('plans with the new schedules', () => {
  const scenario = loadFixture('llama3-8b-one-site');
  const base = { tp: 2, pp: 4, dp: 32, microBatchSeqs: 1, virtualStages: 2 };

  it.each(NEW_SCHEDULES)('%s: evaluates and fits; the Megatron export refuses it, the torchtitan export names torch\'s schedule', (schedule) => {
    const layout = layOutPlan(scenario, { ...base, schedule });
    const result = evaluateLayout(scenario, layout);
    expect(result.violations).toEqual([]);
    expect(result.fits).toBe(true);
    const megatron = exportMegatron(scenario, layout);
    expect(megatron.messages.filter((msg) => msg.severity === 'error').map((msg) => msg.message).join('\n')).toMatch(/Megatron-LM (\(upstream\) )?has no .*(ZBV|interleaved zero-bubble|DualPipeV)/);
    const torchtitan = exportTorchtitan(scenario, layout);
    const name = { zbv: 'ZBVZeroBubble', 'interleaved-zb': 'InterleavedZeroBubble', dualpipev: 'DualPipeV' }[schedule];
    expect(torchtitan.text).toContain(`pipeline_parallel_schedule = "${name}"`);
    expect(torchtitan.messages.filter((msg) => msg.severity === 'error')).toEqual([]);
    const documented = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'torchtitan-keys.txt'), 'utf8');
    expect(documented).toContain(`schedule:${name}`);
  });

  it('ZBV beats ZB-H1 and interleaved-zb v 2 beats interleaved 1F1B v 2 on the same degrees (smaller bubble)', () => {
    const time = (schedule: string, virtualStages: number) => evaluateLayout(scenario, layOutPlan(scenario, { ...base, schedule, virtualStages })).predicted.iterationTimeS;
    expect(time('zbv', 2)).toBeLessThan(time('zb-h1', 1));
    expect(time('interleaved-zb', 2)).toBeLessThan(time('interleaved', 2));
  });

  it('too few microbatches is a violation naming the schedule\'s need', () => {
    // dp 128 on pp 4 leaves 4 microbatches per replica: ZBV needs 7.
    const result = evaluateLayout(scenario, layOutPlan(scenario, { ...base, dp: 128, tp: 1, schedule: 'zbv' }));
    expect(result.fits).toBe(false);
    expect(result.violations).toContain('the ZBV schedule needs at least 2 x pp - 1 = 7 microbatches per replica, a replica group runs 4');
  });

  it.each([
    ['zbv', 1, 'plan.virtualStages: the zbv schedule needs exactly 2 virtual stages (its V), got 1'],
    ['zbv', 4, 'plan.virtualStages: the zbv schedule needs exactly 2 virtual stages (its V), got 4'],
    ['interleaved-zb', 1, 'plan.virtualStages: the interleaved-zb schedule needs at least 2 virtual stages'],
    ['dualpipev', 3, 'plan.virtualStages: the dualpipev schedule needs exactly 2 virtual stages (its V), got 3'],
    ['zb-h1', 2, 'plan.virtualStages: 2 virtual stages need schedule \'interleaved\' or \'interleaved-zb\' (exactly 2: also \'zbv\', \'dualpipev\' or \'dualpipe\'; got \'zb-h1\')'],
  ])('%s with %i virtual stages is an input error naming plan.virtualStages', (schedule, virtualStages, message) => {
    let caught: unknown;
    try { layOutPlan(scenario, { ...base, schedule, virtualStages }); } catch (e) { caught = e; }
    expect(caught).toBeInstanceOf(ScenarioValidationError);
    expect((caught as Error).message).toBe(message);
  });
});

describe('scaleacross CLI', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-zb-'));
  const scenarioFile = fixturePath('llama3-8b-one-site.json');
  const planFile = (name: string, plan: object) => { const file = path.join(tmp, `${name}.json`); fs.writeFileSync(file, JSON.stringify(plan)); return file; };
  async function run(...argv: string[]) {
    let out = '';
    let err = '';
    const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
    return { code, out, err };
  }

  it('export --format megatron of a ZBV plan exits 4 with the reason; --format torchtitan exits 0', async () => {
    const file = planFile('zbv', { tp: 2, pp: 4, dp: 32, microBatchSeqs: 1, schedule: 'zbv', virtualStages: 2 });
    const megatron = await run('export', file, '--scenario', scenarioFile, '--format', 'megatron');
    expect(megatron.code).toBe(4);
    expect(megatron.err).toMatch(/^error: Megatron-LM has no V-shaped zero-bubble \(ZBV\) schedule/m);
    const torchtitan = await run('export', file, '--scenario', scenarioFile, '--format', 'torchtitan');
    expect(torchtitan.code).toBe(0);
    expect(torchtitan.out).toContain('pipeline_parallel_schedule = "ZBVZeroBubble"');
  });

  it('evaluate of a ZBV plan with 3 virtual stages: one line naming the path, exit 2', async () => {
    const file = planFile('zbv-v3', { tp: 2, pp: 4, dp: 32, microBatchSeqs: 1, schedule: 'zbv', virtualStages: 3 });
    const result = await run('evaluate', scenarioFile, '--plan', file);
    expect(result.code).toBe(2);
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.err).toContain('plan.virtualStages: the zbv schedule needs exactly 2 virtual stages (its V), got 3');
  });
});
