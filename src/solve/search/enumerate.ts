/**
 * Phase 1 of the search: the candidates of the restricted space, each with its quick bound
 * (docs/formulation.md §4, steps 1-2), and the state every later phase shares.
 */
import { candidateWithinBudget } from '../../formulation/gpu-budget';
import { scenarioForSpace } from '../../formulation/search-space';
import type { Scenario } from '../../model/scenario';
import { enumerateCandidates } from '../candidates';
import type { SearchState } from './state';
import type { SearchOptions } from './types';

/** Starts the search: its clock, its candidates and their quick bounds, and the memory reason if any candidate has one. */
export function enumeratePhase(given: Scenario, options: SearchOptions): SearchState {
  const startedMs = Date.now();
  // A framework's space (docs/formulation.md §8) also leaves out network settings it cannot apply.
  const scenario = scenarioForSpace(given, options.restriction);
  const candidates = enumerateCandidates(scenario, options.restriction).filter((c) => candidateWithinBudget(scenario, c.config, c.dp, options.gpuBudget));
  const state: SearchState = {
    scenario,
    options,
    framework: options.restriction.framework,
    startedMs,
    deadlineMs: startedMs + options.timeLimitS * 1000,
    // The required iteration time, with room for rounding: no plan slower than it fits.
    requiredS: (scenario.training.maxIterationTimeS ?? Infinity) * (1 + 1e-9),
    candidates,
    bounds: candidates.map((c) => c.quickBoundS),
    boundSources: candidates.map(() => 'quick' as const),
    incumbent: undefined,
    greedyByCandidate: new Map(),
    reasons: new Map(),
    faults: [],
    fallbacksUsed: new Set(),
    faultCounts: new Map(),
    mipsSolved: 0,
    pruned: 0,
    frameworkRejects: 0,
    timedOut: false,
    polishedS: 0,
    lastReportMs: 0,
  };
  const memoryBound = candidates.filter((c) => c.memoryNeedGiB !== undefined);
  if (memoryBound.length > 0) {
    const leanest = Math.min(...memoryBound.map((c) => c.memoryNeedGiB!));
    const roomiest = scenario.sites.reduce((a, b) => (b.memoryCapacityGiB > a.memoryCapacityGiB ? b : a));
    const reserve = roomiest.memoryReserveGiB > 0 ? ` (${roomiest.gpu.memoryGiB} less ${roomiest.memoryReserveGiB} reserved)` : '';
    state.reasons.set(`does not fit GPU memory even with one microbatch in flight: the leanest needs ${leanest.toFixed(1)} GiB per GPU, the most any site's GPUs may use is ${roomiest.memoryCapacityGiB}${reserve}`, memoryBound.length);
  }
  return state;
}
