/**
 * MFU and hardware FLOP/s stay physical (docs/cost-model.md §1-2): over random scenarios
 * (catalog and custom GPUs, one or two sites, bf16 and fp8, sequences up to 256K tokens, hidden
 * up to 16384, dense and MoE models, fused attention or not) and random plans that fit: the
 * hardware FLOP/s per GPU are at most the GPUs' peak for the precision, the model FLOPs at most
 * the hardware FLOPs, MFU (model FLOPs against the dense bf16 peak) is at most the best GEMM
 * efficiency in bf16 and at most 1 in fp8 on the catalog's GPUs; on a custom GPU in fp8, at most
 * the fp8 linear layers' best rate over the bf16 peak (above 1 only when that rate is).
 *
 * FUZZ_RUNS and FUZZ_SEED widen or move the sample.
 */
import fc from 'fast-check';
import { CALIBRATION } from '../src/model/calibration-constants';
import { GPU_CATALOG } from '../src/model/gpu-catalog';
import { evaluate, type Evaluation } from '../src/model/evaluate';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { loadFixture, readFixture } from './helpers/fixtures';

type Json = any; // scenario and plan documents built below

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 3000);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261201);

const gpuArbitrary = fc.oneof(
  fc.record({ gpuType: fc.constantFrom('A100-80GB', 'H100-SXM', 'H800', 'H200', 'B200', 'GB200') }),
  fc.record({
    gpu: fc.record({
      name: fc.constant('custom'),
      peakBf16Tflops: fc.integer({ min: 50, max: 5000 }),
      fp8Ratio: fc.constantFrom(0, 1, 1.5, 2),
      memoryGiB: fc.constantFrom(24, 80, 192, 1000, 20000),
      // Peak FLOPs per HBM byte: 150 (A100) to 420 (L40S) on real GPUs; 100-600 here.
      flopsPerHbmByte: fc.integer({ min: 100, max: 600 }),
      scaleUpGBps: fc.integer({ min: 50, max: 2000 }),
      scaleUpDomainGpus: fc.constantFrom(4, 8, 72),
      nicGbps: fc.constantFrom(100, 200, 400, 800),
    }).map(({ fp8Ratio, flopsPerHbmByte, ...gpu }) => ({
      ...gpu, hbmGBps: (gpu.peakBf16Tflops * 1000) / flopsPerHbmByte, ...(fp8Ratio > 0 ? { peakFp8Tflops: gpu.peakBf16Tflops * fp8Ratio } : {}),
    })),
  }),
);

const caseArbitrary = fc.record({
  headDim: fc.constantFrom(64, 128),
  heads: fc.constantFrom(8, 16, 32, 64, 128),
  kvDivisor: fc.constantFrom(1, 4, 8),
  ffnRatio: fc.constantFrom(2, 3.5, 4),
  layers: fc.integer({ min: 2, max: 96 }),
  vocab: fc.constantFrom(32000, 128256),
  mlp: fc.constantFrom('swiglu', 'gelu'),
  moe: fc.option(fc.record({ experts: fc.constantFrom(8, 64), topK: fc.constantFrom(1, 2, 8), expertFfnHidden: fc.constantFrom(512, 2048), sharedExperts: fc.constantFrom(0, 1) }), { nil: undefined }),
  seqLen: fc.constantFrom(512, 2048, 8192, 32768, 131072, 262144),
  precision: fc.constantFrom('bf16', 'fp8'),
  flashAttention: fc.boolean(),
  dropout: fc.boolean(),
  tpOverlap: fc.boolean(),
  dpOverlap: fc.boolean(),
  sites: fc.array(gpuArbitrary, { minLength: 1, maxLength: 2 }),
  twoSiteLayout: fc.constantFrom('stages', 'replicas'),
  tp: fc.constantFrom(1, 2, 4, 8),
  cp: fc.constantFrom(1, 2, 4),
  ep: fc.constantFrom(1, 2, 8),
  pp: fc.constantFrom(1, 2, 4),
  dpPerSite: fc.constantFrom(1, 2, 4, 8),
  microBatchSeqs: fc.constantFrom(1, 2, 4),
  microbatches: fc.constantFrom(1, 4, 8, 16),
  schedule: fc.constantFrom('gpipe', '1f1b', 'interleaved', 'zb-h1'),
  virtualStages: fc.constantFrom(1, 2),
  recompute: fc.constantFrom('none', 'selective', 'full'),
  zero: fc.constantFrom(0, 1, 2, 3),
});

