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
 *
 * The integer programs are handed to a synchronous solver the caller supplies
 * ({@link IntegerFeasibility}; the planner's is HiGHS on its own thread, stopped by its time
 * limit): only its proof of infeasibility rules a hosting out, and "unknown" lets it pass.
 */
import type { ConfigCoefficients } from './coefficients';
import { MipBuilder, type Mip } from './mip';

/**
 * Decides whether an integer program (its objective ignored) has a solution within a time limit:
 * 'infeasible' only when proven, 'unknown' when the solver could not tell in time (or failed).
 * Synchronous, so that the ring-pattern search can ask it inside its branch and bound.
 */
export type IntegerFeasibility = (mip: Mip, timeLimitS: number) => 'feasible' | 'infeasible' | 'unknown';

/** Time one integer check may take, s; past it the hosting passes unasked. */
export const INTEGRAL_CHECK_TIME_LIMIT_S = 0.2;

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
 * when `solver` proves that no choice of dp whole replicas as above exists; true when one exists,
 * when the solver did not answer in time, or once this test has solved INTEGRAL_CHECKS_PER_SEARCH
 * programs. Answers are cached per hosting.
 */
export function integralHostingCheck(
  c: ConfigCoefficients, siteGpus: readonly number[], classOfStage: ArrayLike<number>, classCount: number, solver: IntegerFeasibility,
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
      const mip = wholeReplicaProgram(c, siteGpus, classOfStage, classCount, usable, hosting, true);
      answer = mip !== undefined && solver(mip, INTEGRAL_CHECK_TIME_LIMIT_S) !== 'infeasible';
      spentMs += Date.now() - started;
      cache.set(key, answer);
    }
    return answer;
  };
}

/**
 * Whether the candidate has any placement of dp whole replicas on its layouts that fit memory,
 * within the sites' GPUs and carrying the batch, whatever its hosting (false only when `solver`
 * proves there is none): without one, no hosting passes {@link integralHostingCheck}, and the
 * ring-pattern search can stop at once instead of asking it of every hosting.
 */
export function anyWholeReplicaPlacement(c: ConfigCoefficients, siteGpus: readonly number[], solver: IntegerFeasibility): boolean {
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.length > 0);
  const everySite = (1 << siteGpus.length) - 1;
  const hosting = Array.from({ length: c.stages.length }, () => everySite);
  const mip = wholeReplicaProgram(c, siteGpus, Array.from({ length: c.stages.length }, (_, j) => j), c.stages.length, usable, hosting, false);
  return mip !== undefined && solver(mip, INTEGRAL_CHECK_TIME_LIMIT_S) !== 'infeasible';
}

/**
 * The integer program of whole replicas for a hosting: x_l >= 0 integer replicas on each usable
 * layout whose stages all sit on sites hosting their classes; sum x_l = dp; the GPUs each site
 * gives them at most its own; the microbatch counts they can run reach the batch's M (sum of each
 * layout's most >= M, of its fewest <= M); with `everyHostingSite`, at least one replica of class
 * i on every site hosting it. Undefined when no layout is allowed (no placement at all).
 */
export function wholeReplicaProgram(
  c: ConfigCoefficients, siteGpus: readonly number[], classOfStage: ArrayLike<number>, classCount: number,
  usable: ConfigCoefficients['layouts'], hosting: ArrayLike<number>, everyHostingSite: boolean,
): Mip | undefined {
  const builder = new MipBuilder();
  const replicas: [number, number][] = [];
  const most: [number, number][] = [];
  const fewest: [number, number][] = [];
  const gpusBySite = siteGpus.map((): [number, number][] => []);
  const replicasByClassSite = new Map<number, [number, number][]>();
  usable.forEach((l, k) => {
    const stageSite = l.layout.stageSite;
    if (!layoutIsHosted(stageSite, hosting, classOfStage)) return;
    const x = builder.addColumn(`replicasOnLayout${k}`, 0, c.dp, { integer: true });
    replicas.push([x, 1]);
    most.push([x, Math.max(...l.fittingMicrobatches)]);
    fewest.push([x, Math.min(...l.fittingMicrobatches)]);
    for (const [site, gpus] of l.gpusPerSite) gpusBySite[site]!.push([x, gpus]);
    if (everyHostingSite) addClassSiteTerms(replicasByClassSite, stageSite, classOfStage, siteGpus.length, x);
  });
  if (replicas.length === 0) return undefined;
  builder.addRow('replicas', replicas, c.dp, c.dp);
  builder.addRow('mostMicrobatches', most, c.totalMicrobatches, Infinity);
  builder.addRow('fewestMicrobatches', fewest, -Infinity, c.totalMicrobatches);
  gpusBySite.forEach((terms, site) => builder.addRow(`gpusOfSite${site}`, terms, -Infinity, siteGpus[site]!));
  if (everyHostingSite) addHostingSiteRows(builder, replicasByClassSite, hosting, classCount, siteGpus.length);
  return builder.build();
}

/** Whether every stage of a layout (its sites, stage by stage) sits on a site hosting the stage's class. */
export function layoutIsHosted(stageSite: readonly number[], hosting: ArrayLike<number>, classOfStage: ArrayLike<number>): boolean {
  for (let j = 0; j < stageSite.length; j++) if ((hosting[classOfStage[j]!]! & (1 << stageSite[j]!)) === 0) return false;
  return true;
}

/** Adds column x (replicas of a layout) to the terms of every (class, site) pair the layout puts a stage on, keyed class x sites + site. */
export function addClassSiteTerms(terms: Map<number, [number, number][]>, stageSite: readonly number[], classOfStage: ArrayLike<number>, siteCount: number, x: number): void {
  const pairs = new Set<number>();
  for (let j = 0; j < stageSite.length; j++) pairs.add(classOfStage[j]! * siteCount + stageSite[j]!);
  for (const key of pairs) {
    const list = terms.get(key) ?? [];
    list.push([x, 1]);
    terms.set(key, list);
  }
}

/**
 * The rows "at least one replica of class i on every site hosting it". False when a hosting site
 * has no allowed layout putting the class there (its row is empty: no placement has this hosting).
 */
export function addHostingSiteRows(builder: MipBuilder, terms: ReadonlyMap<number, [number, number][]>, hosting: ArrayLike<number>, classCount: number, siteCount: number): boolean {
  let every = true;
  for (let i = 0; i < classCount; i++) {
    for (let site = 0; site < siteCount; site++) {
      if (!(hosting[i]! & (1 << site))) continue;
      const list = terms.get(i * siteCount + site) ?? [];
      if (list.length === 0) every = false;
      builder.addRow(`class${i}OnSite${site}`, list, 1, Infinity);
    }
  }
  return every;
}
