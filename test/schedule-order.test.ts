/** Microbatches held per stage: memory's count against the op order the timeline simulates. */
import { activationsGiB, microbatchesInFlight, stageMemory, stageMemoryBasis } from '../src/model/memory';
import { scheduleMicrobatchProblem } from '../src/model/pipeline';
import { isBidirectional, isChunked, isVShaped } from '../src/model/schedule-chain';
import { simulateSchedule } from '../src/model/pipeline-timeline';
import { layOutPlan } from '../src/model/placement';
import { SCHEDULES, type Schedule } from '../src/model/plan-schema';
import { peakMicrobatchesHeld, stageOrder } from '../src/model/schedule-order';
import { loadFixture, readPlanFixture } from './helpers/fixtures';

const chunksFor = (schedule: Schedule): readonly number[] => (isVShaped(schedule) || isBidirectional(schedule) ? [2] : isChunked(schedule) ? [2, 3, 4] : [1]);
/** Microbatch counts around p: fewer than p, not multiples of p, and well past it. */
const countsFor = (p: number): number[] => Array.from({ length: 3 * p + 6 }, (_, i) => i + 1);
const runs = (schedule: Schedule, p: number, m: number) => scheduleMicrobatchProblem(schedule, m, p) === undefined;

describe('microbatches held per stage', () => {
  it.each(SCHEDULES)('%s: memory\'s count equals the walk of the simulated op order (every stage, p 1-16, every v, m 1 to 3p + 6)', (schedule) => {
    let compared = 0;
    for (let p = 1; p <= 16; p++) {
      for (const v of chunksFor(schedule)) {
        for (const m of countsFor(p)) {
          if (!runs(schedule, p, m)) continue;
          const plan = { pp: p, virtualStages: v, schedule };
          const stages = Array.from({ length: p }, (_, j) => j);
          const model = stages.map((j) => microbatchesInFlight(plan, j, m));
          const walked = stages.map((j) => peakMicrobatchesHeld(stageOrder(schedule, j, p, v, m), v));
          expect({ p, v, m, held: model }).toEqual({ p, v, m, held: walked });
          compared += p;
        }
      }
    }
    // DualPipe runs only even p and even m >= 2p: 696 stage comparisons in this range.
    expect(compared).toBeGreaterThan(schedule === 'dualpipe' ? 600 : 1000);
  });

  it.each(SCHEDULES)('%s: the timeline runs each stage\'s ops in that order, so it holds the same peak (p 1-8, m 1 to 2p + 3)', (schedule) => {
    for (let p = 1; p <= 8; p++) {
      const v = isChunked(schedule) ? 2 : 1;
      for (let m = 1; m <= 2 * p + 3; m++) {
        if (!runs(schedule, p, m)) continue;
        const timeline = simulateSchedule({ schedule, virtualStages: v, microbatches: m, forwardS: new Array(p).fill(1), backwardS: new Array(p).fill(2), hops: [] });
        for (let j = 0; j < p; j++) {
          const ran = timeline.ops.filter((op) => op.stage === j).sort((x, y) => x.startS - y.startS).map(({ kind, chunk, microbatch }) => ({ kind, chunk, microbatch }));
          expect(ran).toEqual(stageOrder(schedule, j, p, v, m));
          expect(peakMicrobatchesHeld(ran, v)).toBe(microbatchesInFlight({ pp: p, virtualStages: v, schedule }, j, m));
        }
      }
    }
  });

  it('p = 4, m = 8: 1F1B holds 4, 3, 2, 1; ZB-H1 holds 4 on every stage (deferred weight-gradient passes); GPipe all 8', () => {
    const held = (schedule: Schedule) => [0, 1, 2, 3].map((j) => microbatchesInFlight({ pp: 4, virtualStages: 1, schedule }, j, 8));
    expect(held('1f1b')).toEqual([4, 3, 2, 1]);
    expect(held('zb-h1')).toEqual([4, 4, 4, 4]);
    expect(held('gpipe')).toEqual([8, 8, 8, 8]);
    // Interleaved, v = 2, N = 4: (2(p - j - 1) + 4 + 1) / 2.
    expect([0, 1, 2, 3].map((j) => microbatchesInFlight({ pp: 4, virtualStages: 2, schedule: 'interleaved' }, j, 8))).toEqual([5.5, 4.5, 3.5, 2.5]);
    // Fewer microbatches than stages: every stage holds them all under ZB-H1.
    expect([0, 1, 2, 3].map((j) => microbatchesInFlight({ pp: 4, virtualStages: 1, schedule: 'zb-h1' }, j, 3))).toEqual([3, 3, 3, 3]);
  });

  it('a ZB-H1 plan (DeepSeek-V3 fixture, pp 16): the last stage, the logits stage, holds p = 16 microbatches, not 1', () => {
    const scenario = loadFixture('deepseek-v3-moe-two-sites');
    const plan = readPlanFixture('deepseek-v3-moe-two-sites');
    const layout = layOutPlan(scenario, plan);
    expect(layout.plan.schedule).toBe('zb-h1');
    const last = layout.stages[layout.stages.length - 1]!;
    expect(last.hasOutputLayer).toBe(true);
    const m = layout.groups[0]!.microbatches;
    expect(m).toBeGreaterThanOrEqual(16);
    const basis = stageMemoryBasis(scenario, layout.plan, last);
    expect(microbatchesInFlight(layout.plan, last.index, m)).toBe(16);
    const memory = stageMemory(scenario, layout.plan, last, m);
    // activationsGiB counts the logits too; the breakdown reports them under embeddingOutputGiB.
    const logitsGiB = (basis.outputBytes + basis.embeddingBytes) / 2 ** 30;
    expect(memory.activationsGiB).toBeCloseTo(activationsGiB(basis, 16) - logitsGiB, 9);
    expect(memory.activationsGiB).toBeGreaterThan(activationsGiB(basis, 1) - logitsGiB);
  });
});
