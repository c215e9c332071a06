/**
 * The layout capacity bound (docs/formulation.md §4, step 3(e)) and the dense simplex it takes its
 * prices from, against independent references: vertex enumeration for the simplex,
 * javascript-lp-solver for the bound's LP. That the bound never
 * exceeds a candidate's exhaustive optimum is checked with the other bounds in
 * bounds-per-candidate.test.ts and bounds-random-scenarios.test.ts; here, that it is as strong as
 * the LP it is built on, and that the simplex's optimum and prices are right.
 */
import fc from 'fast-check';
import { ascendingDistinct, capacityLowerBound, replicaFinishS } from '../src/formulation/capacity-bound';
import type { ConfigCoefficients } from '../src/formulation/coefficients';
import { maximizeDenseLp } from '../src/formulation/dense-simplex';
import { layoutCapacityLowerBound } from '../src/formulation/layout-capacity-bound';
import { lpRulesOut } from '../src/formulation/replica-capacity';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import { readFixture } from './helpers/fixtures';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const lpSolver = require('javascript-lp-solver') as { Solve: (model: unknown) => Record<string, number | boolean | undefined> };

/**
 * max c.x s.t. rows x <= rhs, x >= 0 by vertex enumeration: every choice of m columns of [A I]
 * as a basis, solved by Gaussian elimination, kept if feasible. Exact enough for small integer data.
 */
function vertexMaximum(objective: readonly number[], rows: readonly (readonly number[])[], rhs: readonly number[]): number {
  const m = rows.length;
  const n = objective.length;
  const column = (j: number) => rows.map((row, i) => (j < n ? row[j]! : j - n === i ? 1 : 0));
  let best = -Infinity;
  const choose = (from: number, basis: number[]) => {
    if (basis.length === m) {
      const values = solveSquare(basis.map(column), rhs);
      if (values && values.every((v) => v >= -1e-9)) {
        best = Math.max(best, basis.reduce((sum, j, k) => sum + (j < n ? objective[j]! * values[k]! : 0), 0));
      }
      return;
    }
    for (let j = from; j < n + m; j++) choose(j + 1, [...basis, j]);
  };
  choose(0, []);
  return best;
}

/** Solves B v = rhs for the columns of B, or undefined when they are singular. */
function solveSquare(columns: readonly number[][], rhs: readonly number[]): number[] | undefined {
  const m = rhs.length;
  const a = rhs.map((value, i) => [...columns.map((col) => col[i]!), value]);
  for (let k = 0; k < m; k++) {
    let p = k;
    for (let i = k + 1; i < m; i++) if (Math.abs(a[i]![k]!) > Math.abs(a[p]![k]!)) p = i;
    if (Math.abs(a[p]![k]!) < 1e-9) return undefined;
    [a[k], a[p]] = [a[p]!, a[k]!];
    for (let i = 0; i < m; i++) {
      if (i === k) continue;
      const f = a[i]![k]! / a[k]![k]!;
      for (let j = k; j <= m; j++) a[i]![j]! -= f * a[k]![j]!;
    }
  }
  return a.map((row, i) => row[m]! / row[i]!);
}

