/**
 * What each training framework runs as planned: one typed table per framework. The exports
 * (src/export/*.ts) turn every entry that is not `native` into their `warning:` / `error:` lines,
 * `plan --framework F` searches only F's native entries, and `plan` reports the frameworks
 * whose export has no error, all through this table and `framework-issues.ts`, so they cannot
 * disagree (docs/formulation.md §8). Pure data: no imports but types.
 */
import type { Recompute, Schedule } from './plan-schema';
import { FRAMEWORKS, type Framework } from './scenario-schema';

export { FRAMEWORKS, type Framework };

/**
 * native: the framework runs it as the cost model times it. approximated: it runs, but not as
 * predicted (an export warning; left out of the framework's search space). unsupported: it
 * cannot run it (an export error).
 */
export type Support =
  | { readonly level: 'native' }
  | { readonly level: 'approximated'; readonly why: string }
  | { readonly level: 'unsupported'; readonly why: string };

const native: Support = { level: 'native' };
const approximated = (why: string): Support => ({ level: 'approximated', why });
const unsupported = (why: string): Support => ({ level: 'unsupported', why });

/** How a framework can split layers over pipeline stages. */
export type LayerSplitSupport =
  /** Megatron-LM: --decoder-first/last-pipeline-num-layers (any first and last stage, equal whole chunks in between), or an even split with the embedding/loss counted as layers. */
  | 'first-last'
  /** Any per-stage (and per-chunk) split: torchtitan's module_fqns_per_model_part. */
  | 'any';

export interface FrameworkCapabilities {
  readonly framework: Framework;
  /** Its name in messages. */
  readonly label: string;
  /** Each schedule, with the framework's own name for it where it has one. */
  readonly schedules: Readonly<Record<Schedule, Support & { readonly name?: string }>>;
  /** ZeRO stages (sharding of optimizer state, gradients, weights over dp x cp). */
  readonly zero: Readonly<Record<0 | 1 | 2 | 3, Support>>;
  /** ZeRO stages searched when the scenario's `search.zero` lists none. */
  readonly defaultZero: readonly (0 | 1 | 2 | 3)[];
  /** ZeRO-0 (replicated data parallelism) together with tensor, context, expert or pipeline parallelism. */
  readonly replicatedWithModelParallel: Support;
  readonly recompute: Readonly<Record<Recompute, Support>>;
  /** Routed experts with a tensor-parallel degree of their own (expertTp != tp, MoE Parallel Folding). */
  readonly foldedExpertTp: Support;
  /** Replica groups that run different microbatch counts (the planner's uneven batch shares). */
  readonly perGroupMicrobatches: Support;
  readonly layerSplit: LayerSplitSupport;
  readonly contextParallel: Support;
  readonly expertParallel: Support;
  readonly fp8: Support;
  /** fp8 gradient compression across sites (a network setting of the plan). */
  readonly gradientCompression: Support;
}

const UNEVEN_MICROBATCHES = 'the framework splits the global batch evenly over data-parallel ranks';

/**
 * Megatron-LM (megatron/training/arguments.py, flags in test/fixtures/megatron-flags.txt):
 * 1F1B and interleaved 1F1B (--num-virtual-stages-per-pipeline-rank), the distributed
 * optimizer (ZeRO-1), full and selective recomputation, --expert-tensor-parallel-size.
 */
export const MEGATRON: FrameworkCapabilities = {
  framework: 'megatron',
  label: 'Megatron-LM',
  schedules: {
    '1f1b': { ...native, name: '1F1B' },
    interleaved: { ...native, name: 'interleaved 1F1B' },
    gpipe: approximated('Megatron-LM has no GPipe schedule; it runs 1F1B, which the cost model times the same and which holds fewer microbatches in flight'),
    'zb-h1': unsupported('Megatron-LM has no zero-bubble (ZB-H1) schedule; it would run 1F1B with three times the planned bubble'),
    'interleaved-zb': unsupported('Megatron-LM has no interleaved zero-bubble schedule (it does not split the backward into input- and weight-gradient passes); it would run interleaved 1F1B with a larger bubble; export to torchtitan (InterleavedZeroBubble) instead'),
    zbv: unsupported('Megatron-LM has no V-shaped zero-bubble (ZBV) schedule: it places chunks in a loop, not a V, and does not split the backward; export to torchtitan (ZBVZeroBubble) instead'),
    dualpipev: unsupported('Megatron-LM (upstream) has no DualPipeV schedule: it places chunks in a loop, not a V, and does not split the backward; export to torchtitan (DualPipeV) instead'),
    dualpipe: unsupported('Megatron-LM (upstream) has no bidirectional DualPipe schedule (two copies of every stage, microbatches from both ends); it runs in DeepSeek\'s own DualPipe code (github.com/deepseek-ai/DualPipe), which has no export here; DualPipeV (one copy) exports to torchtitan'),
  },
  zero: {
    0: native,
    1: native,
    2: approximated('ZeRO-2 maps to Megatron FSDP with optim_grads (--use-megatron-fsdp); check that your Megatron-LM version supports it together with pipeline parallelism'),
    3: approximated('ZeRO-3 maps to Megatron FSDP (--use-megatron-fsdp); check that your Megatron-LM version supports it together with pipeline parallelism'),
  },
  defaultZero: [1],
  replicatedWithModelParallel: native,
  recompute: { none: native, selective: native, full: native },
  foldedExpertTp: native,
  perGroupMicrobatches: unsupported(UNEVEN_MICROBATCHES),
  layerSplit: 'first-last',
  contextParallel: native,
  expertParallel: native,
  fp8: native,
  gradientCompression: approximated('fp8 gradient compression across sites is not a Megatron-LM setting; without it cross-site gradient traffic doubles against the prediction'),
};

