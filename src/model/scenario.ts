/**
 * A validated scenario: the spec with defaults applied, cross-field rules checked, GPU types
 * resolved from the catalog, link latencies in seconds and routes between every pair of sites.
 */
import { GPU_CATALOG, GPU_TYPE_NAMES, type GpuSpec } from './gpu-catalog';
import {
  scenarioSchema, type LinkSpec, type ModelSpec, type ScenarioSpec, type SearchSpec, type SiteSpec, type TrainingSpec,
} from './scenario-schema';
import { capabilitiesOf, type Framework, type Support } from './framework-capabilities';
import { checkPrices } from './price-check';
import { checkPrecision } from './precision-checks';
import { ScenarioValidationError, issuesFromZod, type InputIssue } from './validation-error';
import { FIBER_ONE_WAY_S_PER_KM, gbpsToBytesPerS } from './units';

export interface Site {
  readonly index: number;
  readonly name: string;
  readonly gpu: GpuSpec;
  readonly gpus: number;
  readonly gpusPerNode: number;
  /** GPUs in one NVLink domain at this site (catalog value unless the node is larger). */
  readonly scaleUpDomainGpus: number;
  readonly podGpus: number;
  readonly podOversubscription: number;
  /** GiB per GPU kept free (the site's memoryReserveGiB, 0 by default). */
  readonly memoryReserveGiB: number;
  /** GiB per GPU a plan may use: the device memory less memoryReserveGiB. */
  readonly memoryCapacityGiB: number;
}

export interface Link {
  readonly index: number;
  /** Site indices of the two ends. */
  readonly siteA: number;
  readonly siteB: number;
  /** `a<->b`, for messages and keys. */
  readonly label: string;
  readonly bandwidthBytesPerS: number;
  readonly rttS: number;
  readonly lossRate: number;
}

export interface Scenario {
  readonly spec: ScenarioSpec;
  readonly name: string;
  readonly model: ModelSpec & { readonly kvHeads: number };
  readonly training: TrainingSpec;
  readonly sites: readonly Site[];
  readonly links: readonly Link[];
  /** routes[a][b]: link indices on the fewest-hop path from site a to site b ([] when a = b). */
  readonly routes: readonly (readonly (readonly number[])[])[];
  readonly search: SearchSpec | undefined;
}

/**
 * Validates a parsed JSON value as a scenario. Throws {@link ScenarioValidationError} naming
 * every problem's JSON path; never throws anything else for any input.
 */
export function parseScenario(input: unknown, source?: string): Scenario {
  const parsed = scenarioSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new ScenarioValidationError(issuesFromZod(parsed.error), source);
  const spec = parsed.data;
  const issues: InputIssue[] = [];
  const sites = spec.cluster.sites.map((site, index) => resolveSite(site, index, issues));
  checkSiteNames(spec.cluster.sites, issues);
  checkModelSpec(spec.model, issues);
  checkPrecision(spec, sites, issues);
  const links = resolveLinks(spec.cluster.links, sites, issues);
  checkSearch(spec, sites, issues);
  checkPrices(spec, issues);
  if (issues.length > 0) throw new ScenarioValidationError(issues, source);
  const routes = computeRoutes(sites.length, links);
  checkConnected(sites, routes, issues);
  if (issues.length > 0) throw new ScenarioValidationError(issues, source);
  return {
    spec,
    name: spec.name,
    model: { ...spec.model, kvHeads: spec.model.kvHeads ?? spec.model.heads },
    training: spec.training,
    sites,
    links,
    routes,
    search: spec.search,
  };
}

function resolveSite(site: SiteSpec, index: number, issues: InputIssue[]): Site {
  const path = `cluster.sites[${index}]`;
  let gpu: GpuSpec = GPU_CATALOG['H100-SXM']!;
  if (site.gpu !== undefined && site.gpuType !== undefined) {
    issues.push({ path: `${path}.gpu`, message: 'give either gpuType or a custom gpu, not both' });
  } else if (site.gpu !== undefined) {
    gpu = site.gpu;
  } else if (site.gpuType === undefined) {
    issues.push({ path: `${path}.gpuType`, message: `is required (one of ${GPU_TYPE_NAMES.join(', ')}) unless a custom gpu is given` });
  } else if (GPU_CATALOG[site.gpuType] === undefined) {
    issues.push({ path: `${path}.gpuType`, message: `unknown GPU type '${site.gpuType}'; known: ${GPU_TYPE_NAMES.join(', ')} (or give a custom gpu)` });
  } else {
    gpu = GPU_CATALOG[site.gpuType]!;
  }
  if (site.gpus % site.gpusPerNode !== 0) {
    issues.push({ path: `${path}.gpus`, message: `${site.gpus} GPUs is not a whole number of ${site.gpusPerNode}-GPU nodes` });
  }
  const podGpus = site.podGpus ?? site.gpus;
  if (site.podGpus !== undefined && site.podGpus % site.gpusPerNode !== 0) {
    issues.push({ path: `${path}.podGpus`, message: `${site.podGpus} is not a whole number of ${site.gpusPerNode}-GPU nodes` });
  }
  if (site.memoryReserveGiB >= gpu.memoryGiB) {
    issues.push({ path: `${path}.memoryReserveGiB`, message: `${site.memoryReserveGiB} GiB leaves nothing of the ${gpu.memoryGiB} GiB per GPU (${gpu.name})` });
  }
  return {
    index,
    name: site.name,
    gpu,
    gpus: site.gpus,
    gpusPerNode: site.gpusPerNode,
    scaleUpDomainGpus: Math.max(gpu.scaleUpDomainGpus, site.gpusPerNode),
    podGpus: Math.min(podGpus, site.gpus),
    podOversubscription: site.podOversubscription,
    memoryReserveGiB: site.memoryReserveGiB,
    // Rounded once, so that 80 - 0.7 reads 79.3 wherever it is printed.
    memoryCapacityGiB: Number((gpu.memoryGiB - site.memoryReserveGiB).toFixed(9)),
  };
}

