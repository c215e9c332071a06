/**
 * A plan whose replicas run a microbatch count its schedule refuses (pipeline-schedule-rules.ts)
 * is evaluated like any plan that does not fit: predictions with the rule as a violation, and a
 * report without a timeline that says why; never an internal error from the op-by-op timeline,
 * which cannot build those schedules.
 */
import { evaluate } from '../src/model/evaluate';
import { parseScenario } from '../src/model/scenario';
import { reportFromGivenPlan } from '../src/report/report-data';
import { clone, readFixture } from './helpers/fixtures';

// The small one-site fixture (16 GPUs) with a batch of 10 sequences, so that replicas run 2, 5 or 10 microbatches.
const spec = clone(readFixture('small/one-site')) as { training: { globalBatchSeqs: number } };
spec.training.globalBatchSeqs = 10;
const scenario = parseScenario(spec, 'ten sequences');

const cases: [string, Record<string, unknown>, RegExp][] = [
  ['DualPipeV with fewer than 2p microbatches', { tp: 1, pp: 2, dp: 5, microBatchSeqs: 1, schedule: 'dualpipev', virtualStages: 2 }, /DualPipeV schedule needs at least 2 x pp = 4 microbatches/],
  ['interleaved zero-bubble with microbatches its rounds do not divide', { tp: 1, pp: 2, dp: 2, microBatchSeqs: 1, schedule: 'interleaved-zb', virtualStages: 2 }, /interleaved zero-bubble schedule needs microbatches divisible/],
  ['ZBV with fewer than 2p - 1 microbatches', { tp: 1, pp: 4, dp: 5, microBatchSeqs: 1, schedule: 'zbv', virtualStages: 2 }, /ZBV schedule needs at least 2 x pp - 1 = 7 microbatches/],
  ['DualPipe with an odd microbatch count', { tp: 1, pp: 2, dp: 2, microBatchSeqs: 1, schedule: 'dualpipe', virtualStages: 2 }, /DualPipe schedule needs an even number of microbatches/],
  ['interleaved with fewer than pp microbatches', { tp: 1, pp: 4, dp: 2, microBatchSeqs: 5, schedule: 'interleaved', virtualStages: 2 }, /interleaved schedule needs at least pp = 4 microbatches/],
];

describe.each(cases)('%s', (_name, plan, rule) => {
  it('evaluates to predictions with the rule as a violation', () => {
    const result = evaluate(scenario, plan);
    expect(result.fits).toBe(false);
    expect(result.violations.some((v) => rule.test(v))).toBe(true);
    expect(Number.isFinite(result.predicted.iterationTimeS)).toBe(true);
    expect(result.predicted.iterationTimeS).toBeGreaterThan(0);
  });

  it('reports without a timeline, saying which rule', () => {
    const report = reportFromGivenPlan(scenario, plan, 'plan.json');
    expect(report.timeline).toBeUndefined();
    expect(report.timelineNote).toMatch(rule);
  });
});
