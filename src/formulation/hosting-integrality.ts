/**
 * Whole replicas for a class hosting (docs/formulation.md §4, step 3(d), "integral replicas"):
 * the ring-pattern bound's GPU test (Gale's condition) lets replicas be fractional, so it admits
 * hostings no placement of whole replicas has. On four sites of 4,096 GPUs, 256 replicas of 32
 * two-GPU stages with every replica's first 8 stages on one site leave 85 1/3 replicas' last 24
 * stages to each of the other three, which whole replicas cannot do (85 x 48 GPUs leave 16 idle
 * and one replica without a site). This module asks the placement's own integer question of a
 * complete hosting, relaxed to what decides it: do dp whole replicas, each on one of the
 * candidate's layouts whose stages sit on sites hosting their classes, fit the sites' GPUs,
 * carry the batch, and put at least one replica of every class on every site the hosting names?
 * Every placement with exactly that hosting is such a choice, so a hosting without one is no
 * placement's, and the least over the hostings left still bounds every placement.
 */
import type { ConfigCoefficients } from './coefficients';
import { lpSolver } from './lp-solver';

/**
 * Time one integer check may take, ms. The solver stops at its timeout with no solution and says
 * "infeasible", so only an answer given before 90% of it rules a hosting out.
 */
export const INTEGRAL_CHECK_TIMEOUT_MS = 200;

/**
 * Integer programs one ring-pattern search may solve; past them a hosting is let pass unasked
 * (the bound stays a bound, only less tight). A count, not a time, so that the bound does not
 * depend on the machine's load. The planner-scaling rows' bound-holding candidates ask 110-140;
 * a search over many hostings that whole replicas rule out stops there (about 1 ms each).
 */
export const INTEGRAL_CHECKS_PER_SEARCH = 250;

/** A safety net on a loaded machine: the checks of one search stop after this much solver time in all, ms. */
export const INTEGRAL_CHECKS_MAX_MS = 2000;

/**
 * For candidate `c` on sites of `siteGpus` GPUs, whose stage j belongs to class
 * `classOfStage[j]`: a test of a complete hosting (site bit mask per class) that is false only
 * when no choice of dp whole replicas as above exists, proven by the solver within its time;
 * true when one exists, when the solver did not answer in time, or once this test has solved
 * INTEGRAL_CHECKS_PER_SEARCH programs. Answers are cached per hosting.
 */
export function integralHostingCheck(
  c: ConfigCoefficients, siteGpus: readonly number[], classOfStage: ArrayLike<number>, classCount: number,
): (hosting: ArrayLike<number>) => boolean {
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.length > 0);
  const cache = new Map<string, boolean>();
  let solved = 0;
  let spentMs = 0;
  return (hosting) => {
    const key = Array.prototype.join.call(hosting, ',');
    let answer = cache.get(key);
    if (answer === undefined) {
      if (solved >= INTEGRAL_CHECKS_PER_SEARCH || spentMs >= INTEGRAL_CHECKS_MAX_MS) return true;
      solved++;
      const started = Date.now();
      answer = wholeReplicasFit(c, siteGpus, classOfStage, classCount, usable, hosting, true);
      spentMs += Date.now() - started;
      cache.set(key, answer);
    }
    return answer;
  };
}

/**
 * Whether the candidate has any placement of dp whole replicas on its layouts that fit memory,
 * within the sites' GPUs and carrying the batch, whatever its hosting (false only when proven
 * within the solver's time): without one, no hosting passes {@link integralHostingCheck}, and the
 * ring-pattern search can stop at once instead of asking it of every hosting.
 */
export function anyWholeReplicaPlacement(c: ConfigCoefficients, siteGpus: readonly number[]): boolean {
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.length > 0);
  const everySite = (1 << siteGpus.length) - 1;
  const hosting = Array.from({ length: c.stages.length }, () => everySite);
  return wholeReplicasFit(c, siteGpus, Array.from({ length: c.stages.length }, (_, j) => j), c.stages.length, usable, hosting, false);
}

function wholeReplicasFit(
  c: ConfigCoefficients, siteGpus: readonly number[], classOfStage: ArrayLike<number>, classCount: number,
  usable: ConfigCoefficients['layouts'], hosting: ArrayLike<number>, everyHostingSite: boolean,
): boolean {
  const variables: Record<string, Record<string, number>> = {};
  const ints: Record<string, 1> = {};
  let any = false;
  usable.forEach((l, k) => {
    const stageSite = l.layout.stageSite;
    for (let j = 0; j < stageSite.length; j++) if ((hosting[classOfStage[j]!]! & (1 << stageSite[j]!)) === 0) return;
    // Objective `one` (a constant count) kept apart from the constraints' names: the solver
    // misreads a constraint that shares the objective's name.
    const column: Record<string, number> = { one: 1, replicas: 1, mostMicrobatches: Math.max(...l.fittingMicrobatches), fewestMicrobatches: Math.min(...l.fittingMicrobatches) };
    for (const [site, gpus] of l.gpusPerSite) column[`gpus${site}`] = gpus;
    for (let j = 0; j < stageSite.length; j++) column[`class${classOfStage[j]}site${stageSite[j]}`] = 1;
    variables[`x${k}`] = column;
    ints[`x${k}`] = 1;
    any = true;
  });
  if (!any) return false;
  const constraints: Record<string, { min?: number; max?: number; equal?: number }> = {
    replicas: { equal: c.dp },
    mostMicrobatches: { min: c.totalMicrobatches },
    fewestMicrobatches: { max: c.totalMicrobatches },
  };
  siteGpus.forEach((gpus, site) => { constraints[`gpus${site}`] = { max: gpus }; });
  if (everyHostingSite) {
    for (let i = 0; i < classCount; i++) {
      for (let site = 0; site < siteGpus.length; site++) if (hosting[i]! & (1 << site)) constraints[`class${i}site${site}`] = { min: 1 };
    }
  }
  const started = Date.now();
  const result = lpSolver.Solve({ optimize: 'one', opType: 'max', constraints, variables, ints, options: { timeout: INTEGRAL_CHECK_TIMEOUT_MS, tolerance: 0 } });
  if (result['feasible'] === true) return true;
  // Trusted only when the solver ended before its time ran out (at its timeout it reports no solution).
  return Date.now() - started >= 0.9 * INTEGRAL_CHECK_TIMEOUT_MS;
}
