/**
 * The microbatch counts and chunk counts each pipeline schedule accepts (docs/cost-model.md §5):
 * Megatron-LM's interleaved groups, torch's zero-bubble rounds, the fewest microbatches per
 * replica, and the virtual stages per GPU.
 */
import type { PlanSpec } from './plan-schema';
import { isBidirectional, isChunked, isVShaped } from './schedule-chain';

/**
 * Megatron-LM's interleaved schedule runs microbatches in groups of N per model chunk
 * (`--microbatch-group-size-per-virtual-pipeline-stage`, default p) and refuses a last group of
 * fewer than p ("dependency bubbles"): N in [p, m] with m mod N = 0 or >= p. The smallest such N
 * (p when p divides m; it sets the warm-up, hence memory), or undefined when m < p or m is not
 * whole: then the schedule cannot run.
 */
export function interleavedGroupSize(microbatches: number, pp: number): number | undefined {
  if (!Number.isInteger(microbatches) || microbatches < pp) return undefined;
  for (let n = pp; n < microbatches; n++) {
    const last = microbatches % n;
    if (last === 0 || last >= pp) return n;
  }
  return microbatches;
}

/**
 * torch.distributed.pipelining's interleaved schedules (ScheduleInterleavedZeroBubble) run
 * microbatches in rounds: max(1, floor(m / p)) rounds of m / rounds microbatches each, and refuse
 * an m the rounds do not divide. The round size (the microbatches per chunk before the next
 * chunk's turn, Megatron's N), or undefined when m is not whole or the rounds do not divide it.
 */
export function zeroBubbleRoundSize(microbatches: number, pp: number): number | undefined {
  if (!Number.isInteger(microbatches) || microbatches < 1) return undefined;
  const rounds = Math.max(1, Math.floor(microbatches / pp));
  return microbatches % rounds === 0 ? microbatches / rounds : undefined;
}

/**
 * Why a replica with `microbatches` microbatches cannot run the schedule on `pp` stages, or
 * undefined when it can (docs/cost-model.md §5): Megatron's interleaving needs m >= p; torch's
 * interleaved zero-bubble needs m >= p (below that the cost model has no closed form) and m
 * divisible by its rounds; ZBV needs m >= 2p - 1 (torch pads fewer with idle slots, which the
 * closed form does not time); DualPipeV m >= 2p (torch refuses fewer); DualPipe m even and
 * m >= 2p (`dualpipe.py` asserts `num_chunks % 2 == 0 and num_chunks >= num_ranks * 2`).
 */
export function scheduleMicrobatchProblem(schedule: PlanSpec['schedule'], microbatches: number, pp: number): string | undefined {
  if (!Number.isInteger(microbatches)) return undefined;
  switch (schedule) {
    case 'interleaved':
      return interleavedGroupSize(microbatches, pp) === undefined ? `the interleaved schedule needs at least pp = ${pp} microbatches per replica` : undefined;
    case 'interleaved-zb':
      if (microbatches < pp) return `the interleaved zero-bubble schedule needs at least pp = ${pp} microbatches per replica`;
      return zeroBubbleRoundSize(microbatches, pp) === undefined
        ? `the interleaved zero-bubble schedule needs microbatches divisible by its max(1, floor(m / pp)) = ${Math.floor(microbatches / pp)} rounds`
        : undefined;
    case 'zbv':
      return microbatches < 2 * pp - 1 ? `the ZBV schedule needs at least 2 x pp - 1 = ${2 * pp - 1} microbatches per replica` : undefined;
    case 'dualpipev':
      return microbatches < 2 * pp ? `the DualPipeV schedule needs at least 2 x pp = ${2 * pp} microbatches per replica` : undefined;
    case 'dualpipe':
      if (pp % 2 !== 0) return `the DualPipe schedule needs an even pp, got ${pp}`;
      if (microbatches < 2 * pp) return `the DualPipe schedule needs at least 2 x pp = ${2 * pp} microbatches per replica`;
      return microbatches % 2 !== 0 ? `the DualPipe schedule needs an even number of microbatches per replica (half enter at each end), got ${microbatches}` : undefined;
    default:
      return undefined;
  }
}

/** The fewest microbatches a replica may run under the schedule: pp for the interleaved ones, 2pp - 1 for ZBV, 2pp for DualPipeV and DualPipe, else 1. */
export function fewestScheduleMicrobatches(schedule: PlanSpec['schedule'], pp: number): number {
  switch (schedule) {
    case 'interleaved':
    case 'interleaved-zb': return pp;
    case 'zbv': return 2 * pp - 1;
    case 'dualpipev':
    case 'dualpipe': return 2 * pp;
    default: return 1;
  }
}

/**
 * Chunks per GPU the schedule needs (docs/cost-model.md §5): the interleaved schedules 2 or more,
 * ZBV and DualPipeV exactly 2 (their V folds a chain of 2p virtual stages), DualPipe exactly 2
 * (stage j of one direction and stage pp - 1 - j of the other), the others 1. The problem, or
 * undefined.
 */
export function scheduleChunksProblem(plan: Pick<PlanSpec, 'schedule' | 'virtualStages'>): string | undefined {
  const v = plan.virtualStages;
  if (isBidirectional(plan.schedule)) return v === 2 ? undefined : `the ${plan.schedule} schedule needs exactly 2 virtual stages (stage j of one direction, stage pp - 1 - j of the other), got ${v}`;
  if (isVShaped(plan.schedule)) return v === 2 ? undefined : `the ${plan.schedule} schedule needs exactly 2 virtual stages (its V), got ${v}`;
  if (isChunked(plan.schedule)) return v >= 2 ? undefined : `the ${plan.schedule} schedule needs at least 2 virtual stages`;
  return v === 1 ? undefined : `${v} virtual stages need schedule 'interleaved' or 'interleaved-zb' (exactly 2: also 'zbv', 'dualpipev' or 'dualpipe'; got '${plan.schedule}')`;
}
