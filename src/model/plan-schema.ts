/**
 * The parallel configuration ("plan") format: degrees, microbatching, schedule, memory
 * savings, and where each pipeline stage of each data-parallel replica runs.
 */
import { z } from 'zod';
import { positiveInt } from './scenario-schema';

export const SCHEDULES = ['gpipe', '1f1b', 'interleaved', 'zb-h1', 'zbv', 'interleaved-zb', 'dualpipev', 'dualpipe'] as const;
export type Schedule = (typeof SCHEDULES)[number];
export const RECOMPUTE_MODES = ['none', 'selective', 'full'] as const;
export type Recompute = (typeof RECOMPUTE_MODES)[number];
/**
 * The submodules Megatron-LM's selective recomputation can recompute (`--recompute-modules` with
 * `--recompute-granularity selective`, megatron/training/arguments.py and TransformerConfig's
 * check of `recompute_modules`): core_attn, moe_act, layernorm and mla_up_proj discard their
 * outputs and rebuild them before the backward that reads them; mlp (dense layers only), moe and
 * shared_experts checkpoint their input and rerun their forward (docs/cost-model.md §6).
 */
export const RECOMPUTE_MODULES = ['core_attn', 'moe_act', 'layernorm', 'mla_up_proj', 'mlp', 'moe', 'shared_experts'] as const;
export type RecomputeModule = (typeof RECOMPUTE_MODULES)[number];
/**
 * How ranks are numbered inside a site, innermost first (Megatron-Core's `RankGenerator` order):
 * `tp-cp-ep-dp-pp`, Megatron-LM's default, puts a stage's data-parallel replicas next to each other
 * and pipeline neighbours a whole stage of replicas apart (over the NICs); `tp-cp-ep-pp-dp`
 * (`--use-tp-pp-dp-mapping`) puts a replica's stages next to each other, so a pipeline of
 * tp x cp x pp GPUs that fits a scale-up domain sends over it, and data-parallel rings take
 * one rank from each pipeline (docs/cost-model.md §3).
 */
export const RANK_ORDERS = ['tp-cp-ep-dp-pp', 'tp-cp-ep-pp-dp'] as const;
export type RankOrder = (typeof RANK_ORDERS)[number];
/** Megatron-LM's default rank order. */
export const DEFAULT_RANK_ORDER: RankOrder = 'tp-cp-ep-dp-pp';

/** Megatron-LM's default module list under selective recomputation: the attention core alone. */
export const DEFAULT_RECOMPUTE_MODULES: readonly RecomputeModule[] = ['core_attn'];

export const stageSitesSchema = z.strictObject({
  site: z.string().min(1),
  stages: positiveInt('consecutive pipeline stages on this site', 1e5),
}).describe('A run of consecutive pipeline stages hosted by one site.');

export const replicaGroupSchema = z.strictObject({
  replicas: positiveInt('data-parallel replicas laid out this way'),
  stageSites: z.array(stageSitesSchema).min(1).max(4096)
    .describe('Sites of stages 0..pp-1 in order, run-length encoded; the counts add up to pp.'),
  microbatches: positiveInt('microbatches per replica per iteration').optional()
    .describe('Microbatches each replica of this group runs; default globalBatchSeqs / (dp x microBatchSeqs).'),
}).describe('Identical pipeline replicas laid out on the same sites.');

export const placementSchema = z.strictObject({
  layersPerStage: z.array(positiveInt('layers on a stage', 1e5)).min(1).max(4096).optional()
    .describe('Transformer layers per pipeline stage (all virtual chunks together); default: as even as possible.'),
  replicaGroups: z.array(replicaGroupSchema).min(1).max(4096),
}).describe('Which site runs each stage of each replica. Optional for a one-site scenario.');

export const linkSettingsSchema = z.strictObject({
  between: z.tuple([z.string().min(1), z.string().min(1)]),
  transport: z.enum(['roce', 'tcp']).default('roce'),
  flowsPerGpuPair: positiveInt('parallel flows or QPs per GPU pair', 1024).default(1),
  collectives: z.enum(['hierarchical', 'flat']).default('hierarchical')
    .describe('How data-parallel gradients cross: reduce inside the site first, or one flat ring.'),
  gradientCompression: z.enum(['none', 'fp8']).default('none'),
}).describe('Network-layer settings for one cross-site link; absent links use the defaults.');

export const pipelineSplitSchema = z.strictObject({
  embeddingAsLayer: z.boolean().default(false)
    .describe('The input embedding takes the place of one transformer layer on the first virtual stage (Megatron-LM --account-for-embedding-in-pipeline-split).'),
  lossAsLayer: z.boolean().default(false)
    .describe('The output layer and loss take the place of one transformer layer on the last virtual stage (Megatron-LM --account-for-loss-in-pipeline-split).'),
}).describe('Count the embedding and the loss as pipeline layers when splitting layers over stages and chunks. Default: off, or both on when pp x virtualStages exceeds the layers.');

