/**
 * Planner scaling: for scenarios from 2 to 8 sites and up to ~100,000 GPUs (dense 8B-405B and a
 * DeepSeek-V3-sized MoE), the plan's iteration time, proven gap and solve time, beside the
 * exhaustive mode's time on the same space (capped) in the same run. Output: docs/benchmarks.md.
 * Run: npm run build && node dist/bench/plan-scaling.js [exhaustive cap seconds, default 60]
 */
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { defaultBackends, plan } from '../src/solve/plan';

const exhaustiveCapS = Number(process.argv[2] ?? 60);

const MODELS = {
  '8B': { name: 'llama3-8b', layers: 32, hidden: 4096, ffnHidden: 14336, heads: 32, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
  '70B': { name: 'llama3-70b', layers: 80, hidden: 8192, ffnHidden: 28672, heads: 64, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
  '405B': { name: 'llama3-405b', layers: 126, hidden: 16384, ffnHidden: 53248, heads: 128, kvHeads: 8, vocab: 128256, mlp: 'swiglu' },
  'DeepSeek-V3 (MoE)': { name: 'deepseek-v3-like', layers: 61, hidden: 7168, ffnHidden: 18432, heads: 128, kvHeads: 128, vocab: 129280, mlp: 'swiglu',
    moe: { experts: 256, topK: 8, expertFfnHidden: 2048, sharedExperts: 1, denseLayers: 3 } },
} as const;

interface Row { model: keyof typeof MODELS; sites: { gpuType: string; gpus: number }[]; topology: 'chain' | 'mesh'; gbps: number; km: number; batch: number; seqLen: number }

const ROWS: Row[] = [
  { model: '8B', sites: [{ gpuType: 'H100-SXM', gpus: 1024 }, { gpuType: 'H100-SXM', gpus: 1024 }], topology: 'chain', gbps: 1600, km: 10, batch: 512, seqLen: 8192 },
  { model: '70B', sites: [{ gpuType: 'H100-SXM', gpus: 2048 }, { gpuType: 'A100-80GB', gpus: 2048 }, { gpuType: 'B200', gpus: 1024 }], topology: 'chain', gbps: 12800, km: 1200, batch: 1024, seqLen: 8192 },
  { model: '405B', sites: [{ gpuType: 'H100-SXM', gpus: 8192 }, { gpuType: 'H100-SXM', gpus: 8192 }], topology: 'chain', gbps: 51200, km: 60, batch: 2048, seqLen: 8192 },
  { model: '405B', sites: Array.from({ length: 4 }, () => ({ gpuType: 'H100-SXM', gpus: 8192 })), topology: 'mesh', gbps: 25600, km: 100, batch: 4096, seqLen: 8192 },
  { model: '70B', sites: Array.from({ length: 5 }, () => ({ gpuType: 'H200', gpus: 20000 })), topology: 'chain', gbps: 51200, km: 300, batch: 8192, seqLen: 8192 },
  { model: '405B', sites: Array.from({ length: 8 }, (_, i) => ({ gpuType: i % 2 === 0 ? 'H100-SXM' : 'B200', gpus: 12288 })), topology: 'chain', gbps: 25600, km: 500, batch: 16384, seqLen: 8192 },
  { model: 'DeepSeek-V3 (MoE)', sites: [{ gpuType: 'H800', gpus: 1024 }, { gpuType: 'H800', gpus: 1024 }], topology: 'chain', gbps: 25600, km: 100, batch: 4096, seqLen: 4096 },
  { model: 'DeepSeek-V3 (MoE)', sites: Array.from({ length: 4 }, () => ({ gpuType: 'H800', gpus: 4096 })), topology: 'mesh', gbps: 12800, km: 400, batch: 8192, seqLen: 4096 },
];

function scenarioFor(row: Row) {
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

async function main(): Promise<void> {
  const backends = defaultBackends();
  console.log(`| model | sites | GPUs | link Gb/s, km | plan s/iter | proven gap | status | main search s | with baselines s | vs production | exhaustive (cap ${exhaustiveCapS} s) | exhaustive / plan time |`);
  console.log('|---|---:|---:|---|---:|---:|---|---:|---:|---:|---|---:|');
  try {
    for (const row of ROWS) {
      const scenario = scenarioFor(row);
      const gpus = row.sites.reduce((sum, s) => sum + s.gpus, 0);
      const started = Date.now();
      const result = await plan(scenario, { timeLimitS: 10, gap: 0.01, backends });
      const totalS = (Date.now() - started) / 1000;
      const exhaustive = exhaustiveSearch(scenario, FULL_SPACE, exhaustiveCapS);
      const production = result.baselines.find((b) => b.name === 'production');
      const time = result.evaluation?.predicted.iterationTimeS;
      const exhaustiveCell = exhaustive.complete
        ? `${exhaustive.timeS.toFixed(1)} s, optimum ${exhaustive.evaluation?.predicted.iterationTimeS.toFixed(3) ?? 'none'}`
        : `> ${exhaustiveCapS} s (stopped after ${exhaustive.plansEvaluated} plans)`;
      const ratio = exhaustive.complete ? (exhaustive.timeS / result.solver.timeS).toFixed(1) : `> ${(exhaustiveCapS / result.solver.timeS).toFixed(0)}`;
      console.log(`| ${row.model} | ${row.sites.length} | ${gpus} | ${row.gbps}, ${row.km} | ${time?.toFixed(3) ?? 'none'} | ${(100 * result.bound.gap).toFixed(2)}% | ${result.status} | ${result.solver.timeS.toFixed(2)} | ${totalS.toFixed(2)} | ${production?.speedup ? `${production.speedup.toFixed(2)}x` : '-'} | ${exhaustiveCell} | ${ratio} |`);
    }
  } finally {
    await Promise.all(backends.map((b) => b.close()));
  }
}

void main();
