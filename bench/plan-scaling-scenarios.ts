/**
 * The generated scenarios of the planner-scaling benchmark (bench/plan-scaling.ts): 2 to 8 sites,
 * up to ~100,000 GPUs, dense 8B-405B and a DeepSeek-V3-sized MoE, chain or full-mesh links.
 * Shared with bench/enumeration-speed.ts and test/candidates-equivalence.test.ts.
 */
import { parseScenario, type Scenario } from '../src/model/scenario';

const MODELS = {
  '8B': { name: 'llama3-8b', layers: 32, hidden: 4096, ffnHidden: 14336, heads: 32, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
  '70B': { name: 'llama3-70b', layers: 80, hidden: 8192, ffnHidden: 28672, heads: 64, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
  '405B': { name: 'llama3-405b', layers: 126, hidden: 16384, ffnHidden: 53248, heads: 128, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
  'DeepSeek-V3 (MoE)': { name: 'deepseek-v3-like', layers: 61, hidden: 7168, ffnHidden: 18432, heads: 128, kvHeads: 128, vocab: 129280, mlp: 'swiglu',
    moe: { experts: 256, topK: 8, expertFfnHidden: 2048, sharedExperts: 1, denseLayers: 3 } },
} as const;

export interface Row { model: keyof typeof MODELS; sites: { gpuType: string; gpus: number }[]; topology: 'chain' | 'mesh'; gbps: number; km: number; batch: number; seqLen: number }

export const ROWS: Row[] = [
  { model: '8B', sites: [{ gpuType: 'H100-SXM', gpus: 1024 }, { gpuType: 'H100-SXM', gpus: 1024 }], topology: 'chain', gbps: 1600, km: 10, batch: 512, seqLen: 8192 },
  { model: '70B', sites: [{ gpuType: 'H100-SXM', gpus: 2048 }, { gpuType: 'A100-80GB', gpus: 2048 }, { gpuType: 'B200', gpus: 1024 }], topology: 'chain', gbps: 12800, km: 1200, batch: 1024, seqLen: 8192 },
  { model: '405B', sites: [{ gpuType: 'H100-SXM', gpus: 8192 }, { gpuType: 'H100-SXM', gpus: 8192 }], topology: 'chain', gbps: 51200, km: 60, batch: 2048, seqLen: 8192 },
  { model: '405B', sites: Array.from({ length: 4 }, () => ({ gpuType: 'H100-SXM', gpus: 8192 })), topology: 'mesh', gbps: 25600, km: 100, batch: 4096, seqLen: 8192 },
  { model: '70B', sites: Array.from({ length: 5 }, () => ({ gpuType: 'H200', gpus: 20000 })), topology: 'chain', gbps: 51200, km: 300, batch: 8192, seqLen: 8192 },
  { model: '405B', sites: Array.from({ length: 8 }, (_, i) => ({ gpuType: i % 2 === 0 ? 'H100-SXM' : 'B200', gpus: 12288 })), topology: 'chain', gbps: 25600, km: 500, batch: 16384, seqLen: 8192 },
  { model: 'DeepSeek-V3 (MoE)', sites: [{ gpuType: 'H800', gpus: 1024 }, { gpuType: 'H800', gpus: 1024 }], topology: 'chain', gbps: 25600, km: 100, batch: 4096, seqLen: 4096 },
  { model: 'DeepSeek-V3 (MoE)', sites: Array.from({ length: 4 }, () => ({ gpuType: 'H800', gpus: 4096 })), topology: 'mesh', gbps: 12800, km: 400, batch: 8192, seqLen: 4096 },
];

export function scenarioFor(row: Row): Scenario {
  const names = row.sites.map((_, i) => `site-${i + 1}`);
  const links = row.topology === 'chain'
    ? names.slice(1).map((name, i) => ({ between: [names[i]!, name], bandwidthGbps: row.gbps, distanceKm: row.km }))
    : names.flatMap((a, i) => names.slice(i + 1).map((b) => ({ between: [a, b], bandwidthGbps: row.gbps, distanceKm: row.km })));
  return parseScenario({
    version: 1,
    name: `${row.model}-${row.sites.length}-sites`,
    model: MODELS[row.model],
    training: { seqLen: row.seqLen, globalBatchSeqs: row.batch },
    cluster: { sites: row.sites.map((s, i) => ({ name: names[i], gpuType: s.gpuType, gpus: s.gpus, gpusPerNode: 8 })), links },
  });
}
