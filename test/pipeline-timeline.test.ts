/** The op-by-op pipeline simulation against the cost model's closed form and the independent simulator. */
import fc from 'fast-check';
import { groupPipelines } from '../src/model/critical-group';
import { evaluate } from '../src/model/evaluate';
import { fewestScheduleMicrobatches, interleavedGroupSize, pipelinePhaseS, pipelineWithHopsS, scheduleMicrobatchProblem, type PipelineHop } from '../src/model/pipeline';
import { chainMicrobatches, isBidirectional, isChunked, isVShaped, splitsBackward, stageOfVirtualStage } from '../src/model/schedule-chain';
import { groupTimeline, simulateSchedule } from '../src/model/pipeline-timeline';
import { layOutPlan } from '../src/model/placement';
import { planSchema, SCHEDULES, type Schedule } from '../src/model/plan-schema';
import { clone, loadFixture, readPlanFixture } from './helpers/fixtures';
import { simulatePipeline } from './helpers/pipeline-simulator';

/** The closed form (eq. 5.4) and the simulated span for one replica; stage j's step is f_j + b_j. */
function bothSpans(schedule: Schedule, v: number, m: number, f: readonly number[], b: readonly number[], hops: readonly (PipelineHop & { virtualStage: number })[] = []) {
  const simulated = simulateSchedule({ schedule, virtualStages: v, microbatches: m, forwardS: f, backwardS: b, hops }).spanS;
  const formula = pipelineWithHopsS(f.map((x, j) => x + b[j]!), f, m, { schedule, virtualStages: v }, hops).phaseS;
  return { simulated, formula, error: formula / simulated - 1 };
}

/** The first count from `m` up that the schedule runs on p stages (scheduleMicrobatchProblem). */
const runnable = (schedule: Schedule, p: number, m: number): number => {
  let k = Math.max(m, fewestScheduleMicrobatches(schedule, p));
  while (scheduleMicrobatchProblem(schedule, k, p) !== undefined) k++;
  return k;
};

/** A random schedule with a valid (p, v, m): the interleaved ones need m >= p, ZBV m >= 2p - 1 and v = 2. */
const scheduleCase = fc.record({
  schedule: fc.constantFrom(...SCHEDULES),
  p: fc.integer({ min: 1, max: 12 }),
  v: fc.integer({ min: 2, max: 4 }),
  extra: fc.integer({ min: 0, max: 30 }),
  forwardShare: fc.double({ min: 0.2, max: 0.4, noNaN: true }),
}).map(({ schedule, p, v, extra, forwardShare }) => {
  // DualPipe: an even number of stages.
  const stages = isBidirectional(schedule) ? 2 * Math.ceil(p / 2) : isChunked(schedule) && !isVShaped(schedule) ? Math.max(2, p) : p;
  return {
    schedule,
    p: stages,
    v: isVShaped(schedule) || isBidirectional(schedule) ? 2 : isChunked(schedule) ? v : 1,
    m: runnable(schedule, stages, (isChunked(schedule) && !isVShaped(schedule) ? stages : 1) + extra),
    forwardShare,
  };
});

/**
 * Where the closed form is above the simulation on equal stages: only ZBV with a forward share
 * above 1/3 (F > W), by (F - W)/2 (eq. 5.6), and never with one stage.
 */
const equalStageExcessS = (schedule: Schedule, p: number, forwardS: number, backwardS: number): number =>
  (schedule === 'zbv' && p > 1 ? Math.max(0, (forwardS - backwardS / 2) / 2) : 0);

