/**
 * The planner against exhaustive search on small scenarios, metamorphic relations, and
 * injected solver faults. Every plan is re-evaluated by the cost model alone.
 */
import { FULL_SPACE } from '../src/formulation/search-space';
import { evaluate } from '../src/model/evaluate';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import { LpSolverBackend } from '../src/solve/lp-solver-backend';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends, plan } from '../src/solve/plan';
import type { PlanResult } from '../src/solve/plan-result';
import { clone, readFixture } from './helpers/fixtures';
import { GarbageBackend, HangingBackend, SlowBackend, ThrowingBackend } from './helpers/faulty-backends';

type Json = any; // scenario JSON mutated by the tests

const SMALL = ['one-site', 'two-sites', 'three-heterogeneous', 'moe-two-sites'] as const;
const small = (name: string): Json => readFixture(`small/${name}`);
const TOLERANCE = 1e-9;

let backends: MipBackend[];
/** A second HiGHS worker: MIPs on two lanes at once, as `plan` runs on a machine with two cores. */
let secondLane: MipBackend;
beforeAll(() => { backends = defaultBackends(); secondLane = new HighsWorkerBackend(); });
afterAll(async () => { await Promise.all([...backends, secondLane].map((b) => b.close())); });

const planOf = (scenario: Scenario, extra: Partial<Parameters<typeof plan>[1]> = {}) =>
  plan(scenario, { timeLimitS: 30, gap: 0.01, baselines: false, backends, ...extra });

function expectIndependentlyChecked(scenario: Scenario, result: PlanResult): number {
  expect(result.plan).toBeDefined();
  const fresh = evaluate(scenario, JSON.parse(JSON.stringify(result.plan)));
  expect(fresh.fits).toBe(true);
  expect(fresh.predicted.iterationTimeS).toBeCloseTo(result.evaluation!.predicted.iterationTimeS, 12);
  return fresh.predicted.iterationTimeS;
}

describe.each(SMALL)('plan vs exhaustive search: %s', (name) => {
  const scenario = parseScenario(small(name));
  // The naive enumeration, plan by plan (no shared bound can hide a planner error here); the
  // reduced one is checked against it in test/exhaustive-reduced.test.ts.
  const reference = exhaustiveSearch(scenario, FULL_SPACE, Infinity, undefined, { mode: 'naive' });

  it('the exhaustive reference is complete and finds a plan', () => {
    expect(reference.complete).toBe(true);
    expect(reference.evaluation?.fits).toBe(true);
    expect(reference.plansEvaluated).toBeGreaterThan(10);
  });

  it.each([1, 2])('the MIP plan (MIPs on %i lanes) equals the exhaustive optimum within the reported gap, and the bound is never above it', async (lanes) => {
    const result = await planOf(scenario, { concurrentBackends: lanes === 2 ? [secondLane] : [] });
    // Stopping a solve on purpose (the other copy answered, or its candidate was pruned) is not a fault.
    expect(result.solver.faults).toEqual([]);
    expect(result.solver.fallbacksUsed).toEqual([]);
    const optimum = reference.evaluation!.predicted.iterationTimeS;
    const time = expectIndependentlyChecked(scenario, result);
    expect(result.bound.proven).toBe(true);
    expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimum * (1 + TOLERANCE));
    expect(time).toBeGreaterThanOrEqual(optimum * (1 - TOLERANCE));
    expect((time - optimum) / time).toBeLessThanOrEqual(result.bound.gap + TOLERANCE);
    expect(result.bound.gap).toBeCloseTo((time - result.bound.lowerBoundS) / time, 12);
    expect(result.status).toBe(result.bound.gap <= 0.01 * (1 + 1e-9) ? 'optimal' : 'feasible');
  });

  it('the heuristic alone never beats the exact solve', async () => {
    const heuristic = await plan(scenario, { timeLimitS: 5, baselines: false, backends: [] });
    expect(heuristic.plan).toBeDefined();
    expect(heuristic.solver.engine).toMatch(/heuristic|seed/);
    expect(heuristic.evaluation!.predicted.iterationTimeS).toBeGreaterThanOrEqual(reference.evaluation!.predicted.iterationTimeS * (1 - TOLERANCE));
    expect(heuristic.bound.lowerBoundS).toBeLessThanOrEqual(reference.evaluation!.predicted.iterationTimeS * (1 + TOLERANCE));
  });
});

describe('MIP lanes', () => {
  it('a free lane re-solves the MIP in flight, and its conclusive answer stops the slow copy', async () => {
    const scenario = parseScenario(small('two-sites'));
    const slow = new SlowBackend(new HighsWorkerBackend(), 20_000);
    const fast = new HighsWorkerBackend();
    try {
      const started = Date.now();
      const result = await plan(scenario, { timeLimitS: 60, baselines: false, heuristicSeeds: 0, backends: [slow, ...backends.slice(1)], concurrentBackends: [fast] });
      // Without the stop, the slow lane's last answer alone would take 20 s.
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(slow.calls).toBeGreaterThan(0);
      expect(slow.aborted).toBeGreaterThan(0);
      expect(result.solver.faults).toEqual([]);
      expect(result.solver.fallbacksUsed).toEqual([]);
      const optimum = exhaustiveSearch(scenario, FULL_SPACE).evaluation!.predicted.iterationTimeS;
      const time = expectIndependentlyChecked(scenario, result);
      expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimum * (1 + TOLERANCE));
      expect((time - optimum) / time).toBeLessThanOrEqual(result.bound.gap + TOLERANCE);
    } finally {
      await Promise.all([slow.close(), fast.close()]);
    }
  }, 60_000);
});

