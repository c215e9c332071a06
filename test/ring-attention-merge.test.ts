/**
 * Ring attention's merge of each step's partial output into the running one (docs/cost-model.md
 * §2): `(c - 1) x T/t x layers x w_ctx x B_ring / HBM` forward, the attention's context width
 * (heads x head dimension; MLA's value width), nothing without context parallelism.
 */
import { CALIBRATION } from '../src/model/calibration-constants';
import { buildStages } from '../src/model/placement';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { stageTime, type StageTime } from '../src/model/stage-cost';
import { attentionWidths } from '../src/model/transformer-params';
import { gBpsToBytesPerS } from '../src/model/units';
import { scenarioWith } from './helpers/scenario-with';
import { readFixture } from './helpers/fixtures';

type Json = any; // a scenario document being changed

const mutable = CALIBRATION as unknown as Record<string, number>;

/** Stage 0's times with the ring's merge bytes set to `bytes` (restored afterwards). */
function timesWith(bytes: number, scenario: Scenario, plan: PlanSpec): StageTime {
  const saved = mutable['ringStepBytesPerElement']!;
  mutable['ringStepBytesPerElement'] = bytes;
  try {
    const [stage] = buildStages(scenario, plan, [scenario.model.layers]);
    const site = scenario.sites[0]!;
    return stageTime(scenario, plan, stage!, site, site.gpus);
  } finally {
    mutable['ringStepBytesPerElement'] = saved;
  }
}
const forwardWith = (bytes: number, scenario: Scenario, plan: PlanSpec): number => timesWith(bytes, scenario, plan).forwardS;

const plan = (cp: number, tp = 2): PlanSpec => ({ tp, cp, ep: 1, pp: 1, dp: 1, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 });

describe('ring attention: each step after the first merges its partial output', () => {
  // GQA with a head dimension of its own: the context width is 32 x 128 = 4096, not the hidden size.
  const gqa = scenarioWith({ layers: 4, hidden: 2048, ffnHidden: 8192, heads: 32, kvHeads: 4, headDim: 128, vocab: 32000, mlp: 'swiglu' }, { seqLen: 65536, globalBatchSeqs: 8 });
  const mla = scenarioWith({
    layers: 4, hidden: 2048, ffnHidden: 8192, heads: 16, kvHeads: 16, vocab: 32000, mlp: 'swiglu',
    attention: { kind: 'mla', qLoraRank: 512, kvLoraRank: 256, qkNopeHeadDim: 64, qkRopeHeadDim: 32, vHeadDim: 96 },
  }, { seqLen: 65536, globalBatchSeqs: 8 });

  it.each([['GQA', gqa, 4096], ['MLA', mla, 16 * 96]] as const)('%s: (c - 1) x T/t x layers x w_ctx x B_ring / HBM forward, B_ring the hand-set 10 bytes', (_name, scenario, contextWidth) => {
    expect(attentionWidths(scenario.model).context).toBe(contextWidth);
    expect(CALIBRATION.ringStepBytesPerElement).toBe(10);
    const hbm = gBpsToBytesPerS(scenario.sites[0]!.gpu.hbmGBps);
    for (const cp of [2, 4, 8]) {
      const tokensPerTpRank = 65536 / cp / 2;
      const expected = (cp - 1) * tokensPerTpRank * 4 * contextWidth * 10 / hbm;
      expect(forwardWith(10, scenario, plan(cp)) - forwardWith(0, scenario, plan(cp))).toBeCloseTo(expected, 12);
    }
  });

  it('adds nothing without context parallelism', () => {
    expect(forwardWith(10, gqa, plan(1))).toBe(forwardWith(0, gqa, plan(1)));
  });

  it('hides the K,V exchanges behind all merges but the last: none at cp 2, (c - 2) of (c - 1) above', () => {
    // Slow scale-up and NIC (the ring takes the faster), a short sequence, so the exchanges outlast the attention core and are exposed.
    const doc = readFixture('small/one-site') as Json;
    doc.model = { name: 'slow-ring', layers: 4, hidden: 2048, ffnHidden: 8192, heads: 32, kvHeads: 32, vocab: 32000, mlp: 'swiglu' };
    doc.training = { ...doc.training, seqLen: 16384, globalBatchSeqs: 8 };
    doc.cluster.sites[0] = { name: 'dc', gpus: 16, gpusPerNode: 8, gpu: { name: 'slow-link', peakBf16Tflops: 989, memoryGiB: 80, hbmGBps: 3350, scaleUpGBps: 2, nicGbps: 10 } };
    delete doc.search;
    const spec = parseScenario(doc, 'slow-ring');
    const hbm = gBpsToBytesPerS(spec.sites[0]!.gpu.hbmGBps);
    for (const cp of [2, 4]) {
      const [withMerge, without] = [timesWith(10, spec, plan(cp)), timesWith(0, spec, plan(cp))];
      expect(without.cpExposedS).toBeGreaterThan(0);
      const mergeS = (cp - 1) * (16384 / cp / 2) * 4 * 2048 * 10 / hbm;
      // Forward and backward see each merge once and twice; the window gains 3 x (c - 2)/(c - 1) of the merges.
      expect(without.cpExposedS - withMerge.cpExposedS).toBeCloseTo(3 * mergeS * (cp - 2) / (cp - 1), 12);
    }
  });
});

