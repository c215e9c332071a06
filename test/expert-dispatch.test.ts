/**
 * Expert-parallel dispatch (docs/cost-model.md §3, EP): the expected destinations of a token
 * against brute-force enumeration of every routing, the bytes per tier of each dispatcher, and
 * the stage time's use of them (one-domain all-to-all unchanged, overlap never slower).
 */
import { domainTouchedProbability, dispatchBytes, expertGroupShape, remoteDomainsPerToken } from '../src/model/expert-dispatch';
import { allToAllS, tierForGroup } from '../src/model/network';
import { layOutPlan } from '../src/model/placement';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { stageFlops, stageTime } from '../src/model/stage-cost';
import { mtpLinearFlopsPerToken, routerFlopsPerToken } from '../src/model/transformer';

/** Every k-subset of 0..n-1. */
function* subsets(n: number, k: number, start = 0, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === k) { yield prefix; return; }
  for (let i = start; i < n; i++) yield* subsets(n, k, i + 1, [...prefix, i]);
}

/** Mean number of remote domains a token reaches, over every routing allowed (uniform), by enumeration. */
function enumeratedRemoteDomains(experts: number, domains: number, topK: number, groups?: { count: number; perToken: number }): number {
  const perDomain = experts / domains;
  const perGroup = groups ? experts / groups.count : experts;
  let total = 0;
  let count = 0;
  for (const chosen of subsets(experts, topK)) {
    if (groups && new Set(chosen.map((e) => Math.floor(e / perGroup))).size > groups.perToken) continue;
    const reached = new Set(chosen.map((e) => Math.floor(e / perDomain)));
    total += [...reached].filter((d) => d !== 0).length; // the token's own GPU is in domain 0
    count++;
  }
  return total / count;
}

const moeScenario = (over: { ep?: number; dispatcher?: string; overlap?: boolean; gpus?: number } = {}): Scenario => parseScenario({
  version: 1,
  name: 'moe',
  model: {
    name: 'moe', layers: 8, hidden: 2048, ffnHidden: 6144, heads: 16, kvHeads: 4, vocab: 32000,
    moe: { experts: 64, topK: 8, expertFfnHidden: 768 },
  },
  training: {
    seqLen: 4096, globalBatchSeqs: 256, precision: 'bf16',
    overlap: { tensorParallel: true, dataParallel: true, expertParallel: over.overlap ?? false },
    expertDispatcher: over.dispatcher ?? 'alltoall',
  },
  cluster: { sites: [{ name: 's', gpuType: 'H100-SXM', gpus: over.gpus ?? 32 }], links: [] },
});

const epStage = (scenario: Scenario, ep: number) => {
  const plan = { tp: 1, cp: 1, ep, pp: 1, dp: scenario.sites[0]!.gpus, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 };
  const layout = layOutPlan(scenario, plan);
  return stageTime(scenario, layout.plan, layout.stages[0]!, scenario.sites[0]!, scenario.sites[0]!.gpus);
};

