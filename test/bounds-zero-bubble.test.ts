/**
 * The planner with the zero-bubble schedules torchtitan runs (ZBV, interleaved zero-bubble, DualPipeV): every
 * closed-form bound and the placement MIP's proven bound stay at or below each candidate's least
 * time found by exhaustive search, and `plan` returns the exhaustive optimum within its gap.
 */
import { assertCandidateBoundsAtMostLeastTimes } from '../bench/bound-checks';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario, type Scenario } from '../src/model/scenario';
import type { Candidate } from '../src/solve/candidates';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends, plan } from '../src/solve/plan';

type Json = any; // scenario JSON built below

/** A 16-layer model on H100s: `sites` sites of `gpus` GPUs (50 km apart), 16 sequences of 4,096 tokens per iteration. */
function smallScenario(name: string, sites: number, gpus: number): Scenario {
  const names = Array.from({ length: sites }, (_, i) => `site-${i + 1}`);
  const spec: Json = {
    version: 1, name,
    model: { name: 'small', layers: 16, hidden: 4096, ffnHidden: 14336, heads: 32, kvHeads: 8, vocab: 32000, mlp: 'swiglu' },
    training: { seqLen: 4096, globalBatchSeqs: 16, precision: 'bf16' },
    cluster: {
      sites: names.map((n) => ({ name: n, gpuType: 'H100-SXM', gpus, gpusPerNode: 8 })),
      links: names.slice(1).map((n, i) => ({ between: [names[i], n], bandwidthGbps: 400, distanceKm: 50 })),
    },
    search: { tp: [2, 4], pp: [2, 4], microBatchSeqs: [1], schedules: ['1f1b', 'zb-h1', 'zbv', 'interleaved-zb', 'dualpipev'], virtualStages: [2], recompute: ['none'], zero: [1] },
  };
  return parseScenario(spec, name);
}

/**
 * With what schedules the optimum runs: on one site a zero-bubble one with chunks (half ZB-H1's
 * bubble, measured 0.2260 s against ZB-H1's 0.2310 s); across two sites ZB-H1, whose chain crosses
 * the link once where ZBV's crosses twice and the interleaved chain three times.
 */
const SCENARIOS: [string, Scenario, readonly string[]][] = [
  ['one site of 16 GPUs', smallScenario('zb-one-site', 1, 16), ['zbv', 'interleaved-zb', 'dualpipev']],
  ['two sites of 8 GPUs', smallScenario('zb-two-sites', 2, 8), ['zb-h1']],
];

let highs: HighsWorkerBackend;
let backends: MipBackend[];
beforeAll(() => { highs = new HighsWorkerBackend(); backends = defaultBackends(); });
afterAll(async () => { await Promise.all([highs, ...backends].map((b) => b.close())); });

describe.each(SCENARIOS)('zero-bubble schedules in the planner: %s', (_name, scenario, optimumSchedules) => {
  const visited: { candidate: Candidate; leastS: number }[] = [];
  const exhaustive = exhaustiveSearch(scenario, FULL_SPACE, 60, (candidate, leastS) => visited.push({ candidate, leastS }));
  const fitting = visited.filter((v) => Number.isFinite(v.leastS));

  it('every closed-form bound and the placement MIP are at most each candidate\'s least time, new schedules included', async () => {
    expect(exhaustive.complete).toBe(true);
    const schedules = new Set(fitting.map((v) => v.candidate.config.schedule));
    expect(schedules).toContain('zbv');
    expect(schedules).toContain('interleaved-zb');
    expect(schedules).toContain('dualpipev');
    await assertCandidateBoundsAtMostLeastTimes(scenario, fitting, highs);
  }, 120_000);

  it('plan returns the exhaustive optimum within its gap, and a bound at most the optimum', async () => {
    const optimum = exhaustive.evaluation!;
    const optimumS = optimum.predicted.iterationTimeS;
    const result = await plan(scenario, { timeLimitS: 20, gap: 0.01, baselines: false, backends });
    // Across two sites the reported phase is the op-by-op span (a crossing's stall), which the
    // closed-form bounds do not reach: the optimum is found but its proof can stop above 1%.
    expect(['optimal', 'feasible']).toContain(result.status);
    expect(result.bound.gap).toBeLessThan(0.02);
    const planS = result.evaluation!.predicted.iterationTimeS;
    expect(planS).toBeGreaterThanOrEqual(optimumS * (1 - 1e-9));
    expect(planS).toBeLessThanOrEqual((optimumS / 0.99) * (1 + 1e-9));
    expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimumS * (1 + 1e-9));
    expect(optimumSchedules).toContain(exhaustive.plan!.schedule);
    expect(optimumSchedules).toContain(result.plan!.schedule);
  }, 60_000);
});
