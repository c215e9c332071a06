/**
 * The capacity bounds stopped at the pruning threshold (docs/formulation.md §4, step 3(b) and
 * 3(e), `enoughS`), and the refine phase that takes them first: below the threshold they are the
 * bounds computed in full, above it a value between the threshold and the full bound, never
 * above a candidate's exhaustive optimum; and the refine phase leaves the same candidates, with
 * the same bounds, as every family computed in full.
 */
import { capacityLowerBound } from '../src/formulation/capacity-bound';
import { forcedSpanningLowerBound, outerLowerBound } from '../src/formulation/closed-form-bounds';
import type { ConfigCoefficients } from '../src/formulation/coefficients';
import { layoutCapacityLowerBound } from '../src/formulation/layout-capacity-bound';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { enumeratePhase } from '../src/solve/search/enumerate';
import { refineBounds } from '../src/solve/search/refine';
import { seedPhase } from '../src/solve/search/seed';
import { threshold } from '../src/solve/search/state';
import { ROWS, scenarioFor } from '../bench/plan-scaling-scenarios';
import { readFixture } from './helpers/fixtures';

const small = (name: string): Scenario => parseScenario(readFixture(`small/${name}`), name);

describe('capacity bounds stopped at a level', () => {
  it.each(['three-heterogeneous', 'two-sites'])('equal the full bounds below the level, lie between the level and the full bound at or above it: %s', (name) => {
    const scenario = small(name);
    const siteGpus = scenario.sites.map((s) => s.gpus);
    let below = 0;
    let stopped = 0;
    for (const candidate of enumerateCandidates(scenario, FULL_SPACE)) {
      if (!Number.isFinite(candidate.quickBoundS)) continue;
      const c = candidate.coefficients();
      const capacityS = capacityLowerBound(c, siteGpus);
      const layoutS = layoutCapacityLowerBound(c, siteGpus);
      for (const factor of [0.8, 0.95, 1, 1.001, 1.05, 1.3]) {
        for (const [fullS, stop] of [[capacityS, (l: number) => capacityLowerBound(c, siteGpus, l)], [layoutS, (l: number) => layoutCapacityLowerBound(c, siteGpus, -Infinity, l)]] as const) {
          if (!Number.isFinite(fullS) || fullS <= 0) continue;
          const levelS = fullS * factor;
          const stoppedS = stop(levelS);
          if (fullS < levelS) {
            expect(stoppedS).toBe(fullS);
            below++;
          } else {
            expect(stoppedS).toBeGreaterThanOrEqual(levelS);
            expect(stoppedS).toBeLessThanOrEqual(fullS);
            stopped++;
          }
        }
      }
    }
    expect(below).toBeGreaterThan(10);
    expect(stopped).toBeGreaterThan(10);
  });

  it.each(['three-heterogeneous', 'two-sites', 'moe-two-sites'])('never exceed a candidate\'s exhaustive optimum at any level: %s', (name) => {
    const scenario = small(name);
    const siteGpus = scenario.sites.map((s) => s.gpus);
    const visited: { c: ConfigCoefficients; leastS: number }[] = [];
    const result = exhaustiveSearch(scenario, FULL_SPACE, 120, (candidate, leastS) => visited.push({ c: candidate.coefficients(), leastS }));
    expect(result.complete).toBe(true);
    let checked = 0;
    for (const { c, leastS } of visited) {
      if (!Number.isFinite(leastS)) continue;
      // Levels just under the optimum are where a stopped bound claims the most.
      for (const factor of [0.5, 0.9, 0.99, 0.999, 1]) {
        const levelS = leastS * factor;
        expect(capacityLowerBound(c, siteGpus, levelS)).toBeLessThanOrEqual(leastS * (1 + 1e-9));
        expect(layoutCapacityLowerBound(c, siteGpus, -Infinity, levelS)).toBeLessThanOrEqual(leastS * (1 + 1e-9));
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  }, 120_000);
});

describe('refine phase', () => {
  it('leaves the 3-site bench row\'s candidates with the bounds every family gives in full, and prunes the rest at the threshold', () => {
    const scenario = scenarioFor(ROWS[1]!);
    const state = enumeratePhase(scenario, { timeLimitS: 600, gap: 0.01, backends: [], restriction: FULL_SPACE });
    const refined = refineBounds(state, seedPhase(state));
    const thresholdS = threshold(state);
    const siteGpus = scenario.sites.map((s) => s.gpus);
    // 27 of the 605 candidates refined were left for MIPs when every family was computed for each.
    expect(refined.coefficients.size).toBe(27);
    let visited = 0;
    for (let i = 0; i < state.candidates.length && state.candidates[i]!.quickBoundS < thresholdS; i++) {
      const candidate = state.candidates[i]!;
      const c = candidate.coefficients();
      const pipelineS = Math.max(candidate.quickBoundS, candidate.pipelineFloorS());
      const closedS = Math.max(pipelineS, outerLowerBound(c, pipelineS), capacityLowerBound(c, siteGpus), forcedSpanningLowerBound(c, siteGpus, pipelineS));
      const fullS = Math.max(closedS, layoutCapacityLowerBound(c, siteGpus, closedS));
      if (refined.coefficients.has(i)) expect(state.bounds[i]).toBe(fullS);
      else {
        expect(fullS).toBeGreaterThanOrEqual(thresholdS);
        expect(state.bounds[i]).toBeGreaterThanOrEqual(thresholdS);
        expect(state.bounds[i]).toBeLessThanOrEqual(fullS);
      }
      visited++;
    }
    expect(visited).toBe(605);
  }, 60_000);
});
