/**
 * The smallest change to one requirement, alone, that makes a plan fit the scenario
 * (docs/diagnosis.md §4). Numeric requirements are searched by bisection between the current
 * value (no plan) and a generous one, shrinking the upper end to what the plan found actually
 * uses; every value returned has been re-solved and fits.
 */
import { canonicalJson } from '../model/canonical-json';
import type { Evaluation } from '../model/evaluate';
import type { Scenario } from '../model/scenario';
import type { ScenarioSpec, SearchSpec } from '../model/scenario-schema';
import type { FeasibilityOracle } from './feasibility-oracle';
import {
  SEARCH_DOMAINS, withGlobalBatchSeqs, withLinkBandwidthGbps, withMaxIterationTimeS, withSearch, withSiteGpus, withSiteMemoryGiB,
  type Requirement, type SearchField,
} from './requirements';

export interface Relaxation {
  /** What to change, in words: "raise GPU memory at bldg-b to 93.4 GiB per GPU (has 80)". */
  readonly change: string;
  /** JSON path of the scenario field to change. */
  readonly path: string;
  readonly oldValue: number | boolean | readonly (number | string)[] | null;
  readonly newValue: number | boolean | readonly (number | string)[];
  readonly unit: string;
  /** Relative size of the change ((new - old) / old); 0 for a search-space widening (software only). */
  readonly size: number;
  /** Iteration time of the plan the re-solve found with the change, s. */
  readonly verifiedIterationTimeS: number;
}

/** Applies a relaxation to a scenario spec (for callers that want to re-plan with it). */
export function applyRelaxation(spec: ScenarioSpec, scenario: Scenario, relaxation: Relaxation): ScenarioSpec {
  const path = relaxation.path;
  const site = /^cluster\.sites\[(\d+)\]\.(gpus|gpu\.memoryGiB)$/.exec(path);
  if (site) {
    const index = Number(site[1]);
    return site[2] === 'gpus' ? withSiteGpus(spec, index, relaxation.newValue as number) : withSiteMemoryGiB(spec, scenario, index, relaxation.newValue as number);
  }
  const link = /^cluster\.links\[(\d+)\]\.bandwidthGbps$/.exec(path);
  if (link) return withLinkBandwidthGbps(spec, Number(link[1]), relaxation.newValue as number);
  if (path === 'training.globalBatchSeqs') return withGlobalBatchSeqs(spec, relaxation.newValue as number);
  if (path === 'training.maxIterationTimeS') return withMaxIterationTimeS(spec, relaxation.newValue as number);
  const search = /^search\.(\w+)$/.exec(path);
  if (search) return withSearch(spec, (s) => ({ ...s, [search[1]!]: relaxation.newValue }) as SearchSpec);
  throw new Error(`no way to apply a relaxation of ${path}`);
}

/** Bisection steps for numeric requirements (each one re-solve). */
const BISECTION_STEPS = 8;
/**
 * Proven gap the iteration-time relaxation's search stops at: its value is a verified plan's time
 * and the relaxation prints the proven bound beside it, so 2% (the 4-site scenarios of the
 * diagnosis bench prove it in a few seconds where 1% takes them past the time limit) costs the
 * user at most 2% of tightness and says how much.
 */
const ITERATION_TIME_GAP = 0.02;

interface Probe {
  /** The value to try. */
  readonly at: (value: number) => ScenarioSpec;
  /** What the fitting plan actually needs of the resource (<= the value tried), if the cost model tells. */
  readonly used?: (evaluation: Evaluation) => number;
  /** Rounds a value up to the resource's granularity. */
  readonly round: (value: number) => number;
}