type Case = typeof caseArbitrary extends fc.Arbitrary<infer T> ? T : never;

/** A scenario and plan from a case; undefined when the scenario is invalid (e.g. fp8 on a GPU without it). */
function build(c: Case): { scenario: Scenario; plan: Json } | undefined {
  const hidden = c.heads * c.headDim;
  const twoSites = c.sites.length === 2;
  const dp = c.dpPerSite * (twoSites && c.twoSiteLayout === 'replicas' ? 2 : 1);
  const perReplica = c.tp * c.cp * c.pp;
  const spec: Json = {
    version: 1,
    name: 'random',
    model: {
      name: 'random', layers: c.layers, hidden, ffnHidden: Math.round(c.ffnRatio * hidden), heads: c.heads, kvHeads: c.heads / c.kvDivisor,
      vocab: c.vocab, mlp: c.mlp, dropout: c.dropout, ...(c.moe ? { moe: { ...c.moe, topK: Math.min(c.moe.topK, c.moe.experts) } } : {}),
    },
    training: {
      seqLen: c.seqLen, globalBatchSeqs: dp * c.microBatchSeqs * c.microbatches, precision: c.precision, flashAttention: c.flashAttention,
      overlap: { tensorParallel: c.tpOverlap, dataParallel: c.dpOverlap },
    },
    cluster: {
      sites: c.sites.map((site, i) => ({ name: `s${i}`, ...site, gpus: perReplica * dp, gpusPerNode: Math.min(8, perReplica * dp) })),
      links: twoSites ? [{ between: ['s0', 's1'], bandwidthGbps: 3200, rttMs: 2 }] : [],
    },
  };
  const plan: Json = {
    tp: c.tp, cp: c.cp, ep: c.moe ? c.ep : 1, pp: c.pp, dp, microBatchSeqs: c.microBatchSeqs,
    schedule: c.schedule, virtualStages: c.schedule === 'interleaved' ? c.virtualStages : 1, recompute: c.recompute, zero: c.zero,
  };
  if (twoSites) {
    plan.placement = c.twoSiteLayout === 'replicas'
      ? { replicaGroups: [0, 1].map((i) => ({ replicas: c.dpPerSite, stageSites: [{ site: `s${i}`, stages: c.pp }] })) }
      : { replicaGroups: [{ replicas: dp, stageSites: c.pp === 1 ? [{ site: 's1', stages: 1 }] : [{ site: 's0', stages: c.pp / 2 }, { site: 's1', stages: c.pp / 2 }] }] };
  }
  try {
    return { scenario: parseScenario(spec, 'random'), plan };
  } catch (error) {
    if (error instanceof ScenarioValidationError) return undefined;
    throw error;
  }
}

function evaluateCase(c: Case): { scenario: Scenario; evaluation: Evaluation } | undefined {
  const built = build(c);
  if (!built) return undefined;
  try {
    return { scenario: built.scenario, evaluation: evaluate(built.scenario, built.plan) };
  } catch (error) {
    if (error instanceof ScenarioValidationError) return undefined;
    throw error;
  }
}

const usedSites = (scenario: Scenario, evaluation: Evaluation) => scenario.sites.filter((_, s) => evaluation.predicted.sites[s]!.gpusUsed > 0);

/** The largest peak (TFLOP/s, for the scenario's precision) over the sites the plan uses. */
function largestUsedPeakTflops(scenario: Scenario, evaluation: Evaluation): number {
  return Math.max(...usedSites(scenario, evaluation).map((site) => (scenario.training.precision === 'fp8' ? site.gpu.peakFp8Tflops! : site.gpu.peakBf16Tflops)));
}

/** fp8: the fastest any FLOP can run, over the bf16 peak: bf16 GEMMs at their best efficiency, fp8 linear layers at theirs. */
function fp8MfuCeiling(scenario: Scenario, evaluation: Evaluation): number {
  return Math.max(...usedSites(scenario, evaluation).map((site) => Math.max(
    CALIBRATION.matmulPeakEfficiency, CALIBRATION.fp8MatmulPeakEfficiency * site.gpu.peakFp8Tflops! / site.gpu.peakBf16Tflops)));
}