describe('dense simplex', () => {
  // Up to 4 rows and 5 columns, plus a last row sum x <= 60 that keeps every LP bounded.
  const lp = fc.integer({ min: 1, max: 4 }).chain((m) => fc.integer({ min: 1, max: 5 }).chain((n) => fc.record({
    objective: fc.array(fc.integer({ min: -5, max: 20 }), { minLength: n, maxLength: n }),
    rows: fc.array(fc.array(fc.integer({ min: -3, max: 12 }), { minLength: n, maxLength: n }), { minLength: m, maxLength: m }),
    rhs: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: m, maxLength: m }),
  }).map(({ objective, rows, rhs }) => ({ objective, rows: [...rows, objective.map(() => 1)], rhs: [...rhs, 60] }))));

  it('finds the optimum of vertex enumeration, and prices that prove it (dual feasible, equal objective)', () => {
    fc.assert(fc.property(lp, ({ objective, rows, rhs }) => {
      const reference = vertexMaximum(objective, rows, rhs);
      const solution = maximizeDenseLp(objective, rows, rhs);
      expect(solution.status).toBe('optimal');
      expect(solution.objective).toBeCloseTo(reference, 6);
      // Primal feasible, and its value is the reported objective.
      rows.forEach((row, i) => expect(row.reduce((sum, a, j) => sum + a * solution.x[j]!, 0)).toBeLessThanOrEqual(rhs[i]! + 1e-7));
      solution.x.forEach((v) => expect(v).toBeGreaterThanOrEqual(-1e-9));
      expect(objective.reduce((sum, cost, j) => sum + cost * solution.x[j]!, 0)).toBeCloseTo(reference, 6);
      // Dual feasible (y >= 0, y.A >= c) with y.b equal to the optimum: a certificate of optimality.
      objective.forEach((cost, j) => expect(rows.reduce((sum, row, i) => sum + solution.duals[i]! * row[j]!, 0)).toBeGreaterThanOrEqual(cost - 1e-7));
      expect(rhs.reduce((sum, value, i) => sum + solution.duals[i]! * value, 0)).toBeCloseTo(reference, 6);
    }), { numRuns: 300, seed: 20261130 });
  });

  it('says unbounded when a column improves without limit', () => {
    expect(maximizeDenseLp([1, 1], [[1, -1]], [4]).status).toBe('unbounded');
  });

  it('says when it ran out of pivots before the optimum', () => {
    expect(maximizeDenseLp([1, 2], [[1, 1]], [3], 0).status).toBe('pivot-limit');
    // Bland's rule enters x1 first (least index), then x2: two pivots.
    expect(maximizeDenseLp([1, 2], [[1, 1]], [3], 1).status).toBe('pivot-limit');
    expect(maximizeDenseLp([1, 2], [[1, 1]], [3], 2)).toMatchObject({ status: 'optimal', objective: 6 });
  });

  it('rejects a negative right-hand side (the slack basis would not be feasible)', () => {
    expect(() => maximizeDenseLp([1], [[1]], [-1])).toThrow(/right-hand side/);
  });
});

describe('replica capacity LP', () => {
  // The worked example of docs/formulation.md §4, 3(e), by hand: whole replicas carry 4 (site 1)
  // or 8 (site 3) microbatches on 16 GPUs; replicas split onto site 2 carry 1 on 8 + 8 GPUs. With
  // 256 replicas, x1 = 128 - y12/2 and x3 = 64 - y23/2 fill sites 1 and 3, y12 + y23 = 128, and
  // the microbatches 4 x1 + 8 x3 + y12 + y23 = 1152 - 2 y12 - 4 y23 are at most 896 (y12 = 128).
  const problem = (microbatches: number) => ({
    microbatchesPer: [4, 8, 1, 1],
    gpusPer: [[16, 0, 0], [0, 0, 16], [8, 8, 0], [0, 8, 8]],
    siteGpus: [2048, 2048, 1024],
    replicas: 256,
    microbatches,
  });

  it('rules out one microbatch more than the most 256 replicas can carry, and not that most', () => {
    expect(lpRulesOut(problem(897))).toBe(true);
    expect(lpRulesOut(problem(896))).toBe(false);
  });

  it('rules out any batch when the columns cannot hold the replicas', () => {
    expect(lpRulesOut({ ...problem(1), replicas: 700 })).toBe(true); // at most 128 + 64 + 256 + 128 of them fit
    expect(lpRulesOut({ ...problem(1), microbatchesPer: [] })).toBe(true);
  });
});

/**
 * The bound by its definition, with javascript-lp-solver for the LP: the least finish-time
 * breakpoint at which dp replicas fitting the GPUs (and each layout's count what its sites can
 * hold) can carry M microbatches.
 */