function checkSiteNames(sites: readonly SiteSpec[], issues: InputIssue[]): void {
  const seen = new Map<string, number>();
  sites.forEach((site, index) => {
    const first = seen.get(site.name);
    if (first !== undefined) {
      issues.push({ path: `cluster.sites[${index}].name`, message: `duplicate site name '${site.name}' (also cluster.sites[${first}])` });
    } else {
      seen.set(site.name, index);
    }
  });
}

/** Cross-field rules of a model spec (heads and kv heads, window layers, experts), as path-named issues. */
export function checkModelSpec(model: ModelSpec, issues: InputIssue[]): void {
  const kvHeads = model.kvHeads ?? model.heads;
  if (model.headDim === undefined && model.attention === undefined && model.hidden % model.heads !== 0) {
    issues.push({ path: 'model.heads', message: `hidden ${model.hidden} is not divisible by ${model.heads} heads (give model.headDim)` });
  }
  if (model.slidingWindow?.layers !== undefined && model.slidingWindow.layers > model.layers) {
    issues.push({ path: 'model.slidingWindow.layers', message: `${model.slidingWindow.layers} window layers exceed the model's ${model.layers}` });
  }
  if (model.heads % kvHeads !== 0) {
    issues.push({ path: 'model.kvHeads', message: `${model.heads} heads are not divisible by ${kvHeads} kv heads` });
  }
  if (model.moe) {
    if (model.moe.topK > model.moe.experts) {
      issues.push({ path: 'model.moe.topK', message: `topK ${model.moe.topK} exceeds ${model.moe.experts} experts` });
    }
    if (model.moe.denseLayers >= model.layers) {
      issues.push({ path: 'model.moe.denseLayers', message: `${model.moe.denseLayers} dense layers leave no MoE layer out of ${model.layers}` });
    }
    checkRoutingGroups(model.moe, issues);
  }
}

function checkRoutingGroups(moe: NonNullable<ModelSpec['moe']>, issues: InputIssue[]): void {
  const groups = moe.routingGroups;
  if (groups === undefined) return;
  if (moe.experts % groups.count !== 0) {
    issues.push({ path: 'model.moe.routingGroups.count', message: `${groups.count} groups do not divide ${moe.experts} experts` });
  } else if (groups.perToken > groups.count) {
    issues.push({ path: 'model.moe.routingGroups.perToken', message: `${groups.perToken} groups per token exceed ${groups.count} groups` });
  } else if (groups.perToken * (moe.experts / groups.count) < moe.topK) {
    issues.push({ path: 'model.moe.routingGroups.perToken', message: `${groups.perToken} groups of ${moe.experts / groups.count} experts cannot hold topK ${moe.topK}` });
  }
}

function resolveLinks(links: readonly LinkSpec[], sites: readonly Site[], issues: InputIssue[]): Link[] {
  const indexByName = new Map(sites.map((site) => [site.name, site.index]));
  const seenPairs = new Map<string, number>();
  const resolved: Link[] = [];
  links.forEach((link, index) => {
    const path = `cluster.links[${index}]`;
    const ends = link.between.map((name, end) => {
      const siteIndex = indexByName.get(name);
      if (siteIndex === undefined) issues.push({ path: `${path}.between[${end}]`, message: `names no site: '${name}'` });
      return siteIndex;
    });
    const [siteA, siteB] = ends;
    if (siteA === undefined || siteB === undefined) return;
    if (siteA === siteB) {
      issues.push({ path: `${path}.between`, message: `a link joins two different sites, got '${link.between[0]}' twice` });
      return;
    }
    const key = [siteA, siteB].sort((x, y) => x - y).join('-');
    const first = seenPairs.get(key);
    if (first !== undefined) {
      issues.push({ path: `${path}.between`, message: `duplicate link between '${link.between[0]}' and '${link.between[1]}' (also cluster.links[${first}])` });
      return;
    }
    seenPairs.set(key, index);
    if (link.rttMs === undefined && link.distanceKm === undefined) {
      issues.push({ path: `${path}.rttMs`, message: 'give rttMs or distanceKm' });
      return;
    }
    if (link.rttMs !== undefined && link.distanceKm !== undefined) {
      issues.push({ path: `${path}.distanceKm`, message: 'give rttMs or distanceKm, not both' });
      return;
    }
    const rttS = link.rttMs !== undefined ? link.rttMs / 1000 : 2 * FIBER_ONE_WAY_S_PER_KM * (link.distanceKm ?? 0);
    resolved.push({
      index: resolved.length,
      siteA,
      siteB,
      label: `${link.between[0]}<->${link.between[1]}`,
      bandwidthBytesPerS: gbpsToBytesPerS(link.bandwidthGbps),
      rttS,
      lossRate: link.lossRate,
    });
  });
  return resolved;
}

