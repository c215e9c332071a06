/**
 * Reuse between neighbouring sweep points: a worker keeps the plans of the scenario it solved
 * last and offers them as seeds to the next one when the two differ only in what a capacity
 * sweep varies most, link figures (bandwidth, latency or distance, loss) and site sizes. A seed
 * is only an incumbent: the planner evaluates it with the cost model on the new scenario (it is
 * dropped there if it does not fit) and proves its bound as it would without it.
 */
import type { PlanSpec } from '../model/plan-schema';
import type { PlanSeeds } from '../solve/plan';
import type { PlanResult } from '../solve/plan-result';

/** Link fields a neighbour may differ in. */
const LINK_FIELDS = ['bandwidthGbps', 'rttMs', 'distanceKm', 'lossRate'] as const;
/** Site fields a neighbour may differ in. */
const SITE_FIELDS = ['gpus'] as const;

/**
 * The scenario JSON with the fields a neighbour may change left out: two scenarios with the same
 * shape are neighbours. Undefined for a spec that is not a scenario-like object.
 */
export function neighbourShape(spec: unknown): string | undefined {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
  const copy = JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
  delete copy['name'];
  const cluster = copy['cluster'] as { sites?: unknown; links?: unknown } | undefined;
  const strip = (items: unknown, fields: readonly string[]): void => {
    if (!Array.isArray(items)) return;
    for (const item of items) if (item && typeof item === 'object') for (const f of fields) delete (item as Record<string, unknown>)[f];
  };
  if (cluster && typeof cluster === 'object') {
    strip(cluster.links, LINK_FIELDS);
    strip(cluster.sites, SITE_FIELDS);
  }
  return JSON.stringify(copy);
}

/** The plans of one answer, by search, to seed a neighbour with. */
export function seedsOf(result: PlanResult): PlanSeeds {
  const of = (name: string): PlanSpec[] => {
    const plan = result.baselines.find((b) => b.name === name)?.plan;
    return plan ? [plan] : [];
  };
  return { main: result.plan ? [result.plan] : [], production: of('production'), 'pp-across': of('pp-across') };
}

/** Remembers the last answer and hands its plans to a neighbour of it. */
export class NeighbourSeeds {
  private last: { shape: string; seeds: PlanSeeds } | undefined;

  /** Seeds for `spec`: the last answer's plans when it was a neighbour, else none. */
  for(spec: unknown): PlanSeeds | undefined {
    const shape = neighbourShape(spec);
    return shape !== undefined && this.last?.shape === shape ? this.last.seeds : undefined;
  }

  remember(spec: unknown, result: PlanResult): void {
    const shape = neighbourShape(spec);
    this.last = shape === undefined ? undefined : { shape, seeds: seedsOf(result) };
  }

  forget(): void {
    this.last = undefined;
  }
}