export const planSchema = z.strictObject({
  tp: positiveInt('tensor-parallel degree', 1e8),
  cp: positiveInt('context-parallel degree', 1e8).default(1),
  ep: positiveInt('expert-parallel degree', 1e8).default(1),
  expertTp: positiveInt('expert tensor-parallel degree', 1e8).optional()
    .describe('Tensor-parallel degree of the routed experts (Megatron-LM --expert-tensor-parallel-size); absent: tp. MoE Parallel Folding: ep x expertTp divides tp x cp x dp, so TP 2 with EP 32 and DP 16 is a plan.'),
  pp: positiveInt('pipeline-parallel degree', 1e5),
  dp: positiveInt('data-parallel degree', 1e8),
  microBatchSeqs: positiveInt('sequences per microbatch'),
  schedule: z.enum(SCHEDULES).default('1f1b'),
  virtualStages: positiveInt('model chunks per GPU (interleaved and interleaved-zb: 2 or more; zbv, dualpipev and dualpipe: exactly 2; dualpipe\'s two chunks are stages j and pp - 1 - j of the pp-stage model, one per direction)', 1e5).default(1),
  recompute: z.enum(RECOMPUTE_MODES).default('none'),
  recomputeModules: z.array(z.enum(RECOMPUTE_MODULES)).min(1, 'lists no module: write recompute \'none\' to recompute nothing').max(RECOMPUTE_MODULES.length).optional()
    .describe('Modules selective recomputation recomputes (Megatron-LM --recompute-modules): core_attn, moe_act, layernorm, mla_up_proj, mlp (dense layers), moe, shared_experts. Only with recompute \'selective\'; absent: [\'core_attn\'].'),
  zero: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).default(1)
    .describe('0: replicated; 1: optimizer sharded over dp x cp; 2: + gradients; 3: + weights.'),
  rankOrder: z.enum(RANK_ORDERS).optional()
    .describe("How ranks are numbered inside a site, innermost first: 'tp-cp-ep-dp-pp' (Megatron-LM's default: pipeline neighbours a stage of replicas apart, over the NICs) or 'tp-cp-ep-pp-dp' (Megatron-LM --use-tp-pp-dp-mapping: a replica's stages side by side, so a pipeline that divides a scale-up domain sends over it; ep 1 and cp 1 only, each replica on one site). Absent: the default."),
  pipelineSplit: pipelineSplitSchema.optional(),
  placement: placementSchema.optional(),
  network: z.array(linkSettingsSchema).max(2016).optional(),
}).superRefine((plan, ctx) => {
  // Megatron-Core's ModelParallelConfig.use_tp_pp_dp_mapping: "Make sure EP and CP aren't used with this option enabled."
  // With ep 1 a folded expert tp (expertTp 1 beside tp > 1) makes Megatron-Core's expert data-parallel groups disagree with the dense ones under this order too.
  const folded = plan.expertTp !== undefined && plan.expertTp !== plan.tp;
  if (plan.rankOrder === 'tp-cp-ep-pp-dp' && (plan.ep > 1 || plan.cp > 1 || folded)) {
    const what = plan.ep > 1 ? `ep ${plan.ep}` : plan.cp > 1 ? `cp ${plan.cp}` : `expertTp ${plan.expertTp} with tp ${plan.tp}`;
    ctx.addIssue({ code: 'custom', path: ['rankOrder'], message: `'tp-cp-ep-pp-dp' is for plans without expert or context parallelism (Megatron-LM's --use-tp-pp-dp-mapping), not ${what}` });
  }
  if (plan.recomputeModules === undefined) return;
  if (plan.recompute !== 'selective') {
    ctx.addIssue({ code: 'custom', path: ['recomputeModules'], message: `applies only with recompute 'selective' (Megatron-LM --recompute-granularity selective), not '${plan.recompute}'` });
  }
  plan.recomputeModules.forEach((module, i) => {
    if (plan.recomputeModules!.indexOf(module) !== i) ctx.addIssue({ code: 'custom', path: ['recomputeModules', i], message: `'${module}' is listed twice` });
  });
}).describe('A parallel configuration of the training job.');

export type PlanSpec = z.output<typeof planSchema>;

/**
 * The modules the plan recomputes under selective recomputation: its `recomputeModules`, or
 * Megatron-LM's default (the attention core); none without selective recomputation.
 */
export const recomputeModulesOf = (plan: Pick<PlanSpec, 'recompute' | 'recomputeModules'>): readonly RecomputeModule[] =>
  plan.recompute === 'selective' ? plan.recomputeModules ?? DEFAULT_RECOMPUTE_MODULES : [];

/** The plan's rank order inside a site, Megatron-LM's default when it names none. */
export const rankOrderOf = (plan: Pick<PlanSpec, 'rankOrder'>): RankOrder => plan.rankOrder ?? DEFAULT_RANK_ORDER;

/**
 * GPUs between neighbouring ranks of a data-parallel ring inside a site: tp (the default order,
 * each rank of the dp x cp group a tp group apart), or tp x pp under `tp-cp-ep-pp-dp` (one rank
 * from each pipeline of tp x cp x pp GPUs: cp ranks of a pipeline and its dp neighbours, D / (tp x pp)
 * ranks in a scale-up domain of D GPUs either way).
 */
export const dataParallelRankSpacing = (plan: Pick<PlanSpec, 'tp' | 'pp' | 'rankOrder'>): number =>
  (rankOrderOf(plan) === 'tp-cp-ep-pp-dp' ? plan.tp * plan.pp : plan.tp);

/** The routed experts' tensor-parallel degree: the plan's `expertTp`, or tp (Megatron's default before MoE Parallel Folding). */
export const expertTpOf = (plan: Pick<PlanSpec, 'tp' | 'expertTp'>): number => plan.expertTp ?? plan.tp;

/**
 * Ranks one routed expert's shard is replicated over (expert data parallelism, MoE Parallel
 * Folding: ep x expertTp x expert-dp = tp x cp x dp), which ZeRO shards its state over.
 */
export const expertDataParallel = (plan: Pick<PlanSpec, 'tp' | 'cp' | 'dp' | 'ep' | 'expertTp'>): number =>
  (plan.tp * plan.cp * plan.dp) / (plan.ep * expertTpOf(plan));
export type PlacementSpec = z.output<typeof placementSchema>;
export type ReplicaGroupSpec = z.output<typeof replicaGroupSchema>;
export type LinkSettingsSpec = z.output<typeof linkSettingsSchema>;
export type PipelineSplitSpec = z.output<typeof pipelineSplitSchema>;