/**
 * torchtitan (torchtitan/config/job_config.py; schedule names from torch.distributed.pipelining's
 * get_schedule_class; keys in test/fixtures/torchtitan-keys.txt): every schedule but ZB-H1,
 * FSDP2 (ZeRO-3), plain replication (ZeRO-0, DDP) without model parallelism, full activation
 * checkpointing, any stage split.
 */
export const TORCHTITAN: FrameworkCapabilities = {
  framework: 'torchtitan',
  label: 'torchtitan',
  schedules: {
    gpipe: { ...native, name: 'GPipe' },
    '1f1b': { ...native, name: '1F1B' },
    interleaved: { ...native, name: 'Interleaved1F1B' },
    'interleaved-zb': { ...native, name: 'InterleavedZeroBubble' },
    zbv: { ...native, name: 'ZBVZeroBubble' },
    dualpipev: { ...native, name: 'DualPipeV' },
    dualpipe: unsupported('torchtitan (torch.distributed.pipelining) has no bidirectional DualPipe schedule, only its one-copy half DualPipeV; DualPipe runs in DeepSeek\'s own DualPipe code (github.com/deepseek-ai/DualPipe), which has no export here'),
    'zb-h1': unsupported('torchtitan has no single-stage zero-bubble schedule (InterleavedZeroBubble and ZBVZeroBubble need two or more stages per rank); exported as 1F1B, which has three times the planned bubble'),
  },
  zero: {
    0: native,
    1: approximated('torchtitan has no ZeRO-1; it shards data-parallel state with FSDP2 (weights too, so memory is at most the plan\'s), with fsdp_reshard_after_forward = "never" to gather weights once per iteration: parameter all-gathers the prediction does not include'),
    2: approximated('torchtitan has no ZeRO-2; it shards data-parallel state with FSDP2 (weights too, so memory is at most the plan\'s), with fsdp_reshard_after_forward = "never" to gather weights once per iteration: parameter all-gathers the prediction does not include'),
    3: native,
  },
  defaultZero: [3],
  // torchtitan/models/llama3/infra/parallelize.py: plain replication (DDP) only when it is the whole mesh.
  replicatedWithModelParallel: unsupported('torchtitan replicates data-parallel ranks without sharding (DDP, data_parallel_shard_degree 1) only when data parallelism is the whole mesh ("DDP has not supported > 1D parallelism"); with tp, cp, ep or pp it shards with FSDP2 (ZeRO-3)'),
  recompute: {
    none: native,
    full: native,
    selective: approximated('torchtitan\'s op-level selective checkpointing saves a different set of activations than the plan\'s (attention core recomputed only); memory and recompute time will differ somewhat'),
  },
  foldedExpertTp: unsupported('torchtitan has no expert tensor-parallel degree apart from tensor_parallel_degree'),
  perGroupMicrobatches: unsupported(UNEVEN_MICROBATCHES),
  layerSplit: 'any',
  contextParallel: native,
  expertParallel: native,
  fp8: native,
  gradientCompression: approximated('fp8 gradient compression across sites is not a torchtitan setting; without it cross-site gradient traffic doubles against the prediction'),
};

export const FRAMEWORK_CAPABILITIES: Readonly<Record<Framework, FrameworkCapabilities>> = { megatron: MEGATRON, torchtitan: TORCHTITAN };

export const capabilitiesOf = (framework: Framework): FrameworkCapabilities => FRAMEWORK_CAPABILITIES[framework];

/** The entries of a record the framework runs natively, in the given order. */
export function nativeValues<K extends string | number>(table: Readonly<Record<K, Support>>, values: readonly K[]): K[] {
  return values.filter((v) => table[v].level === 'native');
}