function referenceLayoutBound(c: ConfigCoefficients, siteGpus: readonly number[]): number {
  // The replicas' finish times (1F1B and ZB-H1: with their stage lines, eq. 5.9a) as the bound takes them; the LP is what is checked.
  const finishS = replicaFinishS(c);
  const breakpoints = ascendingDistinct(c.layouts.flatMap((l, i) => l.fittingMicrobatches.map((k) => finishS(i, k))));
  for (const T of breakpoints) {
    const variables: Record<string, Record<string, number>> = {};
    c.layouts.forEach((l, i) => {
      const kmax = Math.max(0, ...l.fittingMicrobatches.filter((k) => finishS(i, k) <= T * (1 + 1e-12)));
      if (kmax > 0) variables[`x${i}`] = { microbatches: kmax, replicas: 1, [`most${i}`]: 1, ...Object.fromEntries([...l.gpusPerSite].map(([s, g]) => [`gpus${s}`, g])) };
    });
    // Each layout at most as many replicas as every site it uses can hold whole.
    const most = c.layouts.map((l, i) => [`most${i}`, { max: Math.min(c.dp, ...[...l.gpusPerSite].map(([s, g]) => Math.floor(siteGpus[s]! / g))) }]);
    const constraints = { replicas: { equal: c.dp }, ...Object.fromEntries(siteGpus.map((g, s) => [`gpus${s}`, { max: g }])), ...Object.fromEntries(most) };
    const result = lpSolver.Solve({ optimize: 'microbatches', opType: 'max', constraints, variables });
    if (result['feasible'] && Number(result['result']) >= c.totalMicrobatches - 1e-6) return T;
  }
  return Infinity;
}

describe('layout capacity bound', () => {
  it('equals the least breakpoint at which the reference LP carries the batch, on every candidate of the three-site fixture', () => {
    const scenario = parseScenario(readFixture('small/three-heterogeneous'), 'three');
    const siteGpus = scenario.sites.map((s) => s.gpus);
    let compared = 0;
    let aboveCapacityBound = 0;
    for (const candidate of enumerateCandidates(scenario, FULL_SPACE)) {
      if (!Number.isFinite(candidate.quickBoundS)) continue;
      const c = candidate.coefficients();
      const bound = layoutCapacityLowerBound(c, siteGpus);
      const reference = referenceLayoutBound(c, siteGpus);
      if (reference === Infinity) expect(bound).toBe(Infinity);
      else expect(bound).toBeCloseTo(reference, 9);
      if (bound > capacityLowerBound(c, siteGpus) * (1 + 1e-9)) aboveCapacityBound++;
      compared++;
    }
    expect(compared).toBeGreaterThan(10);
    // Heterogeneous sites: whole replicas cannot borrow a faster site's rate (6 of 20 measured).
    expect(aboveCapacityBound).toBeGreaterThan(0);
  });

  it('rules out the 3-site bench row\'s tp 8, pp 2 candidate up to 2.73 s, where the per-GPU capacity bound stops at 2.56 s', () => {
    // 70B over H100 (2,048), A100 (2,048) and B200 (1,024) sites, 1,024 microbatches: 192 whole
    // replicas on the fast sites could carry them all sooner, but dp 256 replicas must exist, and
    // those split onto the A100 site take half-replicas' GPUs from the fast sites.
    const scenario = parseScenario({
      version: 1, name: 'three regions',
      model: { name: 'llama3-70b', layers: 80, hidden: 8192, ffnHidden: 28672, heads: 64, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
      training: { seqLen: 8192, globalBatchSeqs: 1024 },
      search: { tp: [8], pp: [2], microBatchSeqs: [1], schedules: ['1f1b'], recompute: ['none'], zero: [1] },
      cluster: {
        sites: [{ name: 'a', gpuType: 'H100-SXM', gpus: 2048, gpusPerNode: 8 }, { name: 'b', gpuType: 'A100-80GB', gpus: 2048, gpusPerNode: 8 }, { name: 'c', gpuType: 'B200', gpus: 1024, gpusPerNode: 8 }],
        links: [{ between: ['a', 'b'], bandwidthGbps: 12800, distanceKm: 1200 }, { between: ['b', 'c'], bandwidthGbps: 12800, distanceKm: 1200 }],
      },
    }, 'three regions');
    const siteGpus = scenario.sites.map((s) => s.gpus);
    const candidate = enumerateCandidates(scenario, FULL_SPACE).find((c) => c.dp === 256)!;
    const c = candidate.coefficients();
    const bound = layoutCapacityLowerBound(c, siteGpus);
    expect(bound).toBeCloseTo(referenceLayoutBound(c, siteGpus), 9);
    expect(bound).toBeGreaterThan(2.73);
    expect(capacityLowerBound(c, siteGpus)).toBeLessThan(2.56);
  });
});
