/**
 * The requirements a scenario imposes on every plan, one per constraint family and site or link
 * (docs/diagnosis.md §1), each with the scenario edit that drops it: sets it to a value generous
 * enough that it no longer binds. The conflict search works over these; the smallest-relaxation
 * search changes one of them by the least amount instead.
 */
import type { Scenario } from '../model/scenario';
import { DEFAULT_SEARCH, type ScenarioSpec, type SearchSpec, type SiteSpec } from '../model/scenario-schema';

export type ConstraintKind = 'memory' | 'gpu-count' | 'batch-divisibility' | 'search-space' | 'link-capacity' | 'iteration-time';

export interface Requirement {
  /** Stable key, e.g. `memory[bldg-b]`, `search.recompute`, `link-capacity[a<->b]`. */
  readonly id: string;
  readonly constraint: ConstraintKind;
  readonly site?: string;
  readonly link?: string;
  /** JSON path of the scenario field it comes from. */
  readonly path: string;
  /** What the requirement is, in the user's units. */
  readonly detail: string;
  /** The scenario with this requirement dropped (a pure edit of the spec). */
  readonly drop: (spec: ScenarioSpec) => ScenarioSpec;
}

/** Search fields that restrict the plan space, with the widest domain the planner accepts for each. */
export const SEARCH_DOMAINS = {
  tp: [1, 2, 4, 8, 16, 32, 64, 72],
  cp: [1, 2, 4, 8, 16],
  ep: [1, 2, 4, 8, 16, 32, 64],
  pp: [1, 2, 4, 8, 16, 32, 64, 128],
  microBatchSeqs: [1, 2, 4, 8],
  virtualStages: [2, 3, 4, 8],
  schedules: ['gpipe', '1f1b', 'interleaved', 'zb-h1', 'zbv', 'interleaved-zb', 'dualpipev'],
  recompute: ['none', 'selective', 'full'],
  zero: [0, 1, 2, 3],
  rankOrders: ['tp-cp-ep-dp-pp', 'tp-cp-ep-pp-dp'],
} as const satisfies Record<string, readonly (number | string)[]>;
export type SearchField = keyof typeof SEARCH_DOMAINS;
export const SEARCH_FIELDS = Object.keys(SEARCH_DOMAINS) as SearchField[];

/** Memory and GPU counts are dropped by multiplying them by this. */
const GENEROUS_FACTOR = 16;
/** Link bandwidth is dropped by multiplying it by this. */
const GENEROUS_BANDWIDTH_FACTOR = 100;

// Pure edits of the spec. Each returns a new spec and leaves its input alone.

export function withSite(spec: ScenarioSpec, siteIndex: number, edit: (site: SiteSpec) => SiteSpec): ScenarioSpec {
  const sites = spec.cluster.sites.map((site, i) => (i === siteIndex ? edit(site) : site));
  return { ...spec, cluster: { ...spec.cluster, sites } };
}

export function withSiteMemoryGiB(spec: ScenarioSpec, scenario: Scenario, siteIndex: number, memoryGiB: number): ScenarioSpec {
  const gpu = scenario.sites[siteIndex]!.gpu;
  return withSite(spec, siteIndex, (site) => {
    const { gpuType: _dropped, ...rest } = site;
    return { ...rest, gpu: { ...gpu, memoryGiB } };
  });
}

export function withSiteGpus(spec: ScenarioSpec, siteIndex: number, gpus: number): ScenarioSpec {
  return withSite(spec, siteIndex, (site) => ({ ...site, gpus }));
}

export function withLinkBandwidthGbps(spec: ScenarioSpec, linkIndex: number, bandwidthGbps: number): ScenarioSpec {
  const links = spec.cluster.links.map((link, i) => (i === linkIndex ? { ...link, bandwidthGbps } : link));
  return { ...spec, cluster: { ...spec.cluster, links } };
}

export function withSearch(spec: ScenarioSpec, edit: (search: SearchSpec) => SearchSpec): ScenarioSpec {
  const search = edit(spec.search ?? DEFAULT_SEARCH);
  return { ...spec, search };
}

export function withGlobalBatchSeqs(spec: ScenarioSpec, globalBatchSeqs: number): ScenarioSpec {
  return { ...spec, training: { ...spec.training, globalBatchSeqs } };
}

