/**
 * Where each virtual stage of the chain runs, and which schedules split the backward. Most
 * schedules loop the chain over the GPUs (virtual stage q = chunk x p + stage: Megatron-LM's and
 * torchtitan's interleaving); the V-shaped ones (ZBV, DualPipeV: two chunks per GPU) fold it, GPU
 * j holding virtual stages j and 2p - 1 - j, so that the first and the last virtual stage, the
 * embedding and the loss, are both on GPU 0 (Qi et al. 2024, "Pipeline Parallelism with
 * Controllable Memory", §3; torch.distributed.pipelining `generate_stage_to_rank_mapping(style="v")`).
 * Pure; docs/cost-model.md §5.
 */
import type { Schedule } from './plan-schema';

/** Schedules whose chain is folded into a V over the GPUs (exactly two chunks per GPU). */
export const V_SHAPED_SCHEDULES: readonly Schedule[] = ['zbv', 'dualpipev'];

/** Schedules that split each backward into an input-gradient pass B and a weight-gradient pass W. */
export const SPLIT_BACKWARD_SCHEDULES: readonly Schedule[] = ['zb-h1', 'zbv', 'interleaved-zb', 'dualpipev'];

/** Schedules that run more than one model chunk per GPU (virtualStages > 1). */
export const CHUNKED_SCHEDULES: readonly Schedule[] = ['interleaved', 'interleaved-zb', 'zbv', 'dualpipev'];

export const isVShaped = (schedule: Schedule): boolean => V_SHAPED_SCHEDULES.includes(schedule);
export const splitsBackward = (schedule: Schedule): boolean => SPLIT_BACKWARD_SCHEDULES.includes(schedule);
export const isChunked = (schedule: Schedule): boolean => CHUNKED_SCHEDULES.includes(schedule);

/** The virtual stage (position on the chain) of chunk `chunk` of stage `stage` of `p`. */
export function virtualStageOf(schedule: Schedule, stage: number, chunk: number, p: number): number {
  if (isVShaped(schedule)) return chunk % 2 === 0 ? chunk * p + stage : chunk * p + p - 1 - stage;
  return chunk * p + stage;
}

/** The stage (GPU of the pipeline) and chunk that run virtual stage `q` of a chain over `p` stages. */
export function stageOfVirtualStage(schedule: Schedule, q: number, p: number): { readonly stage: number; readonly chunk: number } {
  const chunk = Math.floor(q / p);
  const r = q % p;
  return { stage: isVShaped(schedule) && chunk % 2 === 1 ? p - 1 - r : r, chunk };
}

/** The stage that holds the output layer and loss (the last virtual stage): GPU 0 for a V, the last GPU otherwise. */
export const outputStageOf = (schedule: Schedule | undefined, pp: number): number => (schedule !== undefined && isVShaped(schedule) ? 0 : pp - 1);
