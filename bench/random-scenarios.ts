/**
 * Random small scenarios for property tests and the bound-validity benchmark: 2-4 sites of catalog
 * or custom GPUs (scale-up fabric slower than, about equal to or far faster than the NIC; small
 * and large memory; odd node and scale-up domain sizes; some sites in oversubscribed pods), chain,
 * star or full-mesh links from 10 Gb/s to 25.6 Tb/s, 0-10,000 km, with or without loss, a tiny
 * dense or MoE model in bf16 or fp8, and a random slice of the search space (every schedule,
 * context parallelism, idle GPUs forbidden, a required iteration time now and then). Small enough
 * that exhaustive search usually finishes in a second or two.
 */
import fc from 'fast-check';

type Json = any; // scenario JSON, checked by parseScenario

const GPU_TYPES = ['H100-SXM', 'A100-80GB', 'B200', 'H800'] as const;

/** A non-empty subset of `values`, in their order. */
const someOf = <T>(values: readonly T[]) => fc.subarray([...values], { minLength: 1 });

/**
 * A GPU not in the catalog: PCIe-class (16 GB/s) to NVLink-5-class (900 GB/s) scale-up, 100 Gb/s
 * to 3.2 Tb/s NICs, so either tier can be the faster one; 24-192 GiB.
 */
const customGpuArbitrary = fc.record({
  peakBf16Tflops: fc.constantFrom(100, 400, 989, 2500),
  fp8Gain: fc.constantFrom(null, 2),
  memoryGiB: fc.constantFrom(24, 48, 80, 192),
  hbmGBps: fc.constantFrom(1000, 3000, 8000),
  scaleUpGBps: fc.constantFrom(16, 64, 300, 900),
  nicGbps: fc.constantFrom(100, 400, 800, 3200),
});

const siteArbitrary = fc.record({
  /** A catalog GPU two times in three, else a custom one. */
  gpuType: fc.constantFrom(...GPU_TYPES, ...GPU_TYPES),
  customGpu: fc.option(customGpuArbitrary, { freq: 2 }),
  gpusPerNode: fc.constantFrom(2, 3, 4, 6, 8),
  nodes: fc.constantFrom(1, 1, 2, 4),
  /** Custom GPUs only: a scale-up domain of one node, or of two (NVL-style racks). */
  nodesPerDomain: fc.constantFrom(1, 1, 2),
  /** Oversubscription between two pods, one time in three (sites of an even node count). */
  pods: fc.constantFrom(null, null, 2, 4),
});

const linkArbitrary = fc.record({
  bandwidthGbps: fc.constantFrom(10, 50, 200, 800, 3200, 25600),
  distanceKm: fc.constantFrom(0, 1, 50, 500, 3000, 10000),
  lossRate: fc.constantFrom(0, 0, 1e-6, 1e-5, 1e-3),
});

