/**
 * The outlook of the search's placement walks (src/solve/search/candidate-walk.ts,
 * docs/formulation.md §4 step 6): a walk whose progress says it cannot end by its deadline is
 * given up after its probe and claims nothing, instead of running to the deadline. The points of
 * test/exhaust-holders.test.ts check that the small walks still end and close their gaps.
 */
import { ROWS, scenarioFor } from '../bench/plan-scaling-scenarios';
import { planOfGroups } from '../src/formulation/coefficients';
import { FULL_SPACE } from '../src/formulation/search-space';
import { evaluate } from '../src/model/evaluate';
import { enumerateCandidates } from '../src/solve/candidates';
import { greedyPlacement } from '../src/solve/heuristic';
import { outlookTooLong, PROBE_PLACEMENTS, PROBE_VISITS, walkCandidate } from '../src/solve/search/candidate-walk';
import { placementWalkSymmetries } from '../src/solve/site-symmetry';
import { branchShares, CHECKPOINT_VISITS } from '../src/solve/walk-progress';

describe('outlookTooLong', () => {
  it('judges no walk before its probe, then by the time the whole walk takes at its pace', () => {
    expect(outlookTooLong({ visits: PROBE_VISITS - 1, leaves: PROBE_PLACEMENTS - 1, doneShare: 0 }, 1000, 10)).toBe(false);
    expect(outlookTooLong({ visits: PROBE_VISITS, leaves: 0, doneShare: 0 }, 1, 10_000)).toBe(true);
    expect(outlookTooLong({ visits: 10, leaves: PROBE_PLACEMENTS, doneShare: 0.5 }, 100, 1000)).toBe(false);
    expect(outlookTooLong({ visits: 10, leaves: PROBE_PLACEMENTS, doneShare: 0.05 }, 100, 1000)).toBe(true);
  });
});

describe('branchShares', () => {
  it('splits a node\'s share over its live branches only, more to those that leave more replicas', () => {
    const shares = branchShares(0.5, [true, false, true, true], 3, 2);
    expect(shares[1]).toBe(0);
    expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(0.5, 12);
    // Ways to spread 3, 1 and 0 replicas over two later choices: 4, 2 and 1.
    expect(shares[0]! / shares[3]!).toBeCloseTo(4, 12);
    expect(shares[2]! / shares[3]!).toBeCloseTo(2, 12);
    expect(branchShares(1, [false, false], 1, 3)).toEqual([0, 0]);
  });
});

describe('a walk too large for its deadline', () => {
  it('is given up after its probe and claims nothing (4-site Llama 3 405B, its best candidate)', () => {
    const row = ROWS.find((r) => r.model === '405B' && r.sites.length === 4)!;
    const scenario = scenarioFor(row);
    const candidate = enumerateCandidates(scenario, FULL_SPACE).find((k) =>
      k.config.tp === 8 && k.config.pp === 32 && k.config.schedule === 'zb-h1' && k.config.virtualStages === 1 && k.config.microBatchSeqs === 1
      && k.config.recompute === 'none' && k.config.zero === 1 && k.config.cp === 1 && k.dp === 128)!;
    expect(candidate).toBeDefined();
    const coefficients = candidate.coefficients();
    // Pruning at the candidate's greedy plan less 1%, as the search's threshold would with that plan as incumbent.
    const groups = greedyPlacement(scenario, coefficients)!;
    const greedyS = evaluate(scenario, planOfGroups(coefficients, scenario, groups)).predicted.iterationTimeS;
    const walk = walkCandidate(scenario, FULL_SPACE, coefficients, placementWalkSymmetries(scenario, undefined), () => greedyS * 0.99,
      Date.now() + 30_000, () => undefined);
    expect(walk.gaveUp).toBe(true);
    expect(walk.complete).toBe(false);
    // Stopped at its first judgement (a checkpoint comes every CHECKPOINT_VISITS visits and after each placement).
    expect(walk.visits).toBeLessThanOrEqual(PROBE_VISITS + CHECKPOINT_VISITS);
    expect(walk.placements).toBeLessThanOrEqual(PROBE_PLACEMENTS);
  }, 120_000);
});