describe('MFU and hardware FLOP/s of plans that fit', () => {
  it('MFU <= 1 (bf16 everywhere, fp8 on catalog GPUs), hardware TFLOP/s per GPU <= the peak for the precision, model <= hardware FLOPs', () => {
    let fitting = 0;
    let fp8Fitting = 0;
    const largestMfu = { bf16: 0, fp8: 0 };
    fc.assert(fc.property(caseArbitrary, (c) => {
      const result = evaluateCase(c);
      if (!result || !result.evaluation.fitsResources) return;
      const { scenario, evaluation } = result;
      const p = evaluation.predicted;
      fitting++;
      const precision = scenario.training.precision;
      if (precision === 'fp8') fp8Fitting++;
      largestMfu[precision] = Math.max(largestMfu[precision], p.mfu);
      expect(p.mfu).toBeGreaterThan(0);
      if (precision === 'bf16') {
        expect(p.mfu).toBeLessThanOrEqual(CALIBRATION.matmulPeakEfficiency);
      } else if (usedSites(scenario, evaluation).every((site) => GPU_CATALOG[site.gpu.name] === site.gpu)) {
        expect(p.mfu).toBeLessThanOrEqual(1);
      } else {
        expect(p.mfu).toBeLessThanOrEqual(fp8MfuCeiling(scenario, evaluation));
      }
      expect(p.hardwareTflopsPerGpu).toBeLessThanOrEqual(largestUsedPeakTflops(scenario, evaluation));
      expect(p.modelTflopsPerGpu).toBeLessThanOrEqual(p.hardwareTflopsPerGpu * (1 + 1e-12));
    }), { numRuns: RUNS, seed: SEED });
    console.log(`${fitting} fitting plans (${fp8Fitting} fp8) of ${RUNS}; largest MFU bf16 ${largestMfu.bf16.toFixed(3)}, fp8 ${largestMfu.fp8.toFixed(3)}`);
    // The sample must exercise the claim: enough fitting plans in both precisions.
    expect(fitting).toBeGreaterThanOrEqual(RUNS / 10);
    expect(fp8Fitting).toBeGreaterThanOrEqual(RUNS / 40);
  });

  it('rejects a custom GPU whose dense fp8 peak is more than twice its bf16 peak (the fp8 ceiling above assumes it)', () => {
    const spec = (peakFp8Tflops: number): Json => ({
      version: 1, name: 'fp8-ratio', model: { name: 'm', layers: 2, hidden: 1024, ffnHidden: 4096, heads: 8, vocab: 32000 },
      training: { seqLen: 2048, globalBatchSeqs: 8, precision: 'fp8' },
      cluster: { sites: [{ name: 's', gpu: { name: 'g', peakBf16Tflops: 1000, peakFp8Tflops, memoryGiB: 80, scaleUpGBps: 450, nicGbps: 400 }, gpus: 8 }] },
    });
    expect(() => parseScenario(spec(2000), 'ok')).not.toThrow();
    expect(() => parseScenario(spec(4000), 'sparse figure')).toThrow(/more than twice/);
    expect(() => parseScenario({ ...(readFixture('llama3-8b-one-site') as Json), training: { seqLen: 8192, globalBatchSeqs: 512, precision: 'fp8' } }, 'catalog H100')).not.toThrow();
  });

  it('fp8 Llama 3 8B on one H100 site: MFU below 1, hardware FLOP/s above model FLOP/s with recomputation', () => {
    const base = loadFixture('llama3-8b-one-site');
    const scenario: Scenario = { ...base, training: { ...base.training, precision: 'fp8' } };
    const plan = { tp: 1, cp: 1, ep: 1, pp: 1, dp: 256, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'full', zero: 3 };
    const e = evaluate(scenario, plan);
    expect(e.fits).toBe(true);
    expect(e.predicted.mfu).toBeLessThan(1);
    // Full recomputation executes 4 forwards for the model's 3: 4/3 of the model FLOPs.
    expect(e.predicted.hardwareTflopsPerGpu / e.predicted.modelTflopsPerGpu).toBeCloseTo(4 / 3, 6);
  });
});
