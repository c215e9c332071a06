/**
 * The pipeline phase the cost model reports against the op-by-op timeline (docs/cost-model.md §5):
 * for 1F1B and ZB-H1 the span itself, at least the floors (eq. 5.8-5.9) the planner's bounds are
 * built on; for the other schedules the larger of the closed form and the span. It is never below
 * the timeline; on the plans `plan` returns for the fixtures it agrees with it within 2%.
 * bench/timeline-agreement.ts prints the same comparison over the planner-scaling rows and random
 * scenarios.
 */
import fc from 'fast-check';
import { groupPipelines } from '../src/model/critical-group';
import { evaluate, evaluateLayout } from '../src/model/evaluate';
import { fewestScheduleMicrobatches, pipelineWithHopsS, roundTripFloorS, roundTripProfile, scheduleMicrobatchProblem } from '../src/model/pipeline';
import { roundTripFloorAtLeastS, roundTripFloorLine } from '../src/model/pipeline-round-trip';
import { pipelineSpanS } from '../src/model/pipeline-span';
import { hasStageFloor, roundTripLineS, stageFloorAtLeastS, stageFloorFluidBubbleS, stageFloorS, stageFloorTerms } from '../src/model/pipeline-stage-floor';
import { simulateSchedule } from '../src/model/pipeline-timeline';
import { isBidirectional, isChunked, isVShaped } from '../src/model/schedule-chain';
import { SCHEDULES } from '../src/model/plan-schema';
import { layOutPlan } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario, type Scenario } from '../src/model/scenario';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends, plan } from '../src/solve/plan';
import { planAgreement, relativeDifference } from '../bench/pipeline-agreement';
import { smallScenarioArbitrary } from '../bench/random-scenarios';
import { loadFixture, readPlanFixture } from './helpers/fixtures';

const TOLERANCE = 1e-9;
/** Random crossings at distinct boundaries of a p-stage chain (the first at each boundary kept), each with its virtual stage. */
function atDistinctBoundaries<C extends { readonly at: number }>(p: number, crossings: readonly C[]): (C & { readonly virtualStage: number })[] {
  const seen = new Set<number>();
  return crossings.filter((c) => p > 1 && !seen.has(c.at % (p - 1)) && seen.add(c.at % (p - 1))).map((c) => ({ ...c, virtualStage: c.at % (p - 1) }));
}

/** Crossings as the pipeline functions take them: distinct boundaries, latency and link step. */
const hopsOf = (p: number, crossings: readonly { at: number; latencyS: number; stepS: number }[]) =>
  atDistinctBoundaries(p, crossings).map(({ virtualStage, latencyS, stepS }) => ({ virtualStage, latencyS, stepS }));

let backends: MipBackend[];
beforeAll(() => { backends = defaultBackends(); });
afterAll(async () => { await Promise.all(backends.map((b) => b.close())); });

/**
 * Every group: 1F1B and ZB-H1 report max(floor 5.8, stage floor 5.9, timeline) = the timeline (both
 * floors are at most it); the other schedules max(closed form, floor, timeline) = max(closed form,
 * timeline), within rounding.
 */
function expectReportedIsLargerOfBoth(scenario: Scenario, spec: PlanSpec): void {
  for (const g of planAgreement(scenario, spec)) {
    expect(g.reportedS).toBeGreaterThanOrEqual(g.timelineS * (1 - TOLERANCE));
    expect(g.reportedS).toBeGreaterThanOrEqual(g.floorS * (1 - TOLERANCE));
    expect(g.reportedS).toBeGreaterThanOrEqual(g.stageFloorS * (1 - TOLERANCE));
    if (hasStageFloor({ schedule: g.schedule as PlanSpec['schedule'], virtualStages: g.v })) expect(g.reportedS).toBeCloseTo(g.timelineS, 12);
    else expect(g.reportedS).toBeCloseTo(Math.max(g.closedFormS, g.timelineS), 12);
  }
}

