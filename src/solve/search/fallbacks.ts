/**
 * One placement MIP solved on a backend chain: the first backend that answers (and passes the
 * check) wins, faults are recorded, and a backend that fails twice is not asked again.
 */
import type { PlacementMip } from '../../formulation/placement-mip';
import { BackendFault, checkSolution, type MipBackend, type MipSolution, type MipSolveOptions } from '../mip-backend';
import type { SearchState } from './state';

/** Seconds any backend may overrun its time limit before the planner gives up on it. */
const HARD_LIMIT_GRACE_S = 5;

/** The limits of one solve on each backend of the chain. */
export interface MipLimits {
  readonly timeLimitS: number;
  readonly stopWhenBoundAtLeast?: number;
  readonly onProgress?: MipSolveOptions['onProgress'];
  readonly haveIncumbent?: boolean;
  readonly randomSeed?: number;
  readonly abort?: AbortSignal;
  readonly objectiveCutoff?: number;
  readonly objectiveTarget?: number;
}

/** The backend chain and gap of one solve (the first backend is the lane's). */
export interface MipChain {
  readonly backends: readonly MipBackend[];
  readonly gap: number;
  readonly backendGraceS?: number;
}

/** The answer of the chain, with the engine that gave it; undefined when every backend failed without a bound. */
export interface ChainAnswer {
  readonly solution: MipSolution;
  readonly engine: string;
}

/** Rejects with a BackendFault if `promise` has not settled within `seconds`. */
function withHardLimit<T>(backend: string, promise: Promise<T>, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BackendFault(backend, `no answer within ${seconds.toFixed(1)} s`)), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function solveWithFallbacks(
  placement: PlacementMip,
  chain: MipChain,
  limits: MipLimits,
  log: Pick<SearchState, 'faults' | 'fallbacksUsed' | 'faultCounts'>,
): Promise<ChainAnswer | undefined> {
  const { faults, fallbacksUsed, faultCounts } = log;
  let bestBound = -Infinity;
  for (let i = 0; i < chain.backends.length; i++) {
    // Once stopped on purpose, no fallback is wanted.
    if (i > 0 && limits.abort?.aborted) break;
    const backend = chain.backends[i]!;
    // A backend that has failed twice in this search is not asked again.
    if ((faultCounts.get(backend) ?? 0) >= 2 && i < chain.backends.length - 1) continue;
    if (i > 0) fallbacksUsed.add(backend.name);
    try {
      const raw = await withHardLimit(backend.name, backend.solve(placement.mip, { ...limits, relativeGap: chain.gap }), limits.timeLimitS + (chain.backendGraceS ?? HARD_LIMIT_GRACE_S));
      const solution = checkSolution(backend.name, placement.mip, raw);
      if (solution.boundProven) bestBound = Math.max(bestBound, solution.dualBound);
      // Stopped on purpose (the other copy answered, or the candidate was pruned): an answer, not a fault.
      if (limits.abort?.aborted) return { solution, engine: backend.name };
      if (solution.status === 'no-solution') {
        // Stopped because its bound reached the pruning threshold: an answer, not a fault.
        if (limits.stopWhenBoundAtLeast !== undefined && solution.boundProven && solution.dualBound >= limits.stopWhenBoundAtLeast) return { solution, engine: backend.name };
        // Out of time without a placement. With an incumbent in hand this candidate keeps its
        // bound and the search moves on (the same solver again would spend the same time for the
        // same answer); without one, the fallback chain goes on to find a plan.
        if (limits.haveIncumbent && solution.boundProven) return { solution, engine: backend.name };
        faults.push(`${backend.name}: no solution within the limit`);
        continue;
      }
      return { solution: { ...solution, dualBound: Math.max(bestBound, solution.boundProven ? solution.dualBound : -Infinity), boundProven: solution.boundProven || bestBound > -Infinity }, engine: backend.name };
    } catch (error) {
      // Anything a backend throws is its fault: record it and fall back.
      const message = error instanceof Error ? error.message : String(error);
      faults.push(error instanceof BackendFault ? message : `${backend.name}: ${message}`);
      faultCounts.set(backend, (faultCounts.get(backend) ?? 0) + 1);
    }
  }
  return bestBound > -Infinity ? { solution: { status: 'no-solution', dualBound: bestBound, boundProven: true }, engine: 'none' } : undefined;
}
