/**
 * The bidirectional DualPipe schedule (`dualpipe`; DeepSeek-V3 report §3.2.1, deepseek-ai/DualPipe
 * `dualpipe.py`): its op order against the published steps, its two chains, the closed form
 * (docs/cost-model.md eq. 5.10) against the op-by-op timeline, memory, the gradient sum of the two
 * copies, validation and an evaluation.
 */
import fc from 'fast-check';
import { dataParallelSync } from '../src/model/data-parallel-sync';
import { linkSettings } from '../src/model/cross-site';
import { evaluateLayout } from '../src/model/evaluate';
import { microbatchesInFlight, stageMemory } from '../src/model/memory';
import { chainCrossings, pipelinePhaseS, scheduleMicrobatchProblem } from '../src/model/pipeline';
import { simulateSchedule } from '../src/model/pipeline-timeline';
import { layOutPlan, siteOccupancy } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { endsChain, startsChain, virtualStageOf } from '../src/model/schedule-chain';
import { peakMicrobatchesHeld, stageOrder, type ScheduledOp } from '../src/model/schedule-order';
import { ScenarioValidationError } from '../src/model/validation-error';
import { clone, loadFixture, readFixture, readPlanFixture } from './helpers/fixtures';

/** Ops as compact strings: F0:1 is the forward of microbatch 1 on chunk 0. */
const show = (ops: readonly ScheduledOp[]) => ops.map((op) => `${op.kind === 'forward' ? 'F' : op.kind === 'backward' ? 'B' : 'W'}${op.chunk}:${op.microbatch}`);

/** Equal stages: forward `share` of a unit step. */
function spans(p: number, m: number, share: number) {
  const f = new Array<number>(p).fill(share);
  const simulated = simulateSchedule({ schedule: 'dualpipe', virtualStages: 2, microbatches: m, forwardS: f, backwardS: f.map((x) => 1 - x), hops: [] }).spanS;
  const { steadyS, bubbleS } = pipelinePhaseS(new Array<number>(p).fill(1), f, m, { schedule: 'dualpipe', virtualStages: 2 });
  return { simulated, steadyS, bubbleS };
}

describe('the op order of dualpipe.py', () => {
  it('rank 0 of 4 with 8 microbatches: the eight steps written out by hand from DualPipe.step', () => {
    // half_rank 0, num_half_ranks 2, half_num_chunks 4. Step 1: 2 F0; 2: F0 F1; 3: B1 (zero bubble), W, F1;
    // 4: 1 round F0 B1 F1 B0; 5: B1 F1 B0; 6: B1, B0 (zero bubble from here: half_rank even); 7: W, B0 (zb); 8: W.
    // A backward without zero bubble is its B at once followed by its W.
    expect(show(stageOrder('dualpipe', 0, 4, 2, 8))).toEqual([
      'F0:0', 'F0:1', 'F0:2', 'F1:0', 'B1:0', 'W1:0', 'F1:1',
      'F0:3', 'B1:1', 'W1:1', 'F1:2', 'B0:0', 'W0:0',
      'B1:2', 'W1:2', 'F1:3', 'B0:1', 'W0:1',
      'B1:3', 'W1:3', 'B0:2', 'W0:2', 'B0:3', 'W0:3',
    ]);
  });

  it('GPU pp - 1 - j runs GPU j\'s order with the directions swapped; every GPU runs m / 2 of each op per direction', () => {
    for (const p of [2, 4, 6, 8]) for (const m of [2 * p, 2 * p + 2, 3 * p + 4]) for (let j = 0; j < p; j++) {
      const order = stageOrder('dualpipe', j, p, 2, m);
      expect(show(stageOrder('dualpipe', p - 1 - j, p, 2, m))).toEqual(show(order.map((op) => ({ ...op, chunk: 1 - op.chunk }))));
      for (const kind of ['forward', 'backward', 'weight'] as const) for (const chunk of [0, 1]) {
        const seen = order.filter((op) => op.kind === kind && op.chunk === chunk).map((op) => op.microbatch);
        expect(seen).toEqual(Array.from({ length: m / 2 }, (_, i) => i));
      }
    }
  });

  it('refuses what dualpipe.py asserts against: odd pp, odd m, m < 2pp', () => {
    expect(() => stageOrder('dualpipe', 0, 3, 2, 12)).toThrow(/even number of stages, got 3/);
    expect(() => stageOrder('dualpipe', 0, 4, 2, 9)).toThrow(/even number of microbatches, at least 2p = 8, got 9/);
    expect(() => stageOrder('dualpipe', 0, 4, 2, 6)).toThrow(/at least 2p = 8, got 6/);
    expect(scheduleMicrobatchProblem('dualpipe', 6, 4)).toBe('the DualPipe schedule needs at least 2 x pp = 8 microbatches per replica');
    expect(scheduleMicrobatchProblem('dualpipe', 9, 4)).toBe('the DualPipe schedule needs an even number of microbatches per replica (half enter at each end), got 9');
    expect(scheduleMicrobatchProblem('dualpipe', 10, 4)).toBeUndefined();
    expect(scheduleMicrobatchProblem('dualpipe', 12, 3)).toBe('the DualPipe schedule needs an even pp, got 3');
  });
});

