/**
 * Every bound is a real bound on scenarios nobody wrote by hand: random small scenarios
 * (test/helpers/random-scenarios.ts), each solved by exhaustive search, candidate by candidate.
 * For every (configuration, dp) with a fitting plan, the quick, outer, capacity, layout-capacity,
 * forced-spanning and ring-pattern bounds and the placement MIP's proven optimum must not exceed the candidate's
 * least time; and `plan` must agree with the exhaustive optimum: a plan exactly when one exists,
 * never faster than the optimum, its printed bound never above it, and within the target gap of
 * it when it says `optimal`.
 *
 * FUZZ_RUNS and FUZZ_SEED widen or move the sample (e.g. FUZZ_RUNS=200 npx jest bounds-random);
 * FUZZ_SEED with FUZZ_PATH replays the case a failure printed.
 */
import fc from 'fast-check';
import { buildPlacementMip, provenIterationBoundS } from '../src/formulation/placement-mip';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import type { Candidate } from '../src/solve/candidates';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends, plan } from '../src/solve/plan';
import { assertAtMostLeastTime, closedFormBounds } from './helpers/bound-checks';
import { smallScenarioArbitrary } from './helpers/random-scenarios';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 14);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261130);
/** Replays one failing case: the `path` fast-check printed with its seed. */
const PATH = process.env['FUZZ_PATH'];
/** Seconds of exhaustive search per scenario; larger ones are skipped (fc.pre). */
const EXHAUSTIVE_CAP_S = 2;
/** Candidates per scenario whose placement MIP is solved to optimality. */
const MIPS_PER_SCENARIO = 8;
const GAP = 0.01;

let backends: MipBackend[];
let highs: HighsWorkerBackend;
beforeAll(() => { backends = defaultBackends(); highs = new HighsWorkerBackend(); });
afterAll(async () => { await Promise.all([...backends, highs].map((b) => b.close())); });

/** The scenario, or undefined when the random draw is not a valid spec (e.g. no tp divides a site's nodes). */
function parsed(spec: unknown): Scenario | undefined {
  try {
    return parseScenario(spec, 'random');
  } catch (error) {
    if (error instanceof ScenarioValidationError) return undefined;
    throw error;
  }
}

describe('bounds and plans on random small scenarios, against exhaustive search', () => {
  const tally = { scenarios: 0, invalid: 0, tooLarge: 0, candidates: 0, mips: 0, withPlan: 0, forcedSpanningBinds: 0, ringPatternBinds: 0, layoutCapacityBinds: 0 };

  it('no bound exceeds a candidate\'s exhaustive optimum, and plan agrees with it', async () => {
    await fc.assert(fc.asyncProperty(smallScenarioArbitrary, async (spec) => {
      const scenario = parsed(spec);
      if (scenario === undefined) tally.invalid++;
      fc.pre(scenario !== undefined);
      const visited: { candidate: Candidate; leastS: number }[] = [];
      const exhaustive = exhaustiveSearch(scenario!, FULL_SPACE, EXHAUSTIVE_CAP_S, (candidate, leastS) => visited.push({ candidate, leastS }));
      if (!exhaustive.complete) tally.tooLarge++;
      fc.pre(exhaustive.complete);
      tally.scenarios++;
      let mips = 0;
      const mipsStarted = Date.now();
      for (const { candidate, leastS } of visited) {
        if (!Number.isFinite(leastS)) continue;
        const bounds = closedFormBounds(candidate, scenario!);
        assertAtMostLeastTime({ ...bounds }, leastS, candidate);
        if (bounds.forcedSpanning > bounds.quick) tally.forcedSpanningBinds++;
        if (bounds.ringPattern > Math.max(bounds.quick, bounds.forcedSpanning)) tally.ringPatternBinds++;
        if (bounds.layoutCapacity > bounds.capacity * (1 + 1e-9)) tally.layoutCapacityBinds++;
        tally.candidates++;
        if (mips >= MIPS_PER_SCENARIO) continue;
        const placement = buildPlacementMip(scenario!, candidate.coefficients(), 0);
        expect(placement).toBeDefined();
        // Solved towards optimality; a dual bound proven before the limit must hold all the same.
        const solution = await highs.solve(placement!.mip, { timeLimitS: 5, relativeGap: 0 });
        expect(solution.boundProven).toBe(true);
        assertAtMostLeastTime({ MIP: provenIterationBoundS(placement!, solution.dualBound) }, leastS, candidate);
        mips++;
        tally.mips++;
      }

      const planStarted = Date.now();
      const result = await plan(scenario!, { timeLimitS: 20, gap: GAP, baselines: false, backends });
      if (process.env['FUZZ_VERBOSE']) console.log(`sites ${scenario!.sites.length} exhaustive ${exhaustive.timeS.toFixed(2)} s, mips+plan ${((Date.now() - mipsStarted) / 1000).toFixed(2)} s, plan ${((Date.now() - planStarted) / 1000).toFixed(2)} s ${result.status}`);
      const optimumS = exhaustive.evaluation?.predicted.iterationTimeS;
      if (optimumS === undefined) {
        // "No plan fits" is an answer, with its reasons.
        expect(result.status).toBe('infeasible');
        expect(result.reasons.length).toBeGreaterThan(0);
        return;
      }
      tally.withPlan++;
      expect(result.status === 'optimal' || result.status === 'feasible').toBe(true);
      const planS = result.evaluation!.predicted.iterationTimeS;
      expect(planS).toBeGreaterThanOrEqual(optimumS * (1 - 1e-9));
      expect(result.bound.lowerBoundS).toBeLessThanOrEqual(optimumS * (1 + 1e-9));
      if (result.status === 'optimal') expect(planS).toBeLessThanOrEqual((optimumS / (1 - GAP)) * (1 + 1e-9));
    }), { numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: true });
    if (process.env['FUZZ_VERBOSE']) console.log(JSON.stringify(tally));
    // The sample must really exercise the bounds: enough solvable scenarios and candidates.
    if (PATH === undefined) expect(tally.scenarios).toBe(RUNS); // fast-check counts only runs past fc.pre
    expect(tally.withPlan).toBeGreaterThan(0);
    expect(tally.candidates).toBeGreaterThan(RUNS);
  }, Math.max(600_000, RUNS * 60_000));
});
