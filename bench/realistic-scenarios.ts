/**
 * Random realistic scenarios for the planner-robustness benchmark (bench/plan-robustness.ts):
 * 2-8 sites of catalog GPUs (H100, H800, H200, A100, B200, GB200; one type everywhere or a mix),
 * 256-16,384 GPUs per site (some sites in oversubscribed pods), chain, ring or full-mesh links of
 * 400 Gb/s to 51.2 Tb/s with 1-150 ms round trips (some lossy), dense models from 8B to 405B and
 * MoE models (Mixtral-8x22B-, Qwen3-30B-A3B- and DeepSeek-V3-shaped) with a batch that grows with
 * the fleet, sequences of 4K-8K, BF16 or FP8. Seeded (mulberry32), so a seed names the same list
 * on every machine. Unlike bench/random-scenarios.ts (tiny scenarios an exhaustive search can
 * check), these are the size users plan: the question is how fast the planner proves its gap.
 */

type Json = any; // scenario JSON, checked by parseScenario where it is used

/** mulberry32: a small, fast, seedable generator on [0, 1) (public domain); the property tests draw from it too. */
export function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODELS: Record<string, { model: Json; minGpus: number }> = {
  'llama3-8b': { minGpus: 64, model: { name: 'llama3-8b', layers: 32, hidden: 4096, ffnHidden: 14336, heads: 32, kvHeads: 8, vocab: 128256, mlp: 'swiglu' } },
  'llama3-70b': { minGpus: 256, model: { name: 'llama3-70b', layers: 80, hidden: 8192, ffnHidden: 28672, heads: 64, kvHeads: 8, vocab: 128256, mlp: 'swiglu' } },
  'llama3-405b': { minGpus: 2048, model: { name: 'llama3-405b', layers: 126, hidden: 16384, ffnHidden: 53248, heads: 128, kvHeads: 8, vocab: 128256, mlp: 'swiglu' } },
  'mixtral-8x22b': { minGpus: 256, model: { name: 'mixtral-8x22b', layers: 56, hidden: 6144, ffnHidden: 16384, heads: 48, kvHeads: 8, vocab: 32000, mlp: 'swiglu',
    moe: { experts: 8, topK: 2, expertFfnHidden: 16384 } } },
  'qwen3-30b-a3b': { minGpus: 64, model: { name: 'qwen3-30b-a3b', layers: 48, hidden: 2048, ffnHidden: 6144, heads: 32, kvHeads: 4, headDim: 128, vocab: 151936, mlp: 'swiglu',
    moe: { experts: 128, topK: 8, expertFfnHidden: 768 } } },
  'deepseek-v3-like': { minGpus: 1024, model: { name: 'deepseek-v3-like', layers: 61, hidden: 7168, ffnHidden: 18432, heads: 128, kvHeads: 128, vocab: 129280, mlp: 'swiglu',
    moe: { experts: 256, topK: 8, expertFfnHidden: 2048, sharedExperts: 1, denseLayers: 3 } } },
};

const GPU_TYPES = ['H100-SXM', 'H800', 'H200', 'A100-80GB', 'B200', 'GB200'] as const;
const SITE_GPUS = [256, 512, 1024, 2048, 4096, 8192, 12288, 16384] as const;
const BANDWIDTHS_GBPS = [400, 1600, 3200, 6400, 12800, 25600, 51200] as const;

export interface RealisticScenario {
  /** A short description for the benchmark's table. */
  readonly label: string;
  readonly spec: Json;
}

/** The i-th scenario of the list named by `seed`. */
export function realisticScenario(seed: number, index: number): RealisticScenario {
  const random = generator(seed * 1_000_003 + index * 7919 + 1);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const sites = pick([2, 2, 2, 3, 3, 3, 4, 4, 5, 6, 8]);
  const mixed = random() < 0.5;
  const firstType = pick(GPU_TYPES);
  const gpusEach = pick(SITE_GPUS);
  const sameSize = random() < 0.4;
  const siteSpecs = Array.from({ length: sites }, (_, i) => {
    const gpuType = mixed ? pick(GPU_TYPES) : firstType;
    // GB200: 4 GPUs per compute tray, NVLink domains of 72; the others 8 per node.
    const perNode = gpuType === 'GB200' ? 4 : 8;
    const size = sameSize ? gpusEach : pick(SITE_GPUS);
    const gpus = gpuType === 'GB200' ? Math.max(72, Math.round(size / 72) * 72) : size;
    const pods = gpus >= 2048 && random() < 0.25 ? { podGpus: gpus / 2, podOversubscription: pick([2, 3, 4, 7]) } : {};
    return { name: `site-${i + 1}`, gpuType, gpus, gpusPerNode: perNode, ...pods };
  });
  const totalGpus = siteSpecs.reduce((sum, s) => sum + s.gpus, 0);
  const names = siteSpecs.map((s) => s.name);
  const topology = sites === 2 ? 'chain' : pick(['chain', 'ring', 'mesh'] as const);
  const pairs: [string, string][] = topology === 'mesh'
    ? names.flatMap((a, i) => names.slice(i + 1).map((b) => [a, b] as [string, string]))
    : names.slice(1).map((b, i) => [names[i]!, b] as [string, string]);
  if (topology === 'ring' && sites > 2) pairs.push([names[sites - 1]!, names[0]!]);
  const links = pairs.map((between) => ({
    between,
    bandwidthGbps: pick(BANDWIDTHS_GBPS),
    rttMs: Math.round((1 + random() * 149) * 10) / 10,
    ...(random() < 0.2 ? { lossRate: pick([1e-6, 1e-5, 1e-4]) } : {}),
  }));
  const fitting = Object.keys(MODELS).filter((name) => MODELS[name]!.minGpus <= totalGpus);
  const modelName = pick(fitting);
  const seqLen = pick([4096, 8192]);
  // About 1-16 sequences per 8 GPUs of the fleet, a power of two of at least 256 sequences and at
  // most 32M tokens (Llama 3 405B trained with 16M on 16,384 GPUs).
  const perGpu = pick([1 / 8, 1 / 4, 1 / 2, 1, 2]);
  const globalBatchSeqs = Math.min(2 ** 25 / seqLen, Math.max(256, 2 ** Math.round(Math.log2(totalGpus * perGpu))));
  const fp8 = random() < 0.3 && siteSpecs.every((s) => s.gpuType !== 'A100-80GB');
  const spec = {
    version: 1,
    name: `realistic-${seed}-${index}`,
    model: MODELS[modelName]!.model,
    training: { seqLen, globalBatchSeqs, precision: fp8 ? 'fp8' : 'bf16' },
    cluster: { sites: siteSpecs, links },
  };
  const types = [...new Set(siteSpecs.map((s) => s.gpuType.replace('-SXM', '').replace('-80GB', '')))].join('+');
  const label = `${modelName} ${fp8 ? 'fp8' : 'bf16'}, ${sites} sites ${topology} (${types}), ${totalGpus} GPUs, gbs ${globalBatchSeqs}x${seqLen / 1024}K`;
  return { label, spec };
}