describe('two chains: GPU j runs stage j of direction 0 and stage pp - 1 - j of direction 1', () => {
  it('virtual stages, chain ends and crossings', () => {
    expect([0, 1, 2, 3].map((j) => [virtualStageOf('dualpipe', j, 0, 4), virtualStageOf('dualpipe', j, 1, 4)])).toEqual([[0, 7], [1, 6], [2, 5], [3, 4]]);
    expect([0, 3, 4, 7].map((q) => [startsChain('dualpipe', q, 4), endsChain('dualpipe', q, 4, 8)])).toEqual([[true, false], [false, true], [true, false], [false, true]]);
    // The V of dualpipev runs on through 3 -> 4; DualPipe's direction 0 ends at 3 and direction 1 starts at 4.
    expect(startsChain('dualpipev', 4, 4)).toBe(false);
    // Stages 0-1 at site 0, 2-3 at site 1: direction 0 crosses from GPU 1 to 2 (boundary 1), direction 1 from GPU 2 to 1 (boundary 5).
    expect(chainCrossings([0, 0, 1, 1], { schedule: 'dualpipe', virtualStages: 2 }).map((c) => [c.virtualStage, c.from, c.to])).toEqual([[1, 0, 1], [5, 1, 0]]);
  });

  it('a crossing: each chain sends m / 2 activations and m / 2 gradients over it, and the span grows by at least the fill and drain through it', () => {
    const p = 4;
    const m = 12;
    const f = new Array<number>(p).fill(0.3);
    const run = (hops: { virtualStage: number; latencyS: number; stepS: number }[]) =>
      simulateSchedule({ schedule: 'dualpipe', virtualStages: 2, microbatches: m, forwardS: f, backwardS: f.map((x) => 1 - x), hops });
    const plain = run([]);
    const crossed = run([{ virtualStage: 1, latencyS: 0.05, stepS: 0.02 }, { virtualStage: 5, latencyS: 0.05, stepS: 0.02 }]);
    for (const hop of [0, 1]) for (const direction of ['forward', 'backward'] as const) {
      expect(crossed.sends.filter((s) => s.hop === hop && s.direction === direction)).toHaveLength(m / 2);
    }
    expect(crossed.spanS).toBeGreaterThanOrEqual(plain.spanS + 2 * (0.05 + 0.02) - 1e-12);
  });
});