export function withMaxIterationTimeS(spec: ScenarioSpec, maxIterationTimeS: number | undefined): ScenarioSpec {
  const { maxIterationTimeS: _dropped, ...training } = spec.training;
  return { ...spec, training: maxIterationTimeS === undefined ? training : { ...training, maxIterationTimeS } };
}

/** The nearest power of two to n (ties go up): a batch that divides by every power-of-two dp x microbatch. */
export function nearestPowerOfTwo(n: number): number {
  const below = 2 ** Math.floor(Math.log2(n));
  return n - below < 2 * below - n ? below : 2 * below;
}

/** Every requirement of the scenario, in the order the conflict search tries to drop them. */
export function scenarioRequirements(scenario: Scenario): Requirement[] {
  const spec = scenario.spec;
  const requirements: Requirement[] = [];
  // Software-only restrictions first: the deletion filter keeps what it tries last, and hardware is what users asked about.
  for (const field of SEARCH_FIELDS) {
    const values = spec.search?.[field];
    if (values === undefined) continue;
    requirements.push({
      id: `search.${field}`, constraint: 'search-space', path: `search.${field}`,
      detail: `search.${field} restricted to [${values.join(', ')}]`,
      drop: (s) => withSearch(s, (search) => { const { [field]: _dropped, ...rest } = search; return rest as SearchSpec; }),
    });
  }
  if (spec.search?.evenLayerSplit) {
    requirements.push({
      id: 'search.evenLayerSplit', constraint: 'search-space', path: 'search.evenLayerSplit',
      detail: `search.evenLayerSplit: the model's ${spec.model.layers} layers split evenly over the pp x v virtual stages`,
      drop: (s) => withSearch(s, (search) => ({ ...search, evenLayerSplit: false })),
    });
  }
  const deadlineS = spec.training.maxIterationTimeS;
  if (deadlineS !== undefined) {
    requirements.push({
      id: 'iteration-time', constraint: 'iteration-time', path: 'training.maxIterationTimeS',
      detail: `iteration must take at most ${deadlineS} s`,
      drop: (s) => withMaxIterationTimeS(s, undefined),
    });
    // Bandwidth binds only against a required iteration time: without one a slow link makes plans slower, never infeasible.
    scenario.links.forEach((link, i) => {
      const gbps = spec.cluster.links[i]!.bandwidthGbps;
      requirements.push({
        id: `link-capacity[${link.label}]`, constraint: 'link-capacity', link: link.label, path: `cluster.links[${i}].bandwidthGbps`,
        detail: `link ${link.label} carries at most ${gbps} Gb/s per direction`,
        drop: (s) => withLinkBandwidthGbps(s, i, s.cluster.links[i]!.bandwidthGbps * GENEROUS_BANDWIDTH_FACTOR),
      });
    });
  }
  const batch = spec.training.globalBatchSeqs;
  if (nearestPowerOfTwo(batch) !== batch) {
    requirements.push({
      id: 'batch-divisibility', constraint: 'batch-divisibility', path: 'training.globalBatchSeqs',
      detail: `globalBatchSeqs ${batch} must be split exactly into replicas x microbatches x microbatch size`,
      drop: (s) => withGlobalBatchSeqs(s, nearestPowerOfTwo(batch)),
    });
  }
  scenario.sites.forEach((site, i) => {
    requirements.push({
      id: `gpu-count[${site.name}]`, constraint: 'gpu-count', site: site.name, path: `cluster.sites[${i}].gpus`,
      detail: `${site.name} has ${site.gpus} GPUs`,
      drop: (s) => withSiteGpus(s, i, s.cluster.sites[i]!.gpus * GENEROUS_FACTOR),
    });
  });
  scenario.sites.forEach((site, i) => {
    requirements.push({
      id: `memory[${site.name}]`, constraint: 'memory', site: site.name, path: `cluster.sites[${i}].gpuType`,
      detail: `${site.name}'s GPUs (${site.gpu.name}) have ${site.gpu.memoryGiB} GiB each${site.memoryReserveGiB > 0 ? `, ${site.memoryCapacityGiB} past the ${site.memoryReserveGiB} GiB reserved` : ''}`,
      drop: (s) => withSiteMemoryGiB(s, scenario, i, site.gpu.memoryGiB * GENEROUS_FACTOR),
    });
  });
  return requirements;
}

/** The spec with every listed requirement dropped. */
export function dropAll(spec: ScenarioSpec, requirements: readonly Requirement[]): ScenarioSpec {
  return requirements.reduce((s, r) => r.drop(s), spec);
}
