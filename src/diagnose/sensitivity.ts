/**
 * For a scenario that has a plan: which requirements are tight at the best plan, and what 10%
 * more of each resource would buy (docs/diagnosis.md §5). Each marginal value is a re-plan
 * seeded with the current best plan, which still fits when a resource grows, so the new time is
 * never worse; a gain is called certain only when the new plan beats the proven lower bound of
 * every plan without the change, and otherwise flagged as within the planner's gap.
 */
import type { Evaluation } from '../model/evaluate';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import type { ScenarioSpec } from '../model/scenario-schema';
import type { FeasibilityOracle } from './feasibility-oracle';
import { withLinkBandwidthGbps, withSiteGpus, withSiteMemoryGiB, type ConstraintKind } from './requirements';

export interface MarginalValue {
  /** The resource change re-planned: "+10% bandwidth on a<->b (51200 -> 56320 Gb/s)". */
  readonly change: string;
  readonly path: string;
  readonly newValue: number;
  readonly unit: string;
  readonly iterationTimeS: number;
  /** (new - current) / current iteration time. */
  readonly relativeChange: number;
  /** False only when the new plan beats the proven bound of every plan without the change: the gain is then certain. */
  readonly withinGap: boolean;
}

/** One requirement's usage at the best plan against its capacity. */
export interface ResourceUsage {
  readonly constraint: ConstraintKind;
  readonly site?: string;
  readonly link?: string;
  readonly detail: string;
  readonly used: number;
  readonly capacity: number;
  readonly unit: string;
}

export interface TightConstraint extends ResourceUsage {
  /** Used at least TIGHT_SHARE of capacity. */
  readonly tight: boolean;
  readonly marginal?: MarginalValue;
}

/** A resource at or above this share of its capacity is called tight. */
export const TIGHT_SHARE = 0.9;
/** The resource increase re-planned for marginal values. */
export const MARGINAL_STEP = 0.1;

interface Resource extends ResourceUsage {
  /** Whether to re-plan with more of it (tight, or a link that carries traffic). */
  readonly worthReplanning: boolean;
  readonly grow?: { readonly path: string; readonly newValue: number; readonly spec: ScenarioSpec; readonly change: string };
}

function resources(spec: ScenarioSpec, scenario: Scenario, evaluation: Evaluation): Resource[] {
  const list: Resource[] = [];
  const pct = `+${100 * MARGINAL_STEP}%`;
  scenario.sites.forEach((site, i) => {
    const usage = evaluation.predicted.sites[i]!;
    const gpusUsed = usage.gpusUsed;
    const moreGpus = Math.ceil((site.gpus * (1 + MARGINAL_STEP)) / site.gpusPerNode) * site.gpusPerNode;
    list.push({
      constraint: 'gpu-count', site: site.name, detail: `${site.name} uses ${gpusUsed} of ${site.gpus} GPUs`, used: gpusUsed, capacity: site.gpus, unit: 'GPUs',
      worthReplanning: gpusUsed >= TIGHT_SHARE * site.gpus,
      grow: { path: `cluster.sites[${i}].gpus`, newValue: moreGpus, spec: withSiteGpus(spec, i, moreGpus), change: `${pct} GPUs at ${site.name} (${site.gpus} -> ${moreGpus})` },
    });
    const memory = usage.memoryGiBPerGpu;
    const moreMemory = Number((site.gpu.memoryGiB * (1 + MARGINAL_STEP)).toFixed(1));
    list.push({
      constraint: 'memory', site: site.name, detail: `${site.name} needs ${memory.toFixed(1)} of ${site.memoryCapacityGiB} GiB per GPU${site.memoryReserveGiB > 0 ? ` (${site.gpu.memoryGiB} less ${site.memoryReserveGiB} reserved)` : ''}`, used: memory, capacity: site.memoryCapacityGiB, unit: 'GiB',
      worthReplanning: memory >= TIGHT_SHARE * site.memoryCapacityGiB,
      grow: { path: `cluster.sites[${i}].gpu.memoryGiB`, newValue: moreMemory, spec: withSiteMemoryGiB(spec, scenario, i, moreMemory), change: `${pct} memory per GPU at ${site.name} (${site.gpu.memoryGiB} -> ${moreMemory} GiB)` },
    });
  });
  scenario.links.forEach((link, i) => {
    const usage = evaluation.predicted.links[i]!;
    const gbps = spec.cluster.links[i]!.bandwidthGbps;
    const more = Number((gbps * (1 + MARGINAL_STEP)).toPrecision(6));
    list.push({
      constraint: 'link-capacity', link: link.label, detail: `${link.label} is busy ${(100 * usage.utilization).toFixed(1)}% of the iteration`,
      used: usage.utilization, capacity: 1, unit: 'share of iteration',
      worthReplanning: usage.bytesPerIteration > 0,
      grow: { path: `cluster.links[${i}].bandwidthGbps`, newValue: more, spec: withLinkBandwidthGbps(spec, i, more), change: `${pct} bandwidth on ${link.label} (${gbps} -> ${more} Gb/s)` },
    });
  });
  const deadlineS = scenario.training.maxIterationTimeS;
  if (deadlineS !== undefined) {
    const time = evaluation.predicted.iterationTimeS;
    list.push({ constraint: 'iteration-time', detail: `iteration takes ${time.toFixed(3)} of at most ${deadlineS} s`, used: time, capacity: deadlineS, unit: 's', worthReplanning: false });
  }
  return list;
}

export async function tightConstraints(
  spec: ScenarioSpec, scenario: Scenario, best: { plan: PlanSpec; evaluation: Evaluation; lowerBoundS: number }, oracle: FeasibilityOracle, reSolveTimeLimitS: number,
): Promise<TightConstraint[]> {
  const baseS = best.evaluation.predicted.iterationTimeS;
  const out: TightConstraint[] = [];
  for (const r of resources(spec, scenario, best.evaluation)) {
    const tight = r.used >= TIGHT_SHARE * r.capacity;
    let marginal: MarginalValue | undefined;
    if (r.worthReplanning && r.grow) {
      const answer = await oracle.optimize(r.grow.spec, [best.plan], reSolveTimeLimitS);
      if (answer.feasibility === 'feasible') {
        const timeS = answer.evaluation!.predicted.iterationTimeS;
        const relativeChange = (timeS - baseS) / baseS;
        marginal = {
          change: r.grow.change, path: r.grow.path, newValue: r.grow.newValue, unit: r.unit === 'share of iteration' ? 'Gb/s' : r.unit,
          iterationTimeS: timeS, relativeChange, withinGap: !(timeS < best.lowerBoundS),
        };
      }
    }
    out.push({ constraint: r.constraint, site: r.site, link: r.link, detail: r.detail, used: r.used, capacity: r.capacity, unit: r.unit, tight, marginal });
  }
  // What buys the most first.
  return out.sort((a, b) => (a.marginal?.relativeChange ?? 0) - (b.marginal?.relativeChange ?? 0) || Number(b.tight) - Number(a.tight));
}