export const smallScenarioArbitrary = fc.record({
  sites: fc.array(siteArbitrary, { minLength: 2, maxLength: 4 }),
  topology: fc.constantFrom('chain', 'star', 'mesh'),
  links: fc.array(linkArbitrary, { minLength: 3, maxLength: 3 }),
  moe: fc.boolean(),
  /** MoE only: the token dispatcher, all-to-all overlap, group-limited routing (4 groups, 2 per token). */
  dispatcher: fc.constantFrom('alltoall', 'deepep', 'hybridep'),
  expertOverlap: fc.boolean(),
  routingGroups: fc.boolean(),
  layers: fc.constantFrom(4, 6, 8),
  hidden: fc.constantFrom(1024, 2048),
  seqLen: fc.constantFrom(1024, 2048, 4096),
  globalBatchSeqs: fc.constantFrom(2, 4, 6, 8, 12),
  tp: someOf([1, 2, 4]),
  cp: fc.constantFrom([1], [1], [1], [1, 2]),
  pp: someOf([1, 2, 3, 4]),
  ep: someOf([1, 2, 4]),
  microBatchSeqs: someOf([1, 2]),
  schedules: someOf(['gpipe', '1f1b', 'interleaved', 'zb-h1', 'zbv', 'interleaved-zb', 'dualpipev'] as const),
  virtualStages: someOf([2, 3]),
  precision: fc.constantFrom('bf16', 'bf16', 'fp8'),
  recompute: someOf(['none', 'full'] as const),
  zero: someOf([0, 1, 3] as const),
  allowGradientCompression: fc.boolean(),
  // One time in eight: with idle GPUs forbidden the search keeps only the dp that uses every GPU,
  // so such scenarios have few candidates (bounds-random-scenarios counts them against its runs).
  allowIdleGpus: fc.constantFrom(true, true, true, true, true, true, true, false),
  /** A required iteration time, one time in five. */
  maxIterationTimeS: fc.constantFrom(null, null, null, null, null, null, null, null, 0.03, 0.3),
}).map((r): Json => {
  const names = r.sites.map((_, i) => `site-${i + 1}`);
  // Four sites get one small node each, so that exhaustive search stays within seconds.
  const four = r.sites.length === 4;
  const sites = r.sites.map((s, i) => {
    // Catalog GPUs come in the catalog's 8-GPU scale-up domains: nodes of 2, 4 or 8.
    const nodeGpus = s.customGpu === null && (s.gpusPerNode === 3 || s.gpusPerNode === 6) ? 4 : s.gpusPerNode;
    const gpusPerNode = four ? Math.min(nodeGpus, 4) : nodeGpus;
    const nodes = four ? 1 : s.nodes;
    const gpus = gpusPerNode * nodes;
    const site: Json = { name: names[i], gpus, gpusPerNode };
    if (s.customGpu === null) site.gpuType = s.gpuType;
    else {
      const { fp8Gain, ...figures } = s.customGpu;
      site.gpu = {
        name: `custom-${i + 1}`, ...figures, scaleUpDomainGpus: gpusPerNode * s.nodesPerDomain,
        ...(fp8Gain === null ? {} : { peakFp8Tflops: figures.peakBf16Tflops * fp8Gain }),
      };
    }
    // Pods of whole nodes, joined by an oversubscribed layer.
    if (s.pods !== null && nodes % 2 === 0) Object.assign(site, { podGpus: gpus / 2, podOversubscription: s.pods });
    return site;
  });
  const pairs: [number, number][] = [];
  for (let a = 0; a < sites.length; a++) for (let b = a + 1; b < sites.length; b++) {
    if (r.topology === 'mesh' || (r.topology === 'chain' ? b === a + 1 : a === 0)) pairs.push([a, b]);
  }
  const links = pairs.map(([a, b], i) => ({ between: [names[a], names[b]], ...r.links[i % r.links.length]! }));
  const model: Json = { name: 'tiny', layers: r.layers, hidden: r.hidden, ffnHidden: 4 * r.hidden, heads: 16, kvHeads: 8, vocab: 32000, mlp: 'swiglu' };
  // Only tensor-parallel degrees that divide every site's scale-up domain (the spec rejects others).
  const domains = sites.map((site: Json) => site.gpu?.scaleUpDomainGpus ?? 8);
  const tp = r.tp.filter((t) => domains.every((d: number) => d % t === 0));
  const search: Json = {
    tp: tp.length > 0 ? tp : [1], cp: r.cp, pp: r.pp, microBatchSeqs: r.microBatchSeqs, schedules: r.schedules, virtualStages: r.virtualStages,
    recompute: r.recompute, zero: r.zero, allowGradientCompression: r.allowGradientCompression,
    allowIdleGpus: r.allowIdleGpus,
  };
  if (r.moe) {
    model.moe = {
      experts: 8, topK: 2, expertFfnHidden: r.hidden / 2, sharedExperts: 1, denseLayers: 1,
      ...(r.routingGroups ? { routingGroups: { count: 4, perToken: 2 } } : {}),
    };
    search.ep = r.ep;
  }
  // Dense scenarios also search the rank order tp-cp-ep-pp-dp half the time (derived from the
  // draw MoE scenarios use for all-to-all overlap, so the generated stream is unchanged).
  if (!r.moe && r.expertOverlap) search.rankOrders = ['tp-cp-ep-dp-pp', 'tp-cp-ep-pp-dp'];
  const moeTraining = r.moe ? { expertDispatcher: r.dispatcher, overlap: { tensorParallel: true, dataParallel: true, expertParallel: r.expertOverlap } } : {};
  return {
    version: 1, name: 'random-small', model,
    training: {
      seqLen: r.seqLen, globalBatchSeqs: r.globalBatchSeqs, precision: r.precision, ...moeTraining,
      ...(r.maxIterationTimeS === null ? {} : { maxIterationTimeS: r.maxIterationTimeS }),
      // fp8 parameter gather on the fp8 scenarios that may compress gradients (derived, so the
      // generated stream is unchanged): its sync bytes meet compression and every ZeRO stage.
      ...(r.precision === 'fp8' && r.allowGradientCompression ? { fp8ParamGather: true } : {}),
    },
    cluster: { sites, links }, search,
  };
});
