/**
 * Microbatch counting (docs/formulation.md §1, layer 3): which microbatch counts a replica may run
 * when dp replicas share the batch's M microbatches, and the fewest the busiest one runs. The
 * coefficients, the quick and closed-form bounds and the ring-pattern bound count with these.
 */
import { fewestScheduleMicrobatches } from '../model/pipeline-schedule-rules';
import { divisors, type ParallelConfig } from './search-space';

/**
 * Microbatch counts a replica may run when dp replicas share M microbatches: divisors of M
 * within a factor 4 of the even share M/dp (uneven shares let faster sites do more), and at
 * least `fewest` (see {@link fewestMicrobatches}). `divisorsOfTotal` (divisors of M, ascending)
 * may be passed when the caller has them.
 */
export function microbatchCounts(totalMicrobatches: number, dp: number, fewest = 1, divisorsOfTotal: readonly number[] = divisors(totalMicrobatches)): number[] {
  const even = totalMicrobatches / dp;
  return divisorsOfTotal.filter((k) => k >= fewest && k >= even / 4 && k <= even * 4 && k <= totalMicrobatches - (dp - 1));
}

/** The fewest microbatches a replica may run: pp for the interleaved schedules, 2pp - 1 for ZBV, else 1 (fewestScheduleMicrobatches). */
export const fewestMicrobatches = (config: Pick<ParallelConfig, 'schedule' | 'pp'>): number => fewestScheduleMicrobatches(config.schedule, config.pp);

/**
 * The fewest microbatches the busiest replica can run: replicas average M/dp, so one runs at
 * least that many, and replica counts come from {@link microbatchCounts}. Infinity when none fits.
 * That is the least divisor of M at or above M/dp if it is within the counts' upper limits (a
 * larger divisor cannot be: the limits are upper bounds, and M/dp is above the lower one).
 */
export function busiestReplicaMicrobatches(totalMicrobatches: number, dp: number, fewest = 1, divisorsOfTotal: readonly number[] = divisors(totalMicrobatches)): number {
  const even = totalMicrobatches / dp;
  for (const k of divisorsOfTotal) {
    if (k < even || k < fewest) continue;
    return k <= even * 4 && k <= totalMicrobatches - (dp - 1) ? k : Infinity;
  }
  return Infinity;
}