describe('the span evaluate computes', () => {
  it('equals the time-ordered simulation\'s on every schedule, with unequal stages and crossings', () => {
    const spanCase = fc.record({
      schedule: fc.constantFrom(...SCHEDULES),
      steps: fc.array(fc.double({ min: 0.2, max: 2, noNaN: true }), { minLength: 1, maxLength: 10 }),
      forwardShare: fc.double({ min: 0.2, max: 0.45, noNaN: true }),
      v: fc.integer({ min: 2, max: 3 }),
      extra: fc.integer({ min: 0, max: 24 }),
      crossings: fc.array(fc.record({ at: fc.nat(), latencyS: fc.double({ min: 0, max: 1, noNaN: true }), stepS: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 4 }),
    });
    fc.assert(fc.property(spanCase, ({ schedule, steps, forwardShare, v: chunks, extra, crossings }) => {
      const p = steps.length;
      const v = isVShaped(schedule) || isBidirectional(schedule) ? 2 : isChunked(schedule) ? chunks : 1;
      if (isChunked(schedule) && !isVShaped(schedule) && p < 2) return;
      if (isBidirectional(schedule) && p % 2 !== 0) return; // DualPipe needs an even pp
      const m = fewestScheduleMicrobatches(schedule, p) + extra;
      if (scheduleMicrobatchProblem(schedule, m, p) !== undefined) return; // a count the schedule cannot run (interleaved-zb's rounds)
      const chain = p * v;
      const hops = hopsOf(chain, crossings);
      const forwardS = steps.map((x) => x * forwardShare);
      const inputs = { schedule, virtualStages: v, microbatches: m, forwardS, backwardS: steps.map((x, j) => x - forwardS[j]!), hops };
      expect(pipelineSpanS(inputs)).toBe(simulateSchedule(inputs).spanS);
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 1000) });
  });
});

describe('round-trip floor (eq. 5.8)', () => {
  /** 1F1B or ZB-H1 with unequal stages and crossings of random latency and link step. */
  const floorCase = fc.record({
    schedule: fc.constantFrom('1f1b' as const, 'zb-h1' as const),
    steps: fc.array(fc.double({ min: 0.2, max: 2, noNaN: true }), { minLength: 1, maxLength: 12 }),
    forwardShare: fc.double({ min: 0.2, max: 0.45, noNaN: true }),
    m: fc.integer({ min: 1, max: 40 }),
    crossings: fc.array(fc.record({ at: fc.nat(), latencyS: fc.double({ min: 0, max: 1, noNaN: true }), stepS: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 4 }),
  });

  it('is never above the op-by-op span (the bound the planner\'s MIP rows rely on)', () => {
    fc.assert(fc.property(floorCase, ({ schedule, steps, forwardShare, m, crossings }) => {
      const forwardS = steps.map((s) => s * forwardShare);
      const hops = hopsOf(steps.length, crossings);
      const plan = { schedule, virtualStages: 1 };
      const spanS = simulateSchedule({ schedule, virtualStages: 1, microbatches: m, forwardS, backwardS: steps.map((s, j) => s - forwardS[j]!), hops }).spanS;
      expect(roundTripFloorS(roundTripProfile(steps, forwardS, plan, hops), m)).toBeLessThanOrEqual(spanS * (1 + 1e-12));
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 2000) });
  });

  it('for a count known from below: at most the span of every larger count, and non-decreasing in the count', () => {
    // Stages of very unequal times make the chain with the most windows fall when a count adds one.
    const atLeastCase = fc.record({
      schedule: fc.constantFrom('1f1b' as const, 'zb-h1' as const),
      steps: fc.array(fc.double({ min: 0.05, max: 3, noNaN: true }), { minLength: 1, maxLength: 10 }),
      forwardShare: fc.double({ min: 0.2, max: 0.45, noNaN: true }),
      k: fc.integer({ min: 1, max: 30 }),
      more: fc.integer({ min: 0, max: 12 }),
      crossings: fc.array(fc.record({ at: fc.nat(), latencyS: fc.double({ min: 0, max: 1, noNaN: true }), stepS: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 4 }),
    });
    fc.assert(fc.property(atLeastCase, ({ schedule, steps, forwardShare, k, more, crossings }) => {
      const forwardS = steps.map((s) => s * forwardShare);
      const hops = hopsOf(steps.length, crossings);
      const profile = roundTripProfile(steps, forwardS, { schedule, virtualStages: 1 }, hops);
      const atLeastS = roundTripFloorAtLeastS(profile, k);
      const m = k + more;
      const spanS = simulateSchedule({ schedule, virtualStages: 1, microbatches: m, forwardS, backwardS: steps.map((s, j) => s - forwardS[j]!), hops }).spanS;
      expect(atLeastS).toBeLessThanOrEqual(spanS * (1 + 1e-12));
      expect(roundTripFloorAtLeastS(profile, m)).toBeGreaterThanOrEqual(atLeastS * (1 - 1e-12));
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 2000) });
    // On equal stages without crossings it is eq. 5.1 (m x step + the fill and drain), as the floor is.
    const f = [0.3, 0.3, 0.3, 0.3];
    const profile = roundTripProfile([1, 1, 1, 1], f, { schedule: '1f1b', virtualStages: 1 }, []);
    expect(roundTripFloorAtLeastS(profile, 16)).toBeCloseTo(roundTripFloorS(profile, 16), 12);
    expect(roundTripFloorAtLeastS(profile, 16)).toBeCloseTo(16 + 3, 12);
  });

  it('as a line in one link\'s step: its value is the floor there, and it stays under the floor and the span at every other step', () => {
    const lineCase = fc.record({
      schedule: fc.constantFrom('1f1b' as const, 'zb-h1' as const),
      steps: fc.array(fc.double({ min: 0.2, max: 2, noNaN: true }), { minLength: 2, maxLength: 10 }),
      forwardShare: fc.double({ min: 0.2, max: 0.45, noNaN: true }),
      m: fc.integer({ min: 1, max: 40 }),
      crossings: fc.array(fc.record({ at: fc.nat(), latencyS: fc.double({ min: 0, max: 0.5, noNaN: true }), onLink: fc.boolean() }), { minLength: 1, maxLength: 4 }),
      atStepS: fc.double({ min: 0, max: 2, noNaN: true }),
      otherStepsS: fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 3, maxLength: 3 }),
    });
    fc.assert(fc.property(lineCase, ({ schedule, steps, forwardShare, m, crossings, atStepS, otherStepsS }) => {
      const forwardS = steps.map((s) => s * forwardShare);
      // A link crossing always takes some latency. At none, and a step of 0, the floor skips the chains
      // that mix crossings (eq. 5.8's windows with crossing time), which the line taken at a positive
      // step keeps: up to 8% above the floor there, and still under the span (the assertion below).
      const hops = atDistinctBoundaries(steps.length, crossings).map((h) => (h.onLink ? { ...h, latencyS: Math.max(h.latencyS, 1e-6) } : h));
      const plan = { schedule, virtualStages: 1 };
      const onLink = steps.slice(1).map((_, q) => hops.some((h) => h.virtualStage === q && h.onLink));
      const atZero = roundTripProfile(steps, forwardS, plan, hops.map((h) => ({ virtualStage: h.virtualStage, latencyS: h.latencyS, stepS: 0 })));
      const withStep = (stepS: number) => hops.map((h) => ({ virtualStage: h.virtualStage, latencyS: h.latencyS, stepS: h.onLink ? stepS : 0 }));
      const line = roundTripFloorLine(atZero, m, onLink, atStepS);
      expect(line.valueS).toBeCloseTo(roundTripFloorS(roundTripProfile(steps, forwardS, plan, withStep(atStepS)), m), 9);
      expect(line.linkSteps).toBeGreaterThanOrEqual(hops.filter((h) => h.onLink).length);
      for (const stepS of [0, ...otherStepsS]) {
        const lineS = line.valueS + line.linkSteps * (stepS - atStepS);
        expect(lineS).toBeLessThanOrEqual(roundTripFloorS(roundTripProfile(steps, forwardS, plan, withStep(stepS)), m) * (1 + 1e-9) + 1e-12);
        const spanS = simulateSchedule({ schedule, virtualStages: 1, microbatches: m, forwardS, backwardS: steps.map((s, j) => s - forwardS[j]!), hops: withStep(stepS) }).spanS;
        expect(lineS).toBeLessThanOrEqual(spanS * (1 + 1e-9) + 1e-12);
      }
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 1000) });
  });

  it('equals eq. 5.1 on equal stages and catches a crossing\'s round trip that the closed form misses', () => {
    const p = 8;
    const f = new Array<number>(p).fill(1);
    const steps = new Array<number>(p).fill(3);
    const plan = { schedule: '1f1b' as const, virtualStages: 1 };
    expect(roundTripFloorS(roundTripProfile(steps, f, plan, []), 64)).toBeCloseTo(pipelineWithHopsS(steps, f, 64, plan, []).phaseS, 12);
    // A crossing between stages 3 and 4 costing half a stage each way: every two microbatches wait for it twice.
    const hops = [{ virtualStage: 3, latencyS: 0.25, stepS: 0.25 }];
    const floorS = roundTripFloorS(roundTripProfile(steps, f, plan, hops), 64);
    const spanS = simulateSchedule({ schedule: '1f1b', virtualStages: 1, microbatches: 64, forwardS: f, backwardS: f.map(() => 2), hops }).spanS;
    const closedS = pipelineWithHopsS(steps, f, 64, plan, hops).phaseS;
    expect(closedS).toBeLessThan(spanS * 0.9);
    expect(floorS).toBeGreaterThan(closedS * 1.1);
    expect(floorS).toBeLessThanOrEqual(spanS);
  });

  it('has no profile for GPipe and the interleaved schedule (no floor)', () => {
    expect(roundTripProfile([1, 1], [0.3, 0.3], { schedule: 'gpipe', virtualStages: 1 }, [])).toBeUndefined();
    expect(roundTripProfile([1, 1], [0.3, 0.3], { schedule: 'interleaved', virtualStages: 2 }, [])).toBeUndefined();
    expect(roundTripFloorS(undefined, 8)).toBe(0);
  });
});

describe('stage floor (eq. 5.9)', () => {
  const stageCase = fc.record({
    schedule: fc.constantFrom('1f1b' as const, 'zb-h1' as const),
    steps: fc.array(fc.double({ min: 0.2, max: 2, noNaN: true }), { minLength: 1, maxLength: 12 }),
    shares: fc.array(fc.double({ min: 0.1, max: 0.5, noNaN: true }), { minLength: 12, maxLength: 12 }),
    m: fc.integer({ min: 1, max: 40 }),
    crossings: fc.array(fc.record({ at: fc.nat(), latencyS: fc.double({ min: 0, max: 1, noNaN: true }), stepS: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 4 }),
  });
  const spanOf = (schedule: '1f1b' | 'zb-h1', steps: readonly number[], forwardS: readonly number[], m: number, hops: readonly { virtualStage: number; latencyS: number; stepS: number }[]) =>
    simulateSchedule({ schedule, virtualStages: 1, microbatches: m, forwardS, backwardS: steps.map((s, j) => s - forwardS[j]!), hops }).spanS;
  it('is never above the op-by-op span, per stage forward share, with crossings', () => {
    fc.assert(fc.property(stageCase, ({ schedule, steps, shares, m, crossings }) => {
      const forwardS = steps.map((s, j) => s * shares[j]!);
      const hops = hopsOf(steps.length, crossings);
      const profile = roundTripProfile(steps, forwardS, { schedule, virtualStages: 1 }, hops)!;
      expect(stageFloorS(profile, steps, hops.map((h) => h.stepS), m)).toBeLessThanOrEqual(spanOf(schedule, steps, forwardS, m, hops) * (1 + 1e-12));
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 2000) });
  });

  it('the rows\' terms (k x slowest step + bubble + the crossings before it; chain + (k + 1) link steps) are at most it, at every k', () => {
    fc.assert(fc.property(stageCase, ({ schedule, steps, shares, m, crossings }) => {
      const forwardS = steps.map((s, j) => s * shares[j]!);
      const hops = hopsOf(steps.length, crossings);
      const spanS = spanOf(schedule, steps, forwardS, m, hops);
      // The planner's terms at zero link step, plus the link steps they charge.
      const atZero = roundTripProfile(steps, forwardS, { schedule, virtualStages: 1 }, hops.map((h) => ({ ...h, stepS: 0 })))!;
      const terms = stageFloorTerms(atZero, steps);
      let before = 0;
      let latencyS = 0;
      for (const h of hops) {
        latencyS += h.latencyS;
        if (h.virtualStage <= terms.lastBoundaryBefore) before += terms.passesBefore * (h.latencyS + h.stepS);
      }
      expect(m * Math.max(...steps) + terms.bubbleS + before).toBeLessThanOrEqual(spanS * (1 + 1e-12));
      for (const h of hops) expect(terms.chainS + 2 * latencyS + (m + 1) * h.stepS).toBeLessThanOrEqual(spanS * (1 + 1e-12));
      // F6's form C row: the largest form C line at zero link step plus each crossing's step twice.
      const formC = Math.max(...steps.map((_, j) => roundTripLineS(atZero, j, m)));
      expect(formC + 2 * hops.reduce((sum, h) => sum + h.stepS, 0)).toBeLessThanOrEqual(spanS * (1 + 1e-12));
      // F6's round-trip row: eq. 5.8 at zero link step plus each crossing's step once.
      const steps1 = hops.reduce((sum, h) => sum + h.stepS, 0);
      expect(roundTripFloorS(atZero, m) + steps1).toBeLessThanOrEqual(spanS * (1 + 1e-12));
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 2000) });
  });

  it('the quick bound\'s version is at most the span of every replica with slower stages and shares among those given', () => {
    const quickCase = fc.record({
      schedule: fc.constantFrom('1f1b' as const, 'zb-h1' as const),
      fastest: fc.array(fc.double({ min: 0.2, max: 2, noNaN: true }), { minLength: 1, maxLength: 10 }),
      slower: fc.array(fc.double({ min: 1, max: 2, noNaN: true }), { minLength: 10, maxLength: 10 }),
      sharePairs: fc.array(fc.tuple(fc.double({ min: 0.1, max: 0.5, noNaN: true }), fc.double({ min: 0.1, max: 0.5, noNaN: true }), fc.boolean()), { minLength: 10, maxLength: 10 }),
      m: fc.integer({ min: 1, max: 30 }),
    });
    fc.assert(fc.property(quickCase, ({ schedule, fastest, slower, sharePairs, m }) => {
      const steps = fastest.map((s, j) => s * slower[j]!);
      const shares = fastest.map((_, j) => [sharePairs[j]![0], sharePairs[j]![1]]);
      const forwardS = steps.map((s, j) => s * (sharePairs[j]![2] ? sharePairs[j]![0] : sharePairs[j]![1]));
      expect(stageFloorAtLeastS({ schedule, virtualStages: 1 }, fastest, shares, m)).toBeLessThanOrEqual(spanOf(schedule, steps, forwardS, m, []) * (1 + 1e-12));
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 2000) });
    // Beside the fluid bound: the mean stage line, k x mean step + the mean bubble, is at most every such span too.
    fc.assert(fc.property(quickCase, ({ schedule, fastest, slower, sharePairs, m }) => {
      const steps = fastest.map((s, j) => s * slower[j]!);
      const shares = fastest.map((_, j) => [sharePairs[j]![0], sharePairs[j]![1]]);
      const forwardS = steps.map((s, j) => s * (sharePairs[j]![2] ? sharePairs[j]![0] : sharePairs[j]![1]));
      const meanStepS = steps.reduce((sum, s) => sum + s, 0) / steps.length;
      expect(m * meanStepS + stageFloorFluidBubbleS({ schedule }, fastest, shares)).toBeLessThanOrEqual(spanOf(schedule, steps, forwardS, m, []) * (1 + 1e-12));
    }), { numRuns: Number(process.env['PROPERTY_RUNS'] ?? 2000) });
    // A candidate no microbatch count fits (k infinite) keeps an infinite quick bound, not NaN.
    expect(stageFloorAtLeastS({ schedule: '1f1b', virtualStages: 1 }, [1, 2], [[0.3], [0.3]], Infinity)).toBe(Infinity);
  });

  it('equals eq. 5.1 on equal 1F1B stages, and the span where eq. 5.1 charges a light first stage\'s fill and drain', () => {
    const plan = { schedule: '1f1b' as const, virtualStages: 1 };
    const steps = new Array<number>(6).fill(3);
    const f = steps.map(() => 1);
    expect(stageFloorS(roundTripProfile(steps, f, plan, [])!, steps, [], 16)).toBeCloseTo(pipelineWithHopsS(steps, f, 16, plan, []).phaseS, 12);
    // The slowest stage first: its forwards hide the later stages' round trips, which eq. 5.1 charges in full.
    const uneven = [3, 1, 1, 1];
    const fu = uneven.map((s) => s / 3);
    const spanS = spanOf('1f1b', uneven, fu, 8, []);
    expect(pipelineWithHopsS(uneven, fu, 8, plan, []).phaseS).toBeGreaterThan(spanS * 1.05);
    expect(stageFloorS(roundTripProfile(uneven, fu, plan, [])!, uneven, [], 8)).toBeCloseTo(spanS, 12);
  });
});

describe('reported pipeline phase', () => {
  it.each([
    ['llama3-405b-two-buildings', 'llama3-405b-two-buildings'],
    ['llama3-405b-two-buildings', 'llama3-405b-pp-across-no-recompute'],
    ['llama3-70b-three-regions', 'llama3-70b-three-regions'],
    ['deepseek-v3-moe-two-sites', 'deepseek-v3-moe-two-sites'],
  ])('%s / %s: the span (1F1B, ZB-H1) or the larger of closed form and span; the closed-form timing is a lower bound on the iteration', (scenarioName, planName) => {
    const scenario = loadFixture(scenarioName);
    const spec = readPlanFixture(planName) as unknown as PlanSpec;
    expectReportedIsLargerOfBoth(scenario, spec);
    const layout = layOutPlan(scenario, spec);
    const timed = evaluateLayout(scenario, layout);
    const closed = evaluateLayout(scenario, layout, 'closed-form');
    expect(closed.predicted.iterationTimeS).toBeLessThanOrEqual(timed.predicted.iterationTimeS * (1 + TOLERANCE));
    expect(evaluate(scenario, spec).predicted.iterationTimeS).toBe(timed.predicted.iterationTimeS);
    // The breakdown still adds up to the iteration time, and a phase below the closed form leaves no part negative.
    const parts = Object.values(timed.predicted.breakdown).reduce((sum, x) => sum + x, 0);
    expect(parts).toBeCloseTo(timed.predicted.iterationTimeS, 9);
    for (const part of Object.values(timed.predicted.breakdown)) expect(part).toBeGreaterThanOrEqual(-1e-12);
  });

  it('a crossing whose round trip outlasts the microbatches in flight: the timeline, not the optimistic closed form', () => {
    // Two stages on two sites 10,000 km apart: 1F1B with 8 microbatches, two in flight, waits for each round trip.
    const scenario = parseScenario({
      version: 1, name: 'far', model: { name: 'tiny', layers: 4, hidden: 1024, ffnHidden: 4096, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' },
      training: { seqLen: 1024, globalBatchSeqs: 8 },
      cluster: { sites: [{ name: 'a', gpuType: 'H100-SXM', gpus: 8 }, { name: 'b', gpuType: 'H100-SXM', gpus: 8 }], links: [{ between: ['a', 'b'], bandwidthGbps: 100, distanceKm: 10000 }] },
    }, 'far');
    const spec = { tp: 1, pp: 2, dp: 1, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, placement: { replicaGroups: [{ replicas: 1, stageSites: [{ site: 'a', stages: 1 }, { site: 'b', stages: 1 }], microbatches: 8 }] } } as unknown as PlanSpec;
    const [g] = planAgreement(scenario, spec);
    expect(g!.timelineS).toBeGreaterThan(g!.closedFormS * 1.02);
    expect(g!.reportedS).toBeCloseTo(g!.timelineS, 12);
    const layout = layOutPlan(scenario, spec);
    const timedPipeline = groupPipelines(scenario, layout).pipelines[0]!;
    const screenedPipeline = groupPipelines(scenario, layout, 'closed-form').pipelines[0]!;
    expect(timedPipeline.timelineExcessS).toBeGreaterThan(0);
    // The round-trip floor (eq. 5.8), which the screening timing and the MIP rows carry, catches most of it.
    expect(screenedPipeline.phaseS - g!.closedFormS).toBeGreaterThan(0.9 * (g!.timelineS - g!.closedFormS));
    expect(screenedPipeline.phaseS).toBeLessThanOrEqual(timedPipeline.phaseS);
    // The excess is cross-site time in the breakdown, which still adds up.
    const timed = evaluate(scenario, spec).predicted;
    const closed = evaluateLayout(scenario, layout, 'closed-form').predicted;
    expect(timed.breakdown.crossSiteS - closed.breakdown.crossSiteS).toBeCloseTo(timedPipeline.phaseS - screenedPipeline.phaseS, 12);
    expect(Object.values(timed.breakdown).reduce((sum, x) => sum + x, 0)).toBeCloseTo(timed.iterationTimeS, 12);
  });
});

describe('plans the planner returns', () => {
  it.each(['small/one-site', 'small/two-sites', 'small/three-heterogeneous', 'small/moe-two-sites', 'llama3-70b-three-regions', 'deepseek-v3-moe-two-sites'])(
    '%s: the plan\'s pipeline phase is within 2% of the op-by-op timeline, and its printed time is evaluate\'s', async (name) => {
      const scenario = loadFixture(name);
      const result = await plan(scenario, { timeLimitS: 20, gap: 0.01, baselines: false, backends });
      expect(result.plan).toBeDefined();
      expectReportedIsLargerOfBoth(scenario, result.plan!);
      for (const g of planAgreement(scenario, result.plan!)) expect(Math.abs(relativeDifference(g.reportedS, g.timelineS))).toBeLessThanOrEqual(0.02);
      expect(evaluate(scenario, JSON.parse(JSON.stringify(result.plan))).predicted.iterationTimeS).toBe(result.evaluation!.predicted.iterationTimeS);
      expect(result.bound.lowerBoundS).toBeLessThanOrEqual(result.evaluation!.predicted.iterationTimeS);
    }, 60_000);

  it('seeded random scenarios: no returned plan\'s pipeline phase is below its timeline', async () => {
    const specs = fc.sample(smallScenarioArbitrary, { seed: 20261201, numRuns: 12 });
    let planned = 0;
    for (const spec of specs) {
      let scenario: Scenario;
      try { scenario = parseScenario(spec, 'random'); } catch { continue; }
      const result = await plan(scenario, { timeLimitS: 5, gap: 0.01, baselines: false, backends });
      if (!result.plan) continue;
      planned++;
      expectReportedIsLargerOfBoth(scenario, result.plan);
      for (const part of Object.values(result.evaluation!.predicted.breakdown)) expect(part).toBeGreaterThanOrEqual(-1e-12);
    }
    expect(planned).toBeGreaterThan(4);
  }, 300_000);
});