describe('simulated schedules', () => {
  it.each(SCHEDULES)('%s, equal stages: the span is the closed form exactly (m a multiple of p)', (schedule) => {
    for (const [p, count] of [[4, 8], [8, 32], [16, 16]] as const) {
      const v = isChunked(schedule) ? 2 : 1;
      const m = runnable(schedule, p, count);
      const f = Array.from({ length: p }, () => 1);
      const b = Array.from({ length: p }, () => 2);
      const timeline = simulateSchedule({ schedule, virtualStages: v, microbatches: m, forwardS: f, backwardS: b, hops: [] });
      const plan = planSchema.parse({ tp: 1, pp: p, dp: 1, microBatchSeqs: 1, schedule, virtualStages: v });
      const { steadyS, bubbleS } = pipelinePhaseS(f.map((x, i) => x + b[i]!), f, m, plan);
      expect(timeline.spanS).toBeCloseTo(steadyS + bubbleS, 9);
      expect(timeline.ops).toHaveLength(p * v * chainMicrobatches(schedule, m) * (splitsBackward(schedule) ? 3 : 2));
    }
  });

  it('1F1B and GPipe agree with the independent simulator on unequal stages', () => {
    const f = [0.85, 1, 1.03, 1.06, 1, 0.87];
    const b = f.map((x) => 2 * x);
    for (const schedule of ['1f1b', 'gpipe'] as const) {
      expect(simulateSchedule({ schedule, virtualStages: 1, microbatches: 12, forwardS: f, backwardS: b, hops: [] }).spanS).toBeCloseTo(simulatePipeline(f, b, 12, schedule), 9);
    }
  });

  it('ZB-H1 defers stage j\'s weight-gradient passes by j microbatches: p held on every stage (Qi et al. 2024, §2.1)', () => {
    const p = 4;
    const timeline = simulateSchedule({ schedule: 'zb-h1', virtualStages: 1, microbatches: 8, forwardS: new Array(p).fill(1), backwardS: new Array(p).fill(2), hops: [] });
    for (let j = 0; j < p; j++) {
      const ops = timeline.ops.filter((op) => op.stage === j).sort((x, y) => x.startS - y.startS);
      const firstWeight = ops.findIndex((op) => op.kind === 'weight');
      const backwardsBefore = ops.slice(0, firstWeight).filter((op) => op.kind === 'backward').length;
      expect(backwardsBefore).toBe(j + 1);
    }
  });

  it('interleaving: Megatron-LM\'s microbatch group size N (>= p, last group empty or >= p)', () => {
    expect(interleavedGroupSize(8, 4)).toBe(4);
    expect(interleavedGroupSize(6, 4)).toBe(6);
    expect(interleavedGroupSize(10, 4)).toBe(5);
    expect(interleavedGroupSize(18, 4)).toBe(6);
    expect(interleavedGroupSize(3, 4)).toBeUndefined();
    const timeline = simulateSchedule({ schedule: 'interleaved', virtualStages: 4, microbatches: 12, forwardS: new Array(8).fill(1), backwardS: new Array(8).fill(2), hops: [] });
    expect(timeline.ops).toHaveLength(8 * 4 * 12 * 2);
    expect(() => simulateSchedule({ schedule: 'interleaved', virtualStages: 2, microbatches: 3, forwardS: new Array(4).fill(1), backwardS: new Array(4).fill(2), hops: [] })).toThrow(/at least p = 4/);
  });
});

describe('closed form against the simulation (property tests)', () => {
  it('equal stages, no crossings: equal for every schedule, p, v and m (m a multiple of p or not, m < p where the schedule runs)', () => {
    fc.assert(fc.property(scheduleCase, fc.double({ min: 0.05, max: 2, noNaN: true }), ({ schedule, p, v, m, forwardShare }, step) => {
      const f = new Array<number>(p).fill(step * forwardShare);
      const b = new Array<number>(p).fill(step * (1 - forwardShare));
      const { simulated, formula } = bothSpans(schedule, v, m, f, b);
      const excess = equalStageExcessS(schedule, p, f[0]!, b[0]!);
      expect(Math.abs((formula - excess) / simulated - 1)).toBeLessThan(1e-9);
    }), { numRuns: 300 });
  });

  it('uneven stages (lighter or heavier ends, +-5% jitter, two sites up to 2x apart): the closed form is never optimistic (DualPipe and DualPipeV: by at most 0.5%)', () => {
    const stageTimes = (p: number, kind: number, a: number, c: number, cut: number, jitter: readonly number[]) => Array.from({ length: p }, (_, j) => {
      if (kind === 0) return j === 0 ? a : j === p - 1 ? c : 1;
      if (kind === 1) return 1 + 0.05 * jitter[j % jitter.length]!;
      return j < Math.max(1, Math.min(p - 1, cut)) ? 1 : a * c;
    });
    fc.assert(fc.property(
      scheduleCase, fc.integer({ min: 0, max: 2 }), fc.double({ min: 0.85, max: 1.15, noNaN: true }), fc.double({ min: 0.6, max: 1.7, noNaN: true }),
      fc.integer({ min: 1, max: 11 }), fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 1, maxLength: 12 }),
      ({ schedule, p, v, m, forwardShare }, kind, a, c, cut, jitter) => {
        const steps = stageTimes(p, kind, a, kind === 0 ? Math.min(1.15, Math.max(0.85, c)) : c, cut, jitter);
        const { error } = bothSpans(schedule, v, m, steps.map((s) => s * forwardShare), steps.map((s) => s * (1 - forwardShare)));
        // Float rounding only (the worst of 40,000 random cases: -1.0e-14), but for the two
        // bidirectional-order schedules: on two tiers of stages (the heavier first) with a forward
        // share near 0.25-0.3 DualPipeV's closed form comes out up to 0.23% below the span and
        // DualPipe's (DualPipeV's order on pp/2 stage pairs) up to 0.25% (worst of 50,000 random
        // cases each: DualPipeV p 9, m 18; DualPipe p 10, m 20); the reported phase is the larger
        // of the two, so it is the span there (docs/cost-model.md §5).
        expect(error).toBeGreaterThan(schedule === 'dualpipev' || schedule === 'dualpipe' ? -5e-3 : -1e-7);
      },
    ), { numRuns: 300 });
  });

  // Not within 2%: the steady state stretches when a crossing's round trip outlasts the microbatches in
  // flight after it (optimistic: the worst cases of a grid over this domain, p 1-12, v 2-4, m up to 32,
  // forward share 0.2-0.4, latency and step 0 or 3%, are interleaved zero-bubble -6.83% at p 2, v 4,
  // m 32, forward share 0.4, latency and step 3%, and 1F1B -5.31% at p 2, m 31; docs/cost-model.md §5),
  // and interleaved fill/drain pays the chunk wraps' crossings fewer times than eq. 5.4 counts at
  // small p and m (pessimistic, up to +19.2%).
  it('cross-site crossings with latency and link step up to 3% of a stage step: from 7% optimistic to 20% pessimistic', () => {
    fc.assert(fc.property(
      scheduleCase, fc.integer({ min: 1, max: 11 }), fc.double({ min: 0, max: 0.03, noNaN: true }), fc.double({ min: 0, max: 0.03, noNaN: true }),
      ({ schedule, p, v, m, forwardShare }, cut, latencyS, stepS) => {
        const site = (j: number) => (j < Math.min(p - 1, cut) ? 0 : 1);
        const hops: (PipelineHop & { virtualStage: number })[] = [];
        const stageOf = (q: number) => stageOfVirtualStage(schedule, q, p).stage;
        for (let q = 0; q + 1 < p * v; q++) if (site(stageOf(q)) !== site(stageOf(q + 1))) hops.push({ virtualStage: q, latencyS, stepS });
        const { error } = bothSpans(schedule, v, m, new Array<number>(p).fill(forwardShare), new Array<number>(p).fill(1 - forwardShare), hops);
        expect(error).toBeGreaterThan(-0.07);
        expect(error).toBeLessThan(0.2);
      },
    ), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 300) });
  });
});