function checkSearch(spec: ScenarioSpec, sites: readonly Site[], issues: InputIssue[]): void {
  const search = spec.search;
  if (!search) return;
  const smallestNode = Math.min(...sites.map((site) => site.scaleUpDomainGpus));
  search.tp?.forEach((tp, i) => {
    if (spec.model.heads % tp !== 0) {
      issues.push({ path: `search.tp[${i}]`, message: `${tp} does not divide ${spec.model.heads} attention heads` });
    } else if (tp > smallestNode ? tp % smallestNode !== 0 : smallestNode % tp !== 0) {
      issues.push({ path: `search.tp[${i}]`, message: `${tp} does not divide the ${smallestNode}-GPU scale-up domain` });
    }
  });
  search.cp?.forEach((cp, i) => {
    if (spec.training.seqLen % cp !== 0) issues.push({ path: `search.cp[${i}]`, message: `${cp} does not divide seqLen ${spec.training.seqLen}` });
  });
  search.ep?.forEach((ep, i) => {
    if (!spec.model.moe && ep !== 1) issues.push({ path: `search.ep[${i}]`, message: 'expert parallelism needs a MoE model (model.moe)' });
    else if (spec.model.moe && spec.model.moe.experts % ep !== 0) {
      issues.push({ path: `search.ep[${i}]`, message: `${ep} does not divide ${spec.model.moe.experts} experts` });
    }
  });
  search.pp?.forEach((pp, i) => {
    if (pp > spec.model.layers) issues.push({ path: `search.pp[${i}]`, message: `${pp} stages exceed ${spec.model.layers} layers` });
  });
  if (search.framework !== undefined) checkFrameworkSearch(search.framework, search, issues);
}

/** A framework's space keeps the listed values it runs as planned: a list with none of them leaves nothing to search. */
function checkFrameworkSearch(framework: Framework, search: SearchSpec, issues: InputIssue[]): void {
  const caps = capabilitiesOf(framework);
  const lists = [
    ['schedules', search.schedules, caps.schedules],
    ['recompute', search.recompute, caps.recompute],
    ['zero', search.zero, caps.zero],
  ] as const;
  for (const [key, listed, table] of lists) {
    if (listed === undefined) continue;
    const support = table as Readonly<Record<string | number, Support>>;
    if (listed.some((value) => support[value]!.level === 'native')) continue;
    const runs = Object.keys(support).filter((value) => support[value]!.level === 'native').join(', ');
    issues.push({ path: `search.${key}`, message: `${caps.label} runs none of ${listed.join(', ')} as planned (it runs ${runs}); list one of those, or leave out search.framework` });
  }
}

/** Fewest-hop routes between all site pairs (breadth-first search; ties go to the lower link index). */
function computeRoutes(siteCount: number, links: readonly Link[]): number[][][] {
  const adjacency: { next: number; link: number }[][] = Array.from({ length: siteCount }, () => []);
  for (const link of links) {
    adjacency[link.siteA]!.push({ next: link.siteB, link: link.index });
    adjacency[link.siteB]!.push({ next: link.siteA, link: link.index });
  }
  return Array.from({ length: siteCount }, (_, from) => {
    const via: ({ prev: number; link: number } | null)[] = Array.from({ length: siteCount }, () => null);
    const seen = new Set([from]);
    const queue = [from];
    while (queue.length > 0) {
      const site = queue.shift()!;
      for (const edge of adjacency[site]!) {
        if (seen.has(edge.next)) continue;
        seen.add(edge.next);
        via[edge.next] = { prev: site, link: edge.link };
        queue.push(edge.next);
      }
    }
    return Array.from({ length: siteCount }, (_, to) => {
      const path: number[] = [];
      for (let at = to; at !== from; ) {
        const step = via[at];
        if (!step) return to === from ? [] : [-1];
        path.unshift(step.link);
        at = step.prev;
      }
      return path;
    });
  });
}

function checkConnected(sites: readonly Site[], routes: readonly (readonly (readonly number[])[])[], issues: InputIssue[]): void {
  for (const site of sites.slice(1)) {
    if (routes[0]![site.index]![0] === -1) {
      issues.push({ path: 'cluster.links', message: `no route from '${sites[0]!.name}' to '${site.name}': add a link` });
    }
  }
}