describe('closed form (eq. 5.10) against the op-by-op timeline', () => {
  it('equal stages: exact for even p 2-12, every even m from 2p to 3p + 6, forward share 0.1-0.5; and the span is DualPipeV\'s on p / 2 stages with m / 2', () => {
    let compared = 0;
    for (let p = 2; p <= 12; p += 2) for (let m = 2 * p; m <= 3 * p + 6; m += 2) for (const share of [0.1, 0.2, 0.25, 0.3, 1 / 3, 0.4, 0.5]) {
      const { simulated, steadyS, bubbleS } = spans(p, m, share);
      expect({ p, m, share, exact: Math.abs((steadyS + bubbleS) / simulated - 1) < 1e-9 }).toEqual({ p, m, share, exact: true });
      const half = p / 2;
      const v = simulateSchedule({ schedule: 'dualpipev', virtualStages: 2, microbatches: m / 2, forwardS: new Array(half).fill(share), backwardS: new Array(half).fill(1 - share), hops: [] }).spanS;
      expect(simulated).toBeCloseTo(v, 9);
      compared++;
    }
    expect(compared).toBe(7 * [2, 4, 6, 8, 10, 12].reduce((sum, p) => sum + p / 2 + 4, 0));
  });

  it('equal stages: m / 2 steps plus max((p/2 - 1)F, (p/2 - 1)W - F) / 2, no bubble at all on 2 stages', () => {
    // Forward share 0.3: F 0.3, W (1 - 0.3) / 2 = 0.35; the weight term takes over once p / 2 - 1 >= 7.
    for (let p = 2; p <= 20; p += 2) {
      const expected = Math.max((p / 2 - 1) * 0.3, (p / 2 - 1) * 0.35 - 0.3) / 2;
      const { simulated, steadyS, bubbleS } = spans(p, 3 * p, 0.3);
      expect(steadyS).toBeCloseTo(1.5 * p, 12);
      expect(bubbleS).toBeCloseTo(expected, 12);
      expect(simulated - 1.5 * p).toBeCloseTo(expected, 9);
    }
    expect(spans(2, 8, 0.3).simulated).toBeCloseTo(4, 12);
  });

  it('unequal stages (ends, jitter, two halves up to 1.7x apart): never optimistic', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 8 }), fc.double({ min: 0.1, max: 0.5, noNaN: true }), fc.integer({ min: 0, max: 2 }),
      fc.double({ min: 0.6, max: 1.7, noNaN: true }), fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 1, maxLength: 12 }),
      (half, extra, share, kind, c, jitter) => {
        const p = 2 * half;
        const m = 2 * p + 2 * extra;
        const steps = Array.from({ length: p }, (_, j) => (kind === 0 ? (j === 0 || j === p - 1 ? c : 1) : kind === 1 ? 1 + 0.05 * jitter[j % jitter.length]! : j < half ? 1 : c));
        const f = steps.map((x) => x * share);
        const simulated = simulateSchedule({ schedule: 'dualpipe', virtualStages: 2, microbatches: m, forwardS: f, backwardS: steps.map((x) => x * (1 - share)), hops: [] }).spanS;
        const { steadyS, bubbleS } = pipelinePhaseS(steps, f, m, { schedule: 'dualpipe', virtualStages: 2 });
        expect((steadyS + bubbleS) / simulated - 1).toBeGreaterThan(-1e-9);
      },
    ), { numRuns: 400, seed: 2026 });
  });
});

