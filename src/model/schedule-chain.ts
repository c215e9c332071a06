/**
 * Where each virtual stage of the chain runs, and which schedules split the backward. Most
 * schedules loop the chain over the GPUs (virtual stage q = chunk x p + stage: Megatron-LM's and
 * torchtitan's interleaving); the V-shaped ones (ZBV, DualPipeV: two chunks per GPU) fold it, GPU
 * j holding virtual stages j and 2p - 1 - j, so that the first and the last virtual stage, the
 * embedding and the loss, are both on GPU 0 (Qi et al. 2024, "Pipeline Parallelism with
 * Controllable Memory", §3; torch.distributed.pipelining `generate_stage_to_rank_mapping(style="v")`).
 * The bidirectional DualPipe (DeepSeek-V3 report §3.2.1; deepseek-ai/DualPipe `dualpipe.py`) runs
 * two chains of p model stages, one per direction: chunk 0 of GPU j is stage j of direction 0
 * (virtual stage j), chunk 1 is stage p - 1 - j of direction 1 (virtual stage 2p - 1 - j), so its
 * virtual stages are numbered as the V's, but the chain ends at p - 1 and a second one starts at p.
 * Pure; docs/cost-model.md §5.
 */
import type { Schedule } from './plan-schema';

/** Schedules whose chain is folded into a V over the GPUs (exactly two chunks per GPU). */
export const V_SHAPED_SCHEDULES: readonly Schedule[] = ['zbv', 'dualpipev'];

/** Schedules that split each backward into an input-gradient pass B and a weight-gradient pass W. */
export const SPLIT_BACKWARD_SCHEDULES: readonly Schedule[] = ['zb-h1', 'zbv', 'interleaved-zb', 'dualpipev', 'dualpipe'];

/** Schedules that run more than one model chunk per GPU (virtualStages > 1). */
export const CHUNKED_SCHEDULES: readonly Schedule[] = ['interleaved', 'interleaved-zb', 'zbv', 'dualpipev', 'dualpipe'];

/** Schedules that run two chains, one from each end (DualPipe): two copies of every stage's weights, pp even. */
export const BIDIRECTIONAL_SCHEDULES: readonly Schedule[] = ['dualpipe'];

export const isVShaped = (schedule: Schedule): boolean => V_SHAPED_SCHEDULES.includes(schedule);
export const splitsBackward = (schedule: Schedule): boolean => SPLIT_BACKWARD_SCHEDULES.includes(schedule);
export const isChunked = (schedule: Schedule): boolean => CHUNKED_SCHEDULES.includes(schedule);
export const isBidirectional = (schedule: Schedule): boolean => BIDIRECTIONAL_SCHEDULES.includes(schedule);

/** Whether virtual stage `q` of a schedule's chain(s) over `p` stages is the first of its chain (its forward input is the batch). */
export const startsChain = (schedule: Schedule, q: number, p: number): boolean => q === 0 || (isBidirectional(schedule) && q === p);

/** Whether virtual stage `q` of `chain` virtual stages over `p` stages is the last of its chain (it computes the loss). */
export const endsChain = (schedule: Schedule, q: number, p: number, chain: number): boolean => q === chain - 1 || (isBidirectional(schedule) && q === p - 1);

/** Blocks of layers the model is split into: p x v virtual stages, or p stages for DualPipe (each on two GPUs, one per direction). */
export const layerBlocks = (schedule: Schedule, p: number, v: number): number => (isBidirectional(schedule) ? p : p * v);

/** Microbatches each chain of a replica carries: half of them for DualPipe (one half from each end), else all. */
export const chainMicrobatches = (schedule: Schedule, m: number): number => (isBidirectional(schedule) ? m / 2 : m);

/** The virtual stage (position on the chain) of chunk `chunk` of stage `stage` of `p`. */
export function virtualStageOf(schedule: Schedule, stage: number, chunk: number, p: number): number {
  if (isVShaped(schedule) || isBidirectional(schedule)) return chunk % 2 === 0 ? chunk * p + stage : chunk * p + p - 1 - stage;
  return chunk * p + stage;
}

/** The stage (GPU of the pipeline) and chunk that run virtual stage `q` of a chain over `p` stages. */
export function stageOfVirtualStage(schedule: Schedule, q: number, p: number): { readonly stage: number; readonly chunk: number } {
  const chunk = Math.floor(q / p);
  const r = q % p;
  return { stage: (isVShaped(schedule) || isBidirectional(schedule)) && chunk % 2 === 1 ? p - 1 - r : r, chunk };
}

/** The stage that holds the output layer and loss (the last virtual stage): GPU 0 for a V, the last GPU otherwise. */
export const outputStageOf = (schedule: Schedule | undefined, pp: number): number => (schedule !== undefined && isVShaped(schedule) ? 0 : pp - 1);
