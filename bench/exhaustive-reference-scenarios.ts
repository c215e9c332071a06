/**
 * Scenarios the exhaustive reference must finish (issue 20, item 2): two and three sites of up to
 * 64 GPUs each, dense and MoE, equal and different GPU types, different link speeds; none of them
 * a planner bench row. Shared by bench/exhaustive-reference.ts and test/exhaustive-vs-plan.test.ts.
 */
import { parseScenario, type Scenario } from '../src/model/scenario';

const LLAMA3_8B = { name: 'llama3-8b', layers: 32, hidden: 4096, ffnHidden: 14336, heads: 32, kvHeads: 8, vocab: 128256, mlp: 'swiglu' };
/** Mixtral-8x7B-shaped MoE (8 experts, top-2). */
const MIXTRAL = {
  name: 'mixtral-8x7b-like', layers: 32, hidden: 4096, ffnHidden: 14336, heads: 32, kvHeads: 8, vocab: 32000, mlp: 'swiglu',
  moe: { experts: 8, topK: 2, expertFfnHidden: 14336, sharedExperts: 0, denseLayers: 0 },
};
/** Qwen3-30B-A3B-shaped MoE (128 small experts, top-8). */
const QWEN3_MOE = {
  name: 'qwen3-30b-a3b-like', layers: 48, hidden: 2048, ffnHidden: 6144, heads: 32, kvHeads: 4, headDim: 128, vocab: 151936, mlp: 'swiglu',
  moe: { experts: 128, topK: 8, expertFfnHidden: 768, sharedExperts: 0, denseLayers: 0 },
};

interface SiteRow { gpuType: string; gpus: number }
interface LinkRow { between: [number, number]; gbps: number; km: number }
export interface ReferenceRow {
  readonly name: string;
  readonly model: object;
  readonly sites: readonly SiteRow[];
  readonly links: readonly LinkRow[];
  readonly batch: number;
  readonly seqLen: number;
  /**
   * The reference needs the candidate-level closed-form bounds (rule 2 of docs/formulation.md §9)
   * to finish in seconds; the others finish with the per-replica choice bounds alone, which share
   * no candidate bound with the planner they check.
   */
  readonly needsCandidateBounds?: boolean;
}

export const REFERENCE_ROWS: readonly ReferenceRow[] = [
  // The example: the naive enumeration evaluated 4.5 million plans in 300 s without finishing.
  { name: '8B, 2 x 16 H100', model: LLAMA3_8B, sites: [{ gpuType: 'H100-SXM', gpus: 16 }, { gpuType: 'H100-SXM', gpus: 16 }], links: [{ between: [0, 1], gbps: 1600, km: 10 }], batch: 64, seqLen: 8192 },
  { name: '8B, 2 x 64 H100', model: LLAMA3_8B, sites: [{ gpuType: 'H100-SXM', gpus: 64 }, { gpuType: 'H100-SXM', gpus: 64 }], links: [{ between: [0, 1], gbps: 800, km: 100 }], batch: 256, seqLen: 8192 },
  { name: '8B, 64 H100 + 32 A100', model: LLAMA3_8B, sites: [{ gpuType: 'H100-SXM', gpus: 64 }, { gpuType: 'A100-80GB', gpus: 32 }], links: [{ between: [0, 1], gbps: 200, km: 1000 }], batch: 128, seqLen: 4096 },
  { name: 'Mixtral-like MoE, 2 x 32 H800', model: MIXTRAL, sites: [{ gpuType: 'H800', gpus: 32 }, { gpuType: 'H800', gpus: 32 }], links: [{ between: [0, 1], gbps: 3200, km: 50 }], batch: 128, seqLen: 4096 },
  {
    name: '8B, 3 x 64 H100 mesh', model: LLAMA3_8B,
    sites: [{ gpuType: 'H100-SXM', gpus: 64 }, { gpuType: 'H100-SXM', gpus: 64 }, { gpuType: 'H100-SXM', gpus: 64 }],
    links: [{ between: [0, 1], gbps: 1600, km: 20 }, { between: [1, 2], gbps: 1600, km: 20 }, { between: [0, 2], gbps: 1600, km: 20 }], batch: 384, seqLen: 8192,
  },
  {
    name: 'Qwen3-like MoE, H100/H200/B200 chain', model: QWEN3_MOE,
    sites: [{ gpuType: 'H100-SXM', gpus: 32 }, { gpuType: 'H200', gpus: 32 }, { gpuType: 'B200', gpus: 16 }],
    links: [{ between: [0, 1], gbps: 6400, km: 5 }, { between: [1, 2], gbps: 400, km: 800 }], batch: 128, seqLen: 4096,
    // Measured without them: 56 of 6,326 candidates in 60 s.
    needsCandidateBounds: true,
  },
];

export function referenceScenario(row: ReferenceRow): Scenario {
  const names = row.sites.map((_, i) => `site-${i + 1}`);
  return parseScenario({
    version: 1,
    name: row.name,
    model: row.model,
    training: { seqLen: row.seqLen, globalBatchSeqs: row.batch },
    cluster: {
      sites: row.sites.map((s, i) => ({ name: names[i], gpuType: s.gpuType, gpus: s.gpus, gpusPerNode: 8 })),
      links: row.links.map((l) => ({ between: [names[l.between[0]], names[l.between[1]]], bandwidthGbps: l.gbps, distanceKm: l.km })),
    },
  }, row.name);
}
