/**
 * The HiGHS worker backend's controls the planner's MIP lanes rely on: an abort stops a solve
 * in progress (it answers with what it has, and the answer passes the check), and the random seed
 * is accepted.
 */
import { MipBuilder, type Mip } from '../src/formulation/mip';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import { checkSolution } from '../src/solve/mip-backend';

/** A market-split instance (Cornuéjols-Dawande): a few equality rows over 0/1 columns, notoriously hard for branch and bound. */
function marketSplit(rows: number, cols: number, seed: number): Mip {
  let state = seed;
  const random = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648; };
  const b = new MipBuilder();
  const x = Array.from({ length: cols }, (_, j) => b.addColumn(`x${j}`, 0, 1, { integer: true }));
  for (let i = 0; i < rows; i++) {
    const a = x.map(() => Math.floor(random() * 100));
    const rhs = Math.floor(a.reduce((sum, v) => sum + v, 0) / 2);
    const over = b.addColumn(`over${i}`, 0, Infinity, { cost: 1 });
    const under = b.addColumn(`under${i}`, 0, Infinity, { cost: 1 });
    b.addRow(`split${i}`, [...x.map((c, j) => [c, a[j]!] as const), [over, 1], [under, -1]], rhs, rhs);
  }
  return b.build();
}

describe('HiGHS worker backend', () => {
  const backend = new HighsWorkerBackend();
  afterAll(async () => { await backend.close(); });

  it('an abort stops a long solve early, and the answer still passes the check', async () => {
    const mip = marketSplit(5, 40, 7);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    const started = Date.now();
    const raw = await backend.solve(mip, { timeLimitS: 60, relativeGap: 0, abort: abort.signal, randomSeed: 2 });
    // Without the abort this instance runs into the 60 s limit (measured: still open after 20 s).
    expect(Date.now() - started).toBeLessThan(15_000);
    const solution = checkSolution('highs', mip, raw);
    expect(['feasible', 'no-solution']).toContain(solution.status);
    expect(solution.boundProven).toBe(true);
  }, 30_000);

  it('a signal aborted before the solve starts stops it at once; the next solve runs normally', async () => {
    const abort = new AbortController();
    abort.abort();
    const started = Date.now();
    await backend.solve(marketSplit(5, 40, 11), { timeLimitS: 60, relativeGap: 0, abort: abort.signal });
    expect(Date.now() - started).toBeLessThan(15_000);
    // Small enough to finish, but its LP bound is 0 and its optimum 8: only branch and bound, with
    // the interrupt callback called along the way, proves it. A stop flag left set would end it early.
    const next = marketSplit(3, 12, 7);
    const solution = checkSolution('highs', next, await backend.solve(next, { timeLimitS: 20, relativeGap: 0 }));
    expect(solution.status).toBe('optimal');
    expect(solution.objective).toBeCloseTo(8, 6);
  }, 30_000);
});

/**
 * The objective cutoff (HiGHS's objective_bound) the planner passes at its incumbent: below the
 * optimum it must not change the answer; at or under it, the backend claims no solution and no
 * bound past the cutoff (HiGHS itself may return a solution above the cutoff labelled optimal,
 * with its bound at that solution, while better ones exist: seen on a fixture's baseline MIP).
 */
describe('HiGHS worker backend with an objective cutoff', () => {
  const backend = new HighsWorkerBackend();
  afterAll(async () => { await backend.close(); });
  // Optimum 8 (see above): only branch and bound proves it.
  const mip = marketSplit(3, 12, 7);

  it('a cutoff above the optimum leaves the answer as without it', async () => {
    const solution = checkSolution('highs', mip, await backend.solve(mip, { timeLimitS: 20, relativeGap: 0, objectiveCutoff: 8.5 }));
    expect(solution.status).toBe('optimal');
    expect(solution.objective).toBeCloseTo(8, 6);
    expect(solution.dualBound).toBeLessThanOrEqual(8 + 1e-6);
  }, 30_000);

  it.each([3, 7.5])('a cutoff of %d (below the optimum): no solution, and no bound past the cutoff', async (cutoff) => {
    const solution = checkSolution('highs', mip, await backend.solve(mip, { timeLimitS: 20, relativeGap: 0, objectiveCutoff: cutoff }));
    expect(['infeasible', 'no-solution']).toContain(solution.status);
    expect(solution.values).toBeUndefined();
    expect(solution.boundProven).toBe(true);
    expect(solution.dualBound).toBeLessThanOrEqual(cutoff);
  }, 30_000);
});

/**
 * The objective target (HiGHS's objective_target) the planner gives its least-ring-pattern MIP: the
 * solve ends at its first solution at or below the target, which it answers as 'feasible'; a target
 * under the optimum changes nothing.
 */
describe('HiGHS worker backend with an objective target', () => {
  const backend = new HighsWorkerBackend();
  afterAll(async () => { await backend.close(); });

  it('a target above the optimum ends a long solve at its first solution at or below it', async () => {
    // Without the target this instance runs into the 60 s limit (see the abort test above); any 0/1
    // assignment with its slack columns is a solution, so one under the target comes at once.
    const mip = marketSplit(5, 40, 7);
    const started = Date.now();
    const solution = checkSolution('highs', mip, await backend.solve(mip, { timeLimitS: 60, relativeGap: 0, objectiveTarget: 1e6 }));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(solution.status).toBe('feasible');
    expect(solution.objective).toBeLessThanOrEqual(1e6);
    expect(solution.dualBound).toBeLessThanOrEqual(solution.objective!);
  }, 30_000);

  it('a target below the optimum leaves the answer as without it', async () => {
    const mip = marketSplit(3, 12, 7);
    const solution = checkSolution('highs', mip, await backend.solve(mip, { timeLimitS: 20, relativeGap: 0, objectiveTarget: 3 }));
    expect(solution.status).toBe('optimal');
    expect(solution.objective).toBeCloseTo(8, 6);
  }, 30_000);
});