/** The least value in (current, generous] at which a plan fits, or undefined if even `generous` does not. */
async function leastFittingValue(oracle: FeasibilityOracle, current: number, generous: number, probe: Probe): Promise<{ value: number; evaluation: Evaluation } | undefined> {
  const top = await oracle.check(probe.at(generous));
  if (top.feasibility !== 'feasible') return undefined;
  let lo = current;
  let hi = generous;
  let evaluation = top.evaluation!;
  const tighten = async (value: number) => {
    const answer = await oracle.check(probe.at(value));
    if (answer.feasibility !== 'feasible') return false;
    hi = value;
    evaluation = answer.evaluation!;
    return true;
  };
  // The plan found uses at most what it was given: try exactly that first.
  if (probe.used) {
    const need = probe.round(Math.max(probe.used(evaluation), current));
    if (need > lo && need < hi) await tighten(need);
  }
  for (let step = 0; step < BISECTION_STEPS; step++) {
    const mid = probe.round((lo + hi) / 2);
    if (mid <= lo || mid >= hi) break;
    if (await tighten(mid)) {
      if (probe.used) {
        const need = probe.round(Math.max(probe.used(evaluation), current));
        if (need > lo && need < hi) await tighten(need);
      }
    } else {
      lo = mid;
    }
  }
  return { value: hi, evaluation };
}

const roundTo = (step: number) => (value: number) => Math.ceil(value / step - 1e-9) * step;
const roundSignificant = (value: number) => {
  const magnitude = 10 ** (Math.floor(Math.log10(value)) - 2);
  return Math.ceil(value / magnitude - 1e-9) * magnitude;
};
const fmt = (value: number) => Number(value.toPrecision(6)).toString();

const memoryRelaxation = (scenario: Scenario, index: number, value: number, verifiedIterationTimeS: number): Relaxation => {
  const site = scenario.sites[index]!;
  const capacity = site.gpu.memoryGiB;
  const reserve = site.memoryReserveGiB > 0 ? `, ${fmt(site.memoryReserveGiB)} of it reserved` : '';
  return {
    change: `needs ${fmt(value)} GiB per GPU at ${site.name} (has ${capacity}${reserve}, ${site.gpu.name})`,
    path: `cluster.sites[${index}].gpu.memoryGiB`, oldValue: capacity, newValue: value, unit: 'GiB',
    size: (value - capacity) / capacity, verifiedIterationTimeS,
  };
};

const gpuCountRelaxation = (scenario: Scenario, index: number, gpus: number, verifiedIterationTimeS: number): Relaxation => {
  const site = scenario.sites[index]!;
  return {
    change: `add ${gpus - site.gpus} GPUs to ${site.name} (has ${site.gpus}; needs ${gpus})`,
    path: `cluster.sites[${index}].gpus`, oldValue: site.gpus, newValue: gpus, unit: 'GPUs',
    size: (gpus - site.gpus) / site.gpus, verifiedIterationTimeS,
  };
};

/**
 * The same relaxation for site `to`, when swapping sites `from` and `to` maps the scenario onto
 * itself (docs/diagnosis.md §4): the swapped scenario is the same problem, so the least fitting
 * value and the plan's time carry over.
 */
export function mirroredRelaxation(scenario: Scenario, relaxation: Relaxation, from: number, to: number): Relaxation | undefined {
  if (relaxation.path === `cluster.sites[${from}].gpus`) return gpuCountRelaxation(scenario, to, relaxation.newValue as number, relaxation.verifiedIterationTimeS);
  if (relaxation.path === `cluster.sites[${from}].gpu.memoryGiB`) return memoryRelaxation(scenario, to, relaxation.newValue as number, relaxation.verifiedIterationTimeS);
  return undefined;
}

/** Whether exchanging sites a and b (their names in the links) leaves the scenario the same. */
export function sitesAreSymmetric(spec: ScenarioSpec, a: number, b: number): boolean {
  const sites = spec.cluster.sites;
  const nameA = sites[a]!.name;
  const nameB = sites[b]!.name;
  const { name: _a, ...restA } = sites[a]!;
  const { name: _b, ...restB } = sites[b]!;
  if (canonicalJson(restA) !== canonicalJson(restB)) return false;
  const swap = (name: string) => (name === nameA ? nameB : name === nameB ? nameA : name);
  const linkKey = (link: ScenarioSpec['cluster']['links'][number], rename: (n: string) => string) => {
    const { between, ...rest } = link;
    return canonicalJson({ between: between.map(rename).sort(), ...rest });
  };
  const original = spec.cluster.links.map((l) => linkKey(l, (n) => n)).sort();
  const swapped = spec.cluster.links.map((l) => linkKey(l, swap)).sort();
  return original.every((key, i) => key === swapped[i]);
}


