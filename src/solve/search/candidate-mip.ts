/**
 * One candidate's turn in the MIP phase (docs/formulation.md §4, step 4): the polished greedy
 * start and the least-ring-pattern MIP before a large MIP, then its placement MIP with F0 at the
 * threshold, whose answer is adopted and whose dual bound is recorded.
 */
import { planOfGroups, type ConfigCoefficients } from '../../formulation/coefficients';
import { layoutCapacityLowerBound } from '../../formulation/layout-capacity-bound';
import { buildPlacementMip } from '../../formulation/placement-mip';
import type { MipBackend } from '../mip-backend';
import { adoptMipPlan, cutoffFor, noneFaster, polishGreedy, recordMipBound } from './adopt';
import { consider } from './consider';
import { solveWithFallbacks } from './fallbacks';
import { runningSolves, type MipQueue } from './mip-queue';
import { globalBound, greedyOf, haveFirstFit, report, threshold, type SearchState } from './state';

/**
 * The longest a least-ring-pattern MIP runs (405B 4-site row: its gap-closing placement after
 * 0.9-1.0 s warm and 1.5 s in a fresh process, where HiGHS runs on WebAssembly's baseline tier;
 * with the 1.2 s it had there, the search went on to the full MIP, whose placements the cost model
 * times 1.1-1.2% above the bound, and ended at its 7 s limit).
 */
const LEAST_PATTERN_MIP_MAX_S = 3;

/**
 * Solves candidate i's MIP on `primary` (then the fallback chain); 'stop' ends the MIP phase.
 * With `seed`, a second solve of a MIP already in flight, on its own (no fallbacks): whichever
 * finishes first stops the other, which answers with what it has.
 */
export async function solveCandidateMip(state: SearchState, queue: MipQueue, position: number, i: number, primary: MipBackend, seed?: number): Promise<'stop' | undefined> {
  const { scenario, options, bounds } = state;
  const coefficients = seed === undefined ? queue.waiting.get(i)! : queue.inFlight.get(i)!.coefficients;
  if (haveFirstFit(state)) return 'stop';
  if (Date.now() >= state.deadlineMs) { state.timedOut = true; return 'stop'; }
  queue.waiting.delete(i);
  // Before a large MIP, this thread polishes the candidate's greedy placement on the cost model
  // (§4, placement polish): a start that the MIP's view of cross-site rings cannot mislead, and
  // whose plan may prune the candidate before its MIP starts (measured against polishing while
  // the MIP runs: MoE 4-site row 1.60-1.97 s fresh, no MIP, against 2.26-2.66 s with one; MoE
  // and 405B 2-site rows no MIP either; 3-site and 405B 4-site rows the same within noise).
  if (seed === undefined && queue.isLarge.get(i) && bounds[i]! < threshold(state)) {
    try {
      polishGreedy(state, i, coefficients);
    } catch (error) {
      // A heuristic's failure must not lose the candidate: recorded, and the search goes on.
      state.faults.push(`placement polish: ${error instanceof Error ? error.message : String(error)}`);
    }
    stopSolvesNoLongerNeeded(state, queue);
    if (bounds[i]! < threshold(state) && Date.now() < state.deadlineMs && !haveFirstFit(state)) {
      // A third of the time left, at most LEAST_PATTERN_MIP_MAX_S: it stops at its first placement
      // that would close the gap, so the limit binds only when it has none (or, when another
      // candidate holds the global bound down, when none of this candidate's can close it).
      await solveLeastPatternMip(state, queue, i, coefficients, primary, Math.max(0.05, Math.min(LEAST_PATTERN_MIP_MAX_S, (state.deadlineMs - Date.now()) / 3000)));
      stopSolvesNoLongerNeeded(state, queue);
    }
  }
  if (bounds[i]! >= threshold(state)) { if (seed === undefined) state.pruned++; return undefined; }
  // Only placements faster than the threshold matter: slower (layout, microbatch) choices are left
  // out (F0), so an answer bounds this candidate by min(its dual bound, the threshold).
  const fasterThanS = threshold(state);
  const placement = buildPlacementMip(scenario, coefficients, bounds[i]!, fasterThanS, options.gpuBudget);
  if (!placement) { noneFaster(state, i, fasterThanS); return undefined; }
  // One MIP may use a fifth of what is left (at least 0.25 s), so a hard one cannot starve the
  // rest; with fewer than five MIPs to go, an equal share of what is left.
  const leftS = (state.deadlineMs - Date.now()) / 1000;
  const share = Math.min(5, Math.max(1, queue.order.length - position));
  const remainingS = Math.max(0.05, Math.min(leftS, Math.max(0.25, leftS / share)));
  // No MIP start: measured, a greedy start made HiGHS slower on these models (1.1 s vs 0.55 s).
  const stopAt = Number.isFinite(threshold(state)) ? threshold(state) : undefined;
  // HiGHS's callbacks keep the progress display alive during a long MIP.
  const heartbeat = options.onProgress ? () => report(state) : undefined;
  // The candidate that holds the global bound decides the gap: its MIP's own 1% would leave
  // placements whose cost-model time is above the MIP's (the MIP is a relaxation), so it is
  // solved four times tighter.
  const holdsBound = bounds[i]! <= globalBound(state);
  const mipOptions = { ...options, gap: holdsBound ? options.gap / 4 : options.gap, backends: seed === undefined ? [primary, ...options.backends.slice(1)] : [primary] };
  const done = seed === undefined ? new AbortController() : queue.inFlight.get(i)!.done;
  if (seed === undefined) queue.inFlight.set(i, { position, coefficients, done, helped: false });
  const solving = solveWithFallbacks(placement, mipOptions, { timeLimitS: remainingS, stopWhenBoundAtLeast: stopAt, onProgress: heartbeat, haveIncumbent: state.incumbent !== undefined, randomSeed: seed, abort: done.signal, objectiveCutoff: cutoffFor(state, placement) }, state);
  const solved = await solving;
  // A conclusive answer (solved to the gap, infeasible, or bound past the threshold) stops the
  // other copy of this MIP; a copy that merely failed or ran out of time leaves the other running.
  const conclusive = solved !== undefined && (solved.solution.status === 'optimal' || solved.solution.status === 'infeasible'
    || (stopAt !== undefined && solved.solution.boundProven && solved.solution.dualBound >= stopAt));
  if (conclusive || seed === undefined) done.abort();
  if (seed === undefined) { queue.inFlight.delete(i); state.mipsSolved++; }
  try {
    if (!solved || !solved.solution.values) {
      // Every backend failed or found nothing: keep the closed-form bound, and try the heuristic here.
      const groups = greedyOf(state, i, coefficients);
      if (groups) consider(state, planOfGroups(coefficients, scenario, groups), 'heuristic');
      if (!solved) return undefined;
    }
    const { solution, engine } = solved;
    recordMipBound(state, i, fasterThanS, placement, solution);
    if (solution.status === 'infeasible') return undefined;
    if (solution.values) adoptMipPlan(state, coefficients, placement, solution, engine);
    if (!queue.solved.some((m) => m.index === i)) queue.solved.push({ index: i, coefficients });
    report(state);
    return undefined;
  } finally {
    stopSolvesNoLongerNeeded(state, queue);
  }
}

