/**
 * The span floor of 1F1B and ZB-H1 (docs/cost-model.md eq. 5.11): the op-by-op span itself, taken
 * at times no larger than a plan's, is a lower bound on that plan's span. The span is the longest
 * path of a graph fixed by the schedule, p, m and where the chain crosses sites (each op after its
 * stage's previous op and its input; each send after the previous send of its link direction),
 * whose weights are the op times, link steps and latencies; so it never falls when any of them
 * grows, nor when a microbatch is added (the order of m microbatches is that of m + 1 with the
 * last microbatch's ops left out). test/span-floor.test.ts checks both properties against the
 * simulator.
 */
import { pipelineSpanS } from './pipeline-span';
import type { ChainBoundary, RoundTripProfile } from './pipeline-round-trip';
import type { PlanSpec } from './plan-schema';

/**
 * Eq. 5.11 of a replica whose stage times and crossings are at least `profile`'s (eq. 5.8's
 * profile: forward, the backward the chain waits for, ZB-H1's weight pass, per boundary latency
 * plus link step) with at least `m` microbatches: the span at those times, each crossing taken as
 * a latency of its latency plus link step on an idle link (a real send ends no earlier than its
 * ready time plus its step, and arrives its latency later). 0 without a profile, its schedule or
 * a microbatch.
 */
export function spanFloorS(profile: RoundTripProfile | undefined, m: number): number {
  if (!profile) return 0;
  const hops: ChainBoundary[] = [];
  profile.crossS.forEach((crossS, q) => { if (crossS > 0) hops.push({ virtualStage: q, latencyS: crossS, stepS: 0 }); });
  return queuedSpanFloorS(profile, hops, m);
}

/**
 * Eq. 5.11 with the crossings' link steps as queues: the span at `profile`'s stage times with the
 * crossings `hops` (each a latency and a link step per send, the sends of one direction one after
 * the other, as the simulator runs them); `profile.crossS` is not read. A lower bound on the span
 * of every replica with at least `m` microbatches, stage times at least the profile's and, at each
 * of these boundaries, a latency and a link step at least the hop's (the span never falls when a
 * link step grows, nor when a send waits behind another). At least {@link spanFloorS} with each
 * crossing's latency plus link step on an idle link. 0 without a profile, its schedule or a microbatch.
 */
export function queuedSpanFloorS(profile: RoundTripProfile | undefined, hops: readonly ChainBoundary[], m: number): number {
  if (!profile?.schedule || !Number.isInteger(m) || m < 1) return 0;
  return pipelineSpanS({
    schedule: profile.schedule, virtualStages: 1, microbatches: m,
    forwardS: profile.forwardS, backwardS: profile.backS.map((b, j) => b + profile.weightS[j]!), hops,
  });
}

/**
 * Eq. 5.11 for a replica of k microbatches whose stage j takes at least `fastestS[j]` with a
 * forward share among `forwardShares[j]` (one per site it may run on), without crossings: the
 * span with each forward at its least share and each backward at its largest (each op time at
 * most any placement's). The quick bound of 1F1B and ZB-H1 takes it beside eq. 5.9a's lines.
 */
export function spanFloorAtLeastS(
  plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>, fastestS: readonly number[], forwardShares: readonly (readonly number[])[], k: number,
): number {
  if (!(k < Infinity)) return Infinity;
  if ((plan.schedule !== '1f1b' && plan.schedule !== 'zb-h1') || plan.virtualStages !== 1) return 0;
  const split = plan.schedule === 'zb-h1';
  const forwardS = fastestS.map((s, j) => s * Math.min(...forwardShares[j]!));
  const backS = fastestS.map((s, j) => (s * (1 - Math.max(...forwardShares[j]!))) / (split ? 2 : 1));
  const profile: RoundTripProfile = { forwardS, backS, weightS: split ? backS : backS.map(() => 0), crossS: new Array<number>(Math.max(0, fastestS.length - 1)).fill(0), schedule: plan.schedule };
  return spanFloorS(profile, k);
}