export async function smallestRelaxations(spec: ScenarioSpec, scenario: Scenario, requirement: Requirement, oracle: FeasibilityOracle): Promise<Relaxation[]> {
  switch (requirement.constraint) {
    case 'memory': {
      const index = scenario.sites.findIndex((s) => s.name === requirement.site);
      const site = scenario.sites[index]!;
      const capacity = site.gpu.memoryGiB;
      const reserveGiB = site.memoryReserveGiB;
      const found = await leastFittingValue(oracle, capacity, capacity * 16, {
        at: (v) => withSiteMemoryGiB(spec, scenario, index, v),
        // The device memory a plan needs: its peak plus the site's reserve.
        used: (e) => e.predicted.sites[index]!.memoryGiBPerGpu + reserveGiB,
        round: roundTo(0.1),
      });
      if (!found) return [];
      return [memoryRelaxation(scenario, index, Number(found.value.toFixed(1)), found.evaluation.predicted.iterationTimeS)];
    }
    case 'gpu-count': {
      const index = scenario.sites.findIndex((s) => s.name === requirement.site);
      const site = scenario.sites[index]!;
      const found = await leastFittingValue(oracle, site.gpus, site.gpus * 16, {
        at: (v) => withSiteGpus(spec, index, v),
        used: (e) => e.predicted.sites[index]!.gpusUsed,
        round: roundTo(site.gpusPerNode),
      });
      if (!found) return [];
      return [gpuCountRelaxation(scenario, index, found.value, found.evaluation.predicted.iterationTimeS)];
    }
    case 'link-capacity': {
      const index = scenario.links.findIndex((l) => l.label === requirement.link);
      const gbps = spec.cluster.links[index]!.bandwidthGbps;
      const found = await leastFittingValue(oracle, gbps, gbps * 100, {
        at: (v) => withLinkBandwidthGbps(spec, index, v),
        round: roundSignificant,
      });
      if (!found) return [];
      return [{
        change: `needs ${fmt(found.value)} Gb/s on ${requirement.link} (has ${gbps})`,
        path: `cluster.links[${index}].bandwidthGbps`, oldValue: gbps, newValue: found.value, unit: 'Gb/s',
        size: (found.value - gbps) / gbps, verifiedIterationTimeS: found.evaluation.predicted.iterationTimeS,
      }];
    }
    case 'iteration-time': {
      // The least time any plan takes is the optimum with the requirement dropped: the planner's
      // best plan gives the value (verified: it fits), its proven bound what no plan can beat.
      // (Bisecting between the two was measured to cost several 3 s re-solves near the optimum.)
      const deadlineS = spec.training.maxIterationTimeS!;
      const best = await oracle.optimize(withMaxIterationTimeS(spec, undefined), [], 2 * oracle.timeLimitS, ITERATION_TIME_GAP);
      if (best.feasibility !== 'feasible') return [];
      const value = Number(roundTo(0.001)(best.evaluation!.predicted.iterationTimeS).toFixed(3));
      const verified = await oracle.check(withMaxIterationTimeS(spec, value));
      if (verified.feasibility !== 'feasible') return [];
      const bound = best.lowerBoundS !== undefined && best.lowerBoundS < value ? `; no plan takes less than ${fmt(Number(best.lowerBoundS.toFixed(3)))} s` : '';
      return [{
        change: `allow ${fmt(value)} s per iteration (training.maxIterationTimeS is ${deadlineS}${bound})`,
        path: 'training.maxIterationTimeS', oldValue: deadlineS, newValue: value, unit: 's',
        size: (value - deadlineS) / deadlineS, verifiedIterationTimeS: verified.evaluation!.predicted.iterationTimeS,
      }];
    }
    case 'batch-divisibility': return nearestFittingBatch(spec, scenario, oracle);
    case 'search-space':
      if (requirement.path === 'search.evenLayerSplit') return unevenSplitRelaxation(spec, oracle);
      return searchWidenings(spec, requirement.path.slice('search.'.length) as SearchField, oracle);
  }
}