/** Stops MIPs still running whose candidate a better incumbent has pruned (or all, once feasibility mode has its plan). */
function stopSolvesNoLongerNeeded(state: SearchState, queue: MipQueue): void {
  for (const [j, stop] of runningSolves(queue)) if (haveFirstFit(state) || state.bounds[j]! >= threshold(state)) stop.abort();
}

/**
 * A plan from the MIP over the layouts that start where a least ring pattern hosts the first
 * stage class and end where it hosts the last (§4, step 4): a heuristic, its dual bound covers
 * only those layouts and is not recorded. On the 405B 4-site row (21 of 88 layouts, all
 * replicas starting at one site) its placement closes the gap (0.76%), so the full MIP is never
 * built, once it has had its 0.9-1.0 s warm or 1.5 s in a fresh process (LEAST_PATTERN_MIP_MAX_S).
 */
async function solveLeastPatternMip(state: SearchState, queue: MipQueue, i: number, coefficients: ConfigCoefficients, primary: MipBackend, timeLimitS: number): Promise<void> {
  const { scenario, options, bounds } = state;
  const least = queue.lifted.get(i)?.leastHosting;
  if (!least) return;
  const layouts = coefficients.layouts.filter((l) => least.firstClassSites & (1 << l.layout.stageSite[0]!) && least.lastClassSites & (1 << l.layout.stageSite[l.layout.stageSite.length - 1]!));
  if (layouts.length === 0 || layouts.length * 2 > coefficients.layouts.length) return;
  const restricted = { ...coefficients, layouts };
  // Nothing to gain when these layouts alone cannot beat the threshold (the 3-site row's four
  // restricted MIPs, 0.3 s of cold HiGHS, all proved that).
  if (layoutCapacityLowerBound(restricted, scenario.sites.map((site) => site.gpus), bounds[i]!, threshold(state)) >= threshold(state)) return;
  const placement = buildPlacementMip(scenario, restricted, bounds[i]!, threshold(state), options.gpuBudget);
  if (!placement) return;
  // Its plan is all it is for: it stops at the first placement whose MIP time would close the
  // search's gap against today's bound (the cost model then times it; the MIP is a relaxation, so
  // the check may still find it short).
  const closingS = options.gap < 1 ? globalBound(state) / (1 - options.gap) : undefined;
  // Stopped with what it has once a plan from elsewhere prunes its candidate (stopSolvesNoLongerNeeded).
  const stop = new AbortController();
  queue.leastPatternSolves.set(i, stop);
  const solved = await solveWithFallbacks(placement, { ...options, gap: options.gap / 4, backends: [primary] },
    { timeLimitS, stopWhenBoundAtLeast: Number.isFinite(threshold(state)) ? threshold(state) : undefined, haveIncumbent: true, objectiveCutoff: cutoffFor(state, placement), objectiveTarget: closingS, abort: stop.signal }, state)
    .finally(() => queue.leastPatternSolves.delete(i));
  if (solved?.solution.values) adoptMipPlan(state, restricted, placement, solved.solution, `${solved.engine} (layouts of a least ring pattern)`);
}
