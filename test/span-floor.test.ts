/**
 * The span floor of 1F1B and ZB-H1 (docs/cost-model.md eq. 5.11): the op-by-op span at times no
 * larger than a plan's, with no more microbatches, is never above that plan's span, so the
 * planner's bounds may take it (docs/formulation.md §2 and §4). Checked against the simulator on
 * random unequal stages, forward shares, crossings (latency and link step) and microbatch counts.
 */
import fc from 'fast-check';
import { roundTripProfile } from '../src/model/pipeline-round-trip';
import { queuedSpanFloorS, spanFloorAtLeastS, spanFloorS } from '../src/model/pipeline-span-floor';
import { pipelineSpanS } from '../src/model/pipeline-span';
import { simulateSchedule } from '../src/model/pipeline-timeline';

const RELATIVE = 1e-12;

const stageCase = fc.record({
  schedule: fc.constantFrom('1f1b' as const, 'zb-h1' as const),
  stages: fc.array(fc.record({
    stepS: fc.double({ min: 0.05, max: 2, noNaN: true }),
    share: fc.double({ min: 0.1, max: 0.5, noNaN: true }),
    // How much lower the floor's times are: 1 the same, 0.5 half.
    lower: fc.double({ min: 0.5, max: 1, noNaN: true }),
    otherShare: fc.double({ min: 0.1, max: 0.5, noNaN: true }),
  }), { minLength: 1, maxLength: 12 }),
  crossings: fc.array(fc.record({ at: fc.nat(), latencyS: fc.double({ min: 0, max: 1, noNaN: true }), stepS: fc.double({ min: 0, max: 1, noNaN: true }), lower: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 4 }),
  m: fc.integer({ min: 1, max: 40 }),
  more: fc.integer({ min: 0, max: 8 }),
});

type StageCase = typeof stageCase extends fc.Arbitrary<infer T> ? T : never;

/** The plan's real span: its stage times, crossings at their latency and link step, m + more microbatches. */
function realSpanS({ schedule, stages, crossings, m, more }: StageCase): number {
  const p = stages.length;
  const hops = new Map<number, { virtualStage: number; latencyS: number; stepS: number }>();
  if (p > 1) for (const c of crossings) hops.set(c.at % (p - 1), { virtualStage: c.at % (p - 1), latencyS: c.latencyS, stepS: c.stepS });
  return pipelineSpanS({
    schedule, virtualStages: 1, microbatches: m + more,
    forwardS: stages.map((s) => s.stepS * s.share), backwardS: stages.map((s) => s.stepS * (1 - s.share)), hops: [...hops.values()],
  });
}

describe('the span floor (eq. 5.11)', () => {
  it('at lower stage times, lower crossings and fewer microbatches is never above the span (3,000 random cases)', () => {
    let strictlyBelow = 0;
    fc.assert(fc.property(stageCase, (c) => {
      const p = c.stages.length;
      // The floor's crossings: some share of latency plus link step, as a profile charges them, at zero link step.
      const boundaries = new Map<number, { virtualStage: number; latencyS: number; stepS: number }>();
      if (p > 1) for (const x of c.crossings) boundaries.set(x.at % (p - 1), { virtualStage: x.at % (p - 1), latencyS: x.lower * (x.latencyS + x.stepS), stepS: 0 });
      const stepS = c.stages.map((s) => s.lower * s.stepS);
      const profile = roundTripProfile(stepS, c.stages.map((s, j) => stepS[j]! * s.share), { schedule: c.schedule, virtualStages: 1 }, [...boundaries.values()]);
      const floorS = spanFloorS(profile, c.m);
      const spanS = realSpanS(c);
      expect(floorS).toBeGreaterThan(0);
      expect(floorS).toBeLessThanOrEqual(spanS * (1 + RELATIVE));
      if (floorS < spanS * (1 - 1e-9)) strictlyBelow++;
    }), { numRuns: 3000, seed: 20261202 });
    // Not a check that cannot fail the other way: most cases have lower times, so a lower floor.
    expect(strictlyBelow).toBeGreaterThan(1000);
  });

  it('with the link steps as queues, at lower stage times, latencies and link steps and fewer microbatches, is never above the span and never below the idle-link floor (3,000 random cases)', () => {
    let aboveIdle = 0;
    fc.assert(fc.property(stageCase, (c) => {
      const p = c.stages.length;
      // The floor's crossings: some share of the real latency and of the real link step.
      const hops = new Map<number, { virtualStage: number; latencyS: number; stepS: number }>();
      if (p > 1) for (const x of c.crossings) hops.set(x.at % (p - 1), { virtualStage: x.at % (p - 1), latencyS: x.lower * x.latencyS, stepS: x.lower * x.stepS });
      const stepS = c.stages.map((s) => s.lower * s.stepS);
      const profile = roundTripProfile(stepS, c.stages.map((s, j) => stepS[j]! * s.share), { schedule: c.schedule, virtualStages: 1 }, []);
      const queuedS = queuedSpanFloorS(profile, [...hops.values()], c.m);
      expect(queuedS).toBeLessThanOrEqual(realSpanS(c) * (1 + RELATIVE));
      // The same crossings as one latency each on an idle link: the floor of the test above.
      const idle = roundTripProfile(stepS, c.stages.map((s, j) => stepS[j]! * s.share), { schedule: c.schedule, virtualStages: 1 },
        [...hops.values()].map((h) => ({ virtualStage: h.virtualStage, latencyS: h.latencyS + h.stepS, stepS: 0 })));
      const idleS = spanFloorS(idle, c.m);
      expect(queuedS).toBeGreaterThanOrEqual(idleS * (1 - RELATIVE));
      if (queuedS > idleS * (1 + 1e-9)) aboveIdle++;
    }), { numRuns: 3000, seed: 20261203 });
    // Sends of one direction leave a stage spaced by its op times, so here they rarely wait (4 of
    // the 3,000 cases); the queued floor is the span of eq. 5.11 either way.
    expect(aboveIdle).toBeGreaterThan(0);
  });

  it('with a link step longer than the stages, the sends queue: the span of the simulator, above one latency per crossing', () => {
    // Eight stages of forward 1 and backward 2 (1F1B), a crossing after stage 0 of latency 0.5 whose
    // link takes 4 per send, 8 microbatches: stage 0's warm-up forwards leave back to back.
    const steps = new Array<number>(8).fill(3);
    const forwards = new Array<number>(8).fill(1);
    const profile = roundTripProfile(steps, forwards, { schedule: '1f1b', virtualStages: 1 }, []);
    const hops = [{ virtualStage: 0, latencyS: 0.5, stepS: 4 }];
    const queuedS = queuedSpanFloorS(profile, hops, 8);
    expect(queuedS).toBeCloseTo(simulateSchedule({ schedule: '1f1b', virtualStages: 1, microbatches: 8, forwardS: forwards, backwardS: forwards.map(() => 2), hops }).spanS, 9);
    // Each link direction carries 8 sends of 4 one after the other.
    expect(queuedS).toBeGreaterThanOrEqual(8 * 4);
    // As one latency of 4.5 on an idle link the warm-up sends overlap: 54 against 67.
    const idle = roundTripProfile(steps, forwards, { schedule: '1f1b', virtualStages: 1 }, [{ virtualStage: 0, latencyS: 4.5, stepS: 0 }]);
    expect(spanFloorS(idle, 8)).toBeCloseTo(54, 9);
    expect(queuedS).toBeCloseTo(67, 9);
  });

  it('at the same times and microbatches, with every crossing on an idle link, is the simulated span', () => {
    fc.assert(fc.property(stageCase, (c) => {
      const p = c.stages.length;
      const hops = new Map<number, { virtualStage: number; latencyS: number; stepS: number }>();
      if (p > 1) for (const x of c.crossings) hops.set(x.at % (p - 1), { virtualStage: x.at % (p - 1), latencyS: x.latencyS, stepS: 0 });
      const stepS = c.stages.map((s) => s.stepS);
      const forwardS = c.stages.map((s) => s.stepS * s.share);
      const profile = roundTripProfile(stepS, forwardS, { schedule: c.schedule, virtualStages: 1 }, [...hops.values()]);
      const simulated = simulateSchedule({ schedule: c.schedule, virtualStages: 1, microbatches: c.m, forwardS, backwardS: stepS.map((s, j) => s - forwardS[j]!), hops: [...hops.values()] }).spanS;
      expect(spanFloorS(profile, c.m)).toBeCloseTo(simulated, 9);
    }), { numRuns: 500, seed: 7 });
  });

  it('at the quick bound\'s times (least step, least forward and largest backward share over the sites) is never above a placement\'s span', () => {
    fc.assert(fc.property(stageCase, (c) => {
      // The plan runs each stage on a site whose step is at least the fastest and whose share is one of the two.
      const fastestS = c.stages.map((s) => s.lower * s.stepS);
      const shares = c.stages.map((s) => [s.share, s.otherShare]);
      const floorS = spanFloorAtLeastS({ schedule: c.schedule, virtualStages: 1 }, fastestS, shares, c.m);
      expect(floorS).toBeLessThanOrEqual(realSpanS(c) * (1 + RELATIVE));
    }), { numRuns: 3000, seed: 11 });
  });

  it('is 0 for the schedules it does not cover', () => {
    expect(spanFloorAtLeastS({ schedule: 'interleaved', virtualStages: 2 }, [1, 1], [[0.3], [0.3]], 4)).toBe(0);
    expect(spanFloorS(roundTripProfile([1, 1], [0.3, 0.3], { schedule: 'gpipe', virtualStages: 1 }, []), 4)).toBe(0);
  });
});