describe('fixture timelines match the cost model\'s pipeline phase', () => {
  it.each([
    ['llama3-405b-two-buildings', 'llama3-405b-two-buildings'],
    ['llama3-405b-two-buildings', 'llama3-405b-pp-across-no-recompute'],
    ['llama3-70b-three-regions', 'llama3-70b-three-regions'],
    ['deepseek-v3-moe-two-sites', 'deepseek-v3-moe-two-sites'],
    ['llama3-8b-one-site', 'llama3-8b-one-site'],
  ])('%s / %s: every group within 2%', (scenarioName, planName) => {
    const scenario = loadFixture(scenarioName);
    const layout = layOutPlan(scenario, readPlanFixture(planName));
    const { pipelines, criticalGroup } = groupPipelines(scenario, layout);
    expect(groupTimeline(scenario, layout).pipeline).toEqual(pipelines[criticalGroup]);
    pipelines.forEach((pipeline, g) => {
      const { timeline } = groupTimeline(scenario, layout, g);
      expect(timeline.microbatches).toBe(pipeline.microbatches);
      // Every crossing of a site boundary is a send each way per microbatch.
      expect(timeline.sends).toHaveLength(2 * pipeline.hops.length * pipeline.microbatches);
      expect(Math.abs(timeline.spanS / pipeline.phaseS - 1)).toBeLessThan(0.02);
    });
  });

  it('three regions: 6 and 18 microbatches on 4 interleaved stages run in Megatron-LM groups of 6, as the closed form says', () => {
    const scenario = loadFixture('llama3-70b-three-regions');
    const layout = layOutPlan(scenario, readPlanFixture('llama3-70b-three-regions'));
    for (const g of [1, 2]) {
      const { timeline, pipeline } = groupTimeline(scenario, layout, g);
      expect(interleavedGroupSize(pipeline.microbatches, 4)).toBe(6);
      expect(timeline.spanS / pipeline.phaseS).toBeCloseTo(1, 9);
    }
  });

  it('an interleaved replica with fewer microbatches than stages is a violation', () => {
    const scenario = loadFixture('llama3-70b-three-regions');
    const plan = clone(readPlanFixture('llama3-70b-three-regions')) as { placement: { replicaGroups: { microbatches: number }[] } };
    plan.placement.replicaGroups[0]!.microbatches = 22;
    plan.placement.replicaGroups[1]!.microbatches = 2;
    plan.placement.replicaGroups[2]!.microbatches = 20;
    const result = evaluate(scenario, plan);
    expect(result.fits).toBe(false);
    expect(result.violations.join('\n')).toMatch(/interleaved schedule needs at least pp = 4 microbatches/);
  });
});