/** Batch sizes tried, nearest first (re-solves). */
const BATCH_TRIES = 8;

async function nearestFittingBatch(spec: ScenarioSpec, scenario: Scenario, oracle: FeasibilityOracle): Promise<Relaxation[]> {
  const batch = spec.training.globalBatchSeqs;
  const microbatchSizes = scenario.search?.microBatchSeqs ?? [1, 2, 4];
  let tries = 0;
  for (let distance = 1; distance <= batch / 2 && tries < BATCH_TRIES; distance++) {
    for (const candidate of [batch - distance, batch + distance]) {
      // Some allowed microbatch size must divide it, or no plan can cover it exactly.
      if (candidate < 1 || !microbatchSizes.some((b) => candidate % b === 0)) continue;
      tries++;
      const answer = await oracle.check(withGlobalBatchSeqs(spec, candidate));
      if (answer.feasibility === 'feasible') {
        return [{
          change: `globalBatchSeqs ${batch} cannot be split into replicas x microbatches x microbatch size in the space; nearest that fits: ${candidate}`,
          path: 'training.globalBatchSeqs', oldValue: batch, newValue: candidate, unit: 'seqs',
          size: Math.abs(candidate - batch) / batch, verifiedIterationTimeS: answer.evaluation!.predicted.iterationTimeS,
        }];
      }
    }
  }
  return [];
}

/** search.evenLayerSplit turned off, verified by a re-solve. */
async function unevenSplitRelaxation(spec: ScenarioSpec, oracle: FeasibilityOracle): Promise<Relaxation[]> {
  const answer = await oracle.check(withSearch(spec, (s) => ({ ...s, evenLayerSplit: false })));
  if (answer.feasibility !== 'feasible') return [];
  return [{
    change: 'allow uneven layer splits (search.evenLayerSplit is true)',
    path: 'search.evenLayerSplit', oldValue: true, newValue: false, unit: '',
    size: 0, verifiedIterationTimeS: answer.evaluation!.predicted.iterationTimeS,
  }];
}

/** What a restricted list leaves out beyond its own values, said after the widening that lifts it. */
const WIDENING_REASONS: Partial<Record<SearchField, (current: readonly (number | string)[]) => string>> = {
  rankOrders: (current) => (current.includes('tp-cp-ep-dp-pp') ? ''
    : ": rank order 'tp-cp-ep-pp-dp' keeps every replica's pipeline whole on one site, so with it alone no replica with pp > 1, ep 1 and cp 1 is split across sites"),
};

/** Each single value that, added to the restricted list, lets a plan fit; else the default space if that does. */
async function searchWidenings(spec: ScenarioSpec, field: SearchField, oracle: FeasibilityOracle): Promise<Relaxation[]> {
  const current = (spec.search?.[field] ?? []) as readonly (number | string)[];
  const found: Relaxation[] = [];
  for (const value of SEARCH_DOMAINS[field] as readonly (number | string)[]) {
    if (current.includes(value)) continue;
    const widened = [...current, value];
    const answer = await oracle.check(withSearch(spec, (s) => ({ ...s, [field]: widened }) as SearchSpec));
    if (answer.feasibility !== 'feasible') continue;
    found.push({
      change: `allow ${field}: ${JSON.stringify(value)} (search.${field} is [${current.join(', ')}])${WIDENING_REASONS[field]?.(current) ?? ''}`,
      path: `search.${field}`, oldValue: current, newValue: widened, unit: '',
      size: 0, verifiedIterationTimeS: answer.evaluation!.predicted.iterationTimeS,
    });
  }
  return found;
}