describe('expert dispatch', () => {
  it('the probability a domain is reached matches enumeration (no group limit)', () => {
    for (const [experts, domains, topK] of [[8, 2, 2], [12, 3, 3], [16, 4, 4], [16, 2, 5]] as const) {
      const share = experts / domains;
      const shape = { domains, ranksPerDomain: 1 };
      const model = { moe: { experts, topK } } as never;
      expect(remoteDomainsPerToken(model, shape)).toBeCloseTo(enumeratedRemoteDomains(experts, domains, topK), 12);
      expect(domainTouchedProbability(experts, share, topK)).toBeGreaterThan(0);
    }
  });

  it('group-limited routing reaches fewer domains, and never more than the groups a token may use', () => {
    // 16 experts in 4 groups of 4 on 4 domains, top-4 from at most 2 groups: at most 2 domains, 1 remote in mean < 3 x P.
    const groups = { count: 4, perToken: 2 };
    const limited = remoteDomainsPerToken({ moe: { experts: 16, topK: 4, routingGroups: groups } } as never, { domains: 4, ranksPerDomain: 1 });
    const free = remoteDomainsPerToken({ moe: { experts: 16, topK: 4 } } as never, { domains: 4, ranksPerDomain: 1 });
    expect(limited).toBeLessThan(free);
    expect(limited).toBeLessThanOrEqual(groups.perToken);
    // The cap is an upper estimate of the enumerated mean (the model never under-counts traffic).
    expect(limited).toBeGreaterThanOrEqual(enumeratedRemoteDomains(16, 4, 4, groups) - 1e-12);
  });

  it('deduplicating dispatchers never send more over the NIC than all-to-all', () => {
    const scenario = moeScenario();
    for (const ep of [2, 4, 8, 16, 32]) {
      const shape = expertGroupShape(scenario.sites[0]!, ep, 1);
      const a2a = dispatchBytes(scenario.model, shape, ep, 4096, 'alltoall');
      const deepep = dispatchBytes(scenario.model, shape, ep, 4096, 'deepep');
      expect(deepep.nicBytes).toBeLessThanOrEqual(a2a.nicBytes);
      if (shape.domains === 1) expect(a2a.nicBytes).toBe(0);
      else expect(a2a.nicBytes).toBeCloseTo(4096 * 8 * 2048 * 2 * (ep - 8) / ep, 3);
    }
  });

  it('inside one NVLink domain the all-to-all is the ring formula it always was', () => {
    const scenario = moeScenario({ gpus: 8 });
    const site = scenario.sites[0]!;
    const time = epStage(scenario, 8);
    const bytes = 4096 * 8 * 2048 * 2;
    expect(time.epExposedS).toBeCloseTo(4 * 8 * allToAllS(bytes, 8, tierForGroup(site, 8, false)), 12);
  });

  it('crossing nodes costs more than staying inside one; overlap and deduplication never cost more', () => {
    const inNode = epStage(moeScenario(), 8).epExposedS;
    const acrossAlltoall = epStage(moeScenario(), 32).epExposedS;
    const acrossDeepEp = epStage(moeScenario({ dispatcher: 'deepep' }), 32).epExposedS;
    const acrossOverlapped = epStage(moeScenario({ dispatcher: 'deepep', overlap: true }), 32).epExposedS;
    expect(acrossAlltoall).toBeGreaterThan(inNode);
    expect(acrossDeepEp).toBeLessThan(acrossAlltoall);
    expect(acrossOverlapped).toBeLessThanOrEqual(acrossDeepEp);
    expect(acrossOverlapped).toBeGreaterThan(0);
  });

  it('across pods only the bytes bound for other pods share the oversubscribed uplinks', () => {
    // 64 GPUs in pods of 16 at 4:1, all of them used (the site spills out of one pod).
    const podded = (): Scenario => {
      const spec = JSON.parse(JSON.stringify(moeScenario({ gpus: 64 }).spec));
      Object.assign(spec.cluster.sites[0], { podGpus: 16, podOversubscription: 4 });
      return parseScenario(spec);
    };
    const flat = moeScenario({ gpus: 64 });
    // EP 16: a group of 16 consecutive GPUs stays inside its pod, as on a site without pods.
    expect(epStage(podded(), 16).epExposedS).toBeCloseTo(epStage(flat, 16).epExposedS, 12);
    // EP 64 over four pods: of the 56 GPUs outside a sender's 8-GPU domain, 48 are in other pods,
    // so the NIC part takes 4 x 48/56 times as long (the all-to-all is NIC-bound here).
    const scenario = podded();
    const across = epStage(scenario, 64);
    const flatAcross = epStage(flat, 64);
    const site = scenario.sites[0]!;
    const bytes = dispatchBytes(scenario.model, expertGroupShape(site, 64, 1), 64, 4096, 'alltoall');
    const nic = tierForGroup(site, 64, false).bytesPerS;
    const perA2aFlat = bytes.nicBytes / nic;
    const perA2aPods = (bytes.nicBytes / nic) * 4 * (48 / 56);
    expect(across.epExposedS - flatAcross.epExposedS).toBeCloseTo(4 * 8 * (perA2aPods - perA2aFlat), 9);
  });

  it('rejects routing groups that cannot hold the experts a token needs', () => {
    const spec = JSON.parse(JSON.stringify(moeScenario().spec));
    spec.model.moe.routingGroups = { count: 16, perToken: 1 };
    expect(() => parseScenario(spec)).toThrow(/model\.moe\.routingGroups\.perToken: 1 groups of 4 experts cannot hold topK 8/);
    spec.model.moe.routingGroups = { count: 6, perToken: 2 };
    expect(() => parseScenario(spec)).toThrow(/model\.moe\.routingGroups\.count: 6 groups do not divide 64 experts/);
  });
});

describe('multi-token prediction under fp8', () => {
  it('runs the MTP modules\' linear layers in fp8 and only the logits in bf16', () => {
    const spec = JSON.parse(JSON.stringify(moeScenario().spec));
    spec.model.mtpLayers = 1;
    spec.training.precision = 'fp8';
    const scenario = parseScenario(spec);
    const layout = layOutPlan(scenario, { tp: 1, cp: 1, ep: 1, pp: 2, dp: 16, microBatchSeqs: 1, schedule: '1f1b', virtualStages: 1, recompute: 'none', zero: 1 });
    const last = layout.stages[1]!;
    const flops = stageFlops(scenario, layout.plan, last);
    const tokens = 4096;
    const m = scenario.model;
    // Everything but the routers and the two logits (model and MTP head) is in fp8.
    const bf16Only = (routerFlopsPerToken(m) * last.moeLayers + 2 * 2 * m.hidden * m.vocab) * tokens;
    expect(flops.gemmFlops - flops.linearFlops).toBeCloseTo(bf16Only, -3);
    expect(mtpLinearFlopsPerToken(m)).toBeGreaterThan(0);
  });
});

describe('expert load imbalance', () => {
  it('the busiest rank\'s extra tokens lengthen its expert GEMMs and the all-to-all, and nothing else', () => {
    const balanced = moeScenario();
    const spec = JSON.parse(JSON.stringify(balanced.spec));
    spec.model.moe.loadImbalance = 1.25;
    const skewed = parseScenario(spec);
    const a = epStage(balanced, 16);
    const b = epStage(skewed, 16);
    expect(b.epExposedS).toBeGreaterThan(1.2 * a.epExposedS);
    expect(b.epExposedS).toBeLessThan(1.25 * a.epExposedS); // the latency part does not grow
    expect(b.forwardS).toBeGreaterThan(a.forwardS);
    expect(b.tpExposedS).toBe(a.tpExposedS);
    spec.model.moe.loadImbalance = 0.9;
    expect(() => parseScenario(spec)).toThrow(/model\.moe\.loadImbalance: must be at least 1/);
  });
});
