/**
 * Random small scenarios for property tests: 2-4 sites of catalog GPUs (some in oversubscribed
 * pods), chain, star or full-mesh links of random bandwidth, distance and loss, a tiny dense or
 * MoE model, a random slice of the search space (context parallelism, idle GPUs forbidden, a
 * required iteration time now and then). Small enough that exhaustive search usually finishes in
 * a second or two.
 */
import fc from 'fast-check';

type Json = any; // scenario JSON, checked by parseScenario

const GPU_TYPES = ['H100-SXM', 'A100-80GB', 'B200', 'H800'] as const;

/** A non-empty subset of `values`, in their order. */
const someOf = <T>(values: readonly T[]) => fc.subarray([...values], { minLength: 1 });

const siteArbitrary = fc.record({
  gpuType: fc.constantFrom(...GPU_TYPES),
  gpusPerNode: fc.constantFrom(2, 4, 8),
  nodes: fc.constantFrom(1, 1, 2, 4),
  /** Oversubscription between two pods, one time in three (sites of an even node count). */
  pods: fc.constantFrom(null, null, 2, 4),
});

const linkArbitrary = fc.record({
  bandwidthGbps: fc.constantFrom(50, 200, 800, 3200),
  distanceKm: fc.constantFrom(1, 50, 500, 3000),
  lossRate: fc.constantFrom(0, 0, 1e-5, 1e-3),
});

export const smallScenarioArbitrary = fc.record({
  sites: fc.array(siteArbitrary, { minLength: 2, maxLength: 4 }),
  topology: fc.constantFrom('chain', 'star', 'mesh'),
  links: fc.array(linkArbitrary, { minLength: 3, maxLength: 3 }),
  moe: fc.boolean(),
  layers: fc.constantFrom(4, 6, 8),
  hidden: fc.constantFrom(1024, 2048),
  seqLen: fc.constantFrom(1024, 2048, 4096),
  globalBatchSeqs: fc.constantFrom(2, 4, 6, 8, 12),
  tp: someOf([1, 2]),
  cp: fc.constantFrom([1], [1], [1], [1, 2]),
  pp: someOf([1, 2, 3, 4]),
  ep: someOf([1, 2]),
  microBatchSeqs: someOf([1, 2]),
  schedules: someOf(['gpipe', '1f1b', 'interleaved', 'zb-h1'] as const),
  recompute: someOf(['none', 'full'] as const),
  zero: someOf([0, 1, 3] as const),
  allowGradientCompression: fc.boolean(),
  allowIdleGpus: fc.constantFrom(true, true, true, false),
  /** A required iteration time, one time in five. */
  maxIterationTimeS: fc.constantFrom(null, null, null, null, null, null, null, null, 0.03, 0.3),
}).map((r): Json => {
  const names = r.sites.map((_, i) => `site-${i + 1}`);
  // Four sites get one small node each, so that exhaustive search stays within seconds.
  const four = r.sites.length === 4;
  const sites = r.sites.map((s, i) => {
    const gpusPerNode = four ? Math.min(s.gpusPerNode, 4) : s.gpusPerNode;
    const nodes = four ? 1 : s.nodes;
    const gpus = gpusPerNode * nodes;
    const site: Json = { name: names[i], gpuType: s.gpuType, gpus, gpusPerNode };
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
  const search: Json = {
    tp: r.tp, cp: r.cp, pp: r.pp, microBatchSeqs: r.microBatchSeqs, schedules: r.schedules, virtualStages: [2],
    recompute: r.recompute, zero: r.zero, allowGradientCompression: r.allowGradientCompression,
    allowIdleGpus: r.allowIdleGpus,
  };
  if (r.moe) {
    model.moe = { experts: 8, topK: 2, expertFfnHidden: r.hidden / 2, sharedExperts: 1, denseLayers: 1 };
    search.ep = r.ep;
  }
  return {
    version: 1, name: 'random-small', model,
    training: { seqLen: r.seqLen, globalBatchSeqs: r.globalBatchSeqs, precision: 'bf16', ...(r.maxIterationTimeS === null ? {} : { maxIterationTimeS: r.maxIterationTimeS }) },
    cluster: { sites, links }, search,
  };
});