describe('metamorphic relations of the planner', () => {
  const base = small('two-sites');
  const timeAndGap = async (spec: Json) => {
    const result = await planOf(parseScenario(spec));
    return { time: result.evaluation!.predicted.iterationTimeS, gap: result.bound.gap, bound: result.bound.lowerBoundS };
  };

  it('more cross-site bandwidth never makes the plan slower (beyond the proven gap)', async () => {
    let previous = await timeAndGap(base);
    for (const gbps of [800, 3200, 12800]) {
      const spec = clone(base);
      spec.cluster.links[0].bandwidthGbps = gbps;
      const next = await timeAndGap(spec);
      expect(next.time * (1 - next.gap)).toBeLessThanOrEqual(previous.time * (1 + TOLERANCE));
      previous = next;
    }
  });

  it('more GPUs never make the plan slower (beyond the proven gap)', async () => {
    const before = await timeAndGap(base);
    const spec = clone(base);
    spec.cluster.sites[1].gpus = 16;
    const after = await timeAndGap(spec);
    expect(after.time * (1 - after.gap)).toBeLessThanOrEqual(before.time * (1 + TOLERANCE));
  });

  it('renaming and reordering sites changes nothing', async () => {
    const original = await timeAndGap(small('three-heterogeneous'));
    const spec = clone(small('three-heterogeneous'));
    spec.cluster.sites = [spec.cluster.sites[2], spec.cluster.sites[0], spec.cluster.sites[1]].map((s: Json, i: number) => ({ ...s, name: `site-${i}` }));
    const rename: Record<string, string> = { b200: 'site-0', h100: 'site-1', a100: 'site-2' };
    spec.cluster.links = spec.cluster.links.map((l: Json) => ({ ...l, between: l.between.map((n: string) => rename[n]) })).reverse();
    const relabelled = await timeAndGap(spec);
    expect(relabelled.time * (1 - relabelled.gap)).toBeLessThanOrEqual(original.time * (1 + TOLERANCE));
    expect(original.time * (1 - original.gap)).toBeLessThanOrEqual(relabelled.time * (1 + TOLERANCE));
  });
});

describe('solver faults are survived and labelled', () => {
  const scenario = parseScenario(small('two-sites'));
  const optimum = exhaustiveSearch(scenario, FULL_SPACE).evaluation!.predicted.iterationTimeS;

  it.each([
    ['throws', () => new ThrowingBackend()],
    ['hangs', () => new HangingBackend()],
    ['returns garbage', () => new GarbageBackend()],
  ])('a backend that %s is replaced by a fresh HiGHS instance', async (_kind, make) => {
    const faulty = make();
    const fresh = new HighsWorkerBackend(true);
    const result = await plan(scenario, { timeLimitS: 5, baselines: false, backends: [faulty, fresh], backendGraceS: 0.2, heuristicSeeds: 0 });
    expect(faulty.calls).toBeGreaterThan(0);
    expect(result.solver.faults.some((f) => f.startsWith(faulty.name))).toBe(true);
    expect(result.solver.fallbacksUsed).toContain('highs (fresh instance)');
    const time = expectIndependentlyChecked(scenario, result);
    expect(time).toBeGreaterThanOrEqual(optimum * (1 - TOLERANCE));
    expect((time - optimum) / time).toBeLessThanOrEqual(result.bound.gap + TOLERANCE);
  });

  it('when every MIP backend fails, javascript-lp-solver or the heuristic answer, with a proven closed-form bound', async () => {
    const result = await plan(scenario, {
      timeLimitS: 10, baselines: false, backendGraceS: 0.2, heuristicSeeds: 0,
      backends: [new ThrowingBackend(), new HangingBackend(), new GarbageBackend(), new LpSolverBackend()],
    });
    expect(result.solver.engine).toMatch(/^(javascript-lp-solver|heuristic)( \+ cost-model polish)?$/);
    expect(result.solver.fallbacksUsed).toEqual(expect.arrayContaining(['hanging', 'garbage']));
    const time = expectIndependentlyChecked(scenario, result);
    expect(time).toBeGreaterThanOrEqual(optimum * (1 - TOLERANCE));
    expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimum * (1 + TOLERANCE));
    expect(result.bound.proven).toBe(true);
  });
});

describe('no plan fits', () => {
  it('is an answer with reasons, not an error', async () => {
    const result = await planOf(parseScenario(readFixture('small/infeasible-memory')));
    expect(result.status).toBe('infeasible');
    expect(result.plan).toBeUndefined();
    expect(result.reasons.length).toBeGreaterThan(0);
    expect(result.reasons.join('\n')).toMatch(/memory|fits/);
  });

  it('says when the batch cannot be shared by the replicas (2 sequences, interleaved over 4 stages)', async () => {
    const json = clone(readFixture('small/one-site')) as { training: { globalBatchSeqs: number }; search?: unknown };
    json.training.globalBatchSeqs = 2;
    json.search = { tp: [1], pp: [4], microBatchSeqs: [1], schedules: ['interleaved'], virtualStages: [2] };
    const result = await planOf(parseScenario(json));
    expect(result.status).toBe('infeasible');
    expect(result.reasons.join('\n')).toMatch(/batch cannot be shared by dp replicas/);
  });
});