describe('ring attention over pods: the ring crosses the uplinks once per pod (docs/cost-model.md §3)', () => {
  // A slow NIC and a short sequence, so the K,V exchanges are exposed; 64 GPUs in 8-GPU domains.
  const site = (pods?: { podGpus: number; podOversubscription: number }, gpusPerNode = 8): Scenario => {
    const doc = readFixture('small/one-site') as Json;
    doc.model = { name: 'pods-ring', layers: 4, hidden: 2048, ffnHidden: 8192, heads: 32, kvHeads: 32, vocab: 32000, mlp: 'swiglu' };
    doc.training = { ...doc.training, seqLen: 16384, globalBatchSeqs: 8 };
    doc.cluster.sites[0] = { name: 'dc', gpus: 64, gpusPerNode, ...(pods ?? {}), gpu: { name: 'slow-nic', peakBf16Tflops: 989, memoryGiB: 80, hbmGBps: 3350, scaleUpGBps: 450, scaleUpDomainGpus: 8, nicGbps: 10 } };
    delete doc.search;
    return parseScenario(doc, 'pods-ring');
  };
  const exposed = (scenario: Scenario, tp: number, cp: number): number => {
    const p = plan(cp, tp);
    const [stage] = buildStages(scenario, p, [scenario.model.layers]);
    return stageTime(scenario, p, stage!, scenario.sites[0]!, 64).cpExposedS;
  };

  it('a ring of 32 GPUs over pods of 16 at 4:1 with its ranks 8 apart gets half a NIC; inside a pod or a domain, the NIC', () => {
    const flat = site();
    const podded = site({ podGpus: 16, podOversubscription: 4 });
    // tp 8 x cp 4 = 32 GPUs over two pods: 2 ranks per pod, 2 NICs / 4 = half the NIC: every exchange takes twice as long.
    const flatS = exposed(flat, 8, 4);
    expect(flatS).toBeGreaterThan(0);
    expect(exposed(podded, 8, 4)).toBeGreaterThan(flatS * 1.5);
    // tp 4 x cp 4 = 16 GPUs: inside one pod, as on the site without pods.
    expect(exposed(podded, 4, 4)).toBeCloseTo(exposed(flat, 4, 4), 12);
    // tp 2 x cp 4 = 8 GPUs: inside one 8-GPU NVLink domain, whatever the pods (4-GPU nodes and pods here).
    const smallPods = site({ podGpus: 4, podOversubscription: 4 }, 4);
    expect(smallPods.sites[0]!.scaleUpDomainGpus).toBe(8);
    expect(exposed(smallPods, 2, 4)).toBeCloseTo(exposed(site(undefined, 4), 2, 4), 12);
  });
});