describe('memory: two stages per GPU, PP + 1 stage activations (DeepSeek-V3 Table 2)', () => {
  it('(p + 1) / 2 GPU-steps of activations on every GPU, as the walk of the order gives', () => {
    for (let p = 2; p <= 10; p += 2) for (let m = 2 * p; m <= 3 * p + 4; m += 2) for (let j = 0; j < p; j++) {
      expect(microbatchesInFlight({ pp: p, virtualStages: 2, schedule: 'dualpipe' }, j, m)).toBe((p + 1) / 2);
      expect(peakMicrobatchesHeld(stageOrder('dualpipe', j, p, 2, m), 2)).toBe((p + 1) / 2);
    }
  });

  it('per GPU: the weights, gradients and optimizer state of stages j and pp - 1 - j; a middle GPU holds (pp + 1) / (pp - 1) times 1F1B stage 1\'s activations', () => {
    const scenario = loadFixture('llama3-8b-one-site');
    const plan = { tp: 2, pp: 4, dp: 32, microBatchSeqs: 1 };
    const dual = layOutPlan(scenario, { ...plan, schedule: 'dualpipe', virtualStages: 2 });
    const oneF = layOutPlan(scenario, { ...plan, schedule: '1f1b' });
    expect(dual.stages.map((s) => s.chunkLayers)).toEqual([[8, 8], [8, 8], [8, 8], [8, 8]]);
    expect(dual.stages.map((s) => [s.hasEmbedding, s.hasOutputLayer])).toEqual([[true, true], [false, false], [false, false], [true, true]]);
    const m = dual.groups[0]!.microbatches;
    const memory = (layout: typeof dual, j: number) => stageMemory(scenario, layout.plan, layout.stages[j]!, m);
    for (let j = 0; j < 4; j++) {
      for (const term of ['weightsGiB', 'gradientsGiB', 'optimizerGiB'] as const) {
        expect(memory(dual, j)[term]).toBeCloseTo(memory(oneF, j)[term] + memory(oneF, 3 - j)[term], 9);
      }
    }
    expect(memory(dual, 1).activationsGiB / memory(oneF, 1).activationsGiB).toBeCloseTo(5 / 3, 9);
  });

  it('the two copies\' gradients are summed: GPU j\'s ring takes GPU pp - 1 - j\'s replicas, across sites when they are elsewhere', () => {
    const scenario = loadFixture('deepseek-v3-moe-two-sites');
    const base = readPlanFixture('deepseek-v3-moe-two-sites');
    const syncOf = (schedule: string, virtualStages: number) => {
      const layout = layOutPlan(scenario, { ...base, schedule, virtualStages });
      const { usedPerSite, replicasOfStageAtSite } = siteOccupancy(scenario, layout);
      return dataParallelSync(scenario, layout, replicasOfStageAtSite, usedPerSite, linkSettings(scenario, layout.plan));
    };
    // Stages 0-7 in zone-a, 8-15 in zone-b: under DualPipeV each stage's ring stays in its zone, under DualPipe
    // GPU j and 15 - j hold the same stages in different zones, so every ring crosses.
    expect(syncOf('dualpipev', 2).crossPerStageS.every((s) => s === 0)).toBe(true);
    const dual = syncOf('dualpipe', 2);
    expect(dual.crossPerStageS.every((s) => s > 0)).toBe(true);
    expect(dual.crossLoads.some((load) => load.aToB > 0 && load.bToA > 0)).toBe(true);
  });
});

describe('plans with dualpipe', () => {
  const scenario = loadFixture('llama3-8b-one-site');
  const base = { tp: 2, pp: 4, dp: 32, microBatchSeqs: 1, virtualStages: 2 };
  const inputError = (plan: object): string => {
    try { layOutPlan(scenario, plan); } catch (e) { expect(e).toBeInstanceOf(ScenarioValidationError); return (e as Error).message; }
    return 'no error';
  };

  it.each([
    [{ ...base, schedule: 'dualpipe', pp: 3 }, 'plan.pp: 3 is odd: the dualpipe schedule needs an even pp (GPU j holds stages j and pp - 1 - j)'],
    [{ ...base, schedule: 'dualpipe', virtualStages: 1 }, 'plan.virtualStages: the dualpipe schedule needs exactly 2 virtual stages (stage j of one direction, stage pp - 1 - j of the other), got 1'],
    [{ ...base, schedule: 'dualpipe', virtualStages: 3 }, 'plan.virtualStages: the dualpipe schedule needs exactly 2 virtual stages (stage j of one direction, stage pp - 1 - j of the other), got 3'],
    [{ ...base, schedule: 'dualpipe', pp: 36, tp: 1, dp: 2 }, 'plan.pp: 36 stages exceed 32 layers + 2 (embedding/loss counted as layers)'],
  ])('input error: %j', (plan, message) => {
    expect(inputError(plan)).toBe(message);
  });

  it('too few microbatches is a violation; the scenario\'s search refuses dualpipe (evaluate-only)', () => {
    const few = evaluateLayout(scenario, layOutPlan(scenario, { ...base, tp: 1, dp: 128, schedule: 'dualpipe' }));
    expect(few.violations).toContain('the DualPipe schedule needs at least 2 x pp = 8 microbatches per replica, a replica group runs 4');
    const spec = clone(readFixture('llama3-8b-one-site')) as Record<string, unknown>;
    spec['search'] = { schedules: ['1f1b', 'dualpipe'] };
    expect(() => parseScenario(spec, 's.json')).toThrow(/^s\.json: search\.schedules: 'dualpipe' is not searched: the planner's bounds do not cover the bidirectional DualPipe/);
  });
});
