/**
 * Cost-model local search on one candidate's placement (docs/formulation.md §4, "Placement
 * polish"). The placement MIP is a relaxation: it sees a stage ring's bytes spread over all of a
 * site's links, where the cost model puts every ring with the same sites on the same links. So a
 * MIP placement can evaluate far above the MIP's objective (one 4-site MoE placement: 1.83 s in
 * the MIP, 2.32 s in the cost model, because its rings spanned four sites instead of two). The
 * polish moves replicas between layouts of the same shape and between groups, keeping each move
 * the cost model says is faster. It changes only the plan, never a bound.
 */
import { planOfGroups, type ConfigCoefficients, type LayoutCoefficients, type LayoutGroup } from '../formulation/coefficients';
import { evaluateLayout, type Evaluation } from '../model/evaluate';
import { layOutPlan } from '../model/placement';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';

export interface PolishResult {
  readonly plan: PlanSpec;
  readonly evaluation: Evaluation;
  /** Placements the cost model evaluated. */
  readonly evaluations: number;
  /** Moves kept. */
  readonly moves: number;
}

/** Evaluations a polish may spend looking for its first better placement. */
const FIRST_MOVE_WITHIN = 40;

/** Stage-run lengths of a layout ("16,16"): layouts with the same shape differ only in their sites. */
const shapeOf = (layout: LayoutCoefficients): string => {
  const runs: number[] = [];
  layout.layout.stageSite.forEach((site, j) => {
    if (j > 0 && site === layout.layout.stageSite[j - 1]) runs[runs.length - 1]!++;
    else runs.push(1);
  });
  return runs.join(',');
};

/** GPUs per site as a key ("0:2048,2:2048"), sites with none left out. */
const usageKey = (gpusPerSite: ReadonlyMap<number, number>): string =>
  [...gpusPerSite].filter(([, gpus]) => gpus !== 0).sort((p, q) => p[0] - q[0]).map(([site, gpus]) => `${site}:${gpus}`).join(',');

/** Replica counts to move out of a group of n: all of it, then ..., 4, 2, 1. */
const moveSizes = (n: number): number[] => {
  const sizes = new Set<number>([n]);
  for (let d = 1; d < n; d *= 2) sizes.add(d);
  return [...sizes].sort((a, b) => b - a);
};

/**
 * First-improvement descent from `start` over three moves: send some or all of a group's replicas
 * to another layout of the same shape (other sites, same cut), or to another group with the same
 * microbatch count, or two groups trade for two layouts using the same GPUs. Every move keeps dp
 * and the batch. Stops at a local optimum, after `maxEvaluations` cost-model evaluations, after
 * half that many without a better placement, or after 40 without a first one (measured: the moves
 * that matter come early).
 */
export function polishPlacement(scenario: Scenario, c: ConfigCoefficients, start: readonly LayoutGroup[], maxEvaluations: number): PolishResult | undefined {
  let evaluations = 0;
  const planOf = (groups: readonly LayoutGroup[]) => planOfGroups(c, scenario, groups);
  const initial = start.filter((g) => g.replicas > 0);
  if (initial.length === 0) return undefined;
  // Moves keep the configuration and dp, so the stages laid out (and the plan parsed and checked)
  // once serve every trial; a trial only swaps its replica groups in.
  const base = layOutPlan(scenario, planOf(initial));
  const evaluateGroups = (groups: readonly LayoutGroup[]) => {
    evaluations++;
    const evaluation = evaluateLayout(scenario, { ...base, groups: groups.map((g) => ({ replicas: g.replicas, stageSite: g.layout.layout.stageSite, microbatches: g.microbatches })) }, 'closed-form');
    return { evaluation, timeS: evaluation.fitsResources ? evaluation.predicted.iterationTimeS : Infinity };
  };
  let best = { groups: initial, ...evaluateGroups(initial) };
  if (!Number.isFinite(best.timeS)) return undefined;
  const byUsage = new Map<string, LayoutCoefficients[]>();
  for (const layout of c.layouts) {
    const key = usageKey(layout.gpusPerSite);
    byUsage.set(key, [...(byUsage.get(key) ?? []), layout]);
  }
  const sameShape = new Map<string, LayoutCoefficients[]>();
  for (const layout of c.layouts) {
    const key = shapeOf(layout);
    sameShape.set(key, [...(sameShape.get(key) ?? []), layout]);
  }
  /** `groups` with `count` replicas of group g moved to `layout` (merged into a group with the same layout and k). */
  const moved = (groups: readonly LayoutGroup[], g: number, count: number, layout: LayoutCoefficients): LayoutGroup[] => {
    const from = groups[g]!;
    const next = groups.map((x) => ({ ...x }));
    next[g] = { ...from, replicas: from.replicas - count };
    const into = next.findIndex((x) => x.layout === layout && x.microbatches === from.microbatches);
    if (into >= 0) next[into] = { ...next[into]!, replicas: next[into]!.replicas + count };
    else next.push({ layout, microbatches: from.microbatches, replicas: count });
    return next.filter((x) => x.replicas > 0);
  };
  /** Every move from the current placement, lazily: exchanges, then targets of the same shape, then other groups. */
  function* neighbours(groups: readonly LayoutGroup[]): Generator<LayoutGroup[]> {
    // Exchanges: two groups trade for two layouts that use the same GPUs at every site (a->b + c->d
    // becomes a->d + c->b or b->a + ...; a whole replica at a + c->d becomes a->d + c->a): the only
    // moves left when the sites are full.
    // Smallest pairs first: one-replica groups are the MIP's usual strays.
    const pairs: [number, number][] = [];
    for (let g = 0; g < groups.length; g++) for (let h = g + 1; h < groups.length; h++) pairs.push([g, h]);
    pairs.sort((p, q) => Math.min(groups[p[0]]!.replicas, groups[p[1]]!.replicas) - Math.min(groups[q[0]]!.replicas, groups[q[1]]!.replicas));
    for (const [g, h] of pairs) {
      const [x, y] = [groups[g]!, groups[h]!];
      const pairGpus = new Map<number, number>();
      for (const layout of [x.layout, y.layout]) for (const [site, gpus] of layout.gpusPerSite) pairGpus.set(site, (pairGpus.get(site) ?? 0) + gpus);
      for (const xNew of c.layouts) {
        if (xNew === x.layout || xNew === y.layout || !xNew.fittingMicrobatches.includes(x.microbatches)) continue;
        const rest = new Map(pairGpus);
        for (const [site, gpus] of xNew.gpusPerSite) rest.set(site, (rest.get(site) ?? 0) - gpus);
        for (const yNew of byUsage.get(usageKey(rest)) ?? []) {
          if (yNew === x.layout || yNew === y.layout || !yNew.fittingMicrobatches.includes(y.microbatches)) continue;
          for (const count of moveSizes(Math.min(x.replicas, y.replicas))) {
            const once = moved(groups, g, count, xNew);
            yield moved(once, once.findIndex((z) => z.layout === y.layout && z.microbatches === y.microbatches), count, yNew);
          }
        }
      }
    }
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!;
      for (const layout of sameShape.get(shapeOf(group.layout)) ?? []) {
        if (layout === group.layout || !layout.fittingMicrobatches.includes(group.microbatches)) continue;
        for (const count of moveSizes(group.replicas)) yield moved(groups, g, count, layout);
      }
    }
    for (let g = 0; g < groups.length; g++) {
      for (let h = 0; h < groups.length; h++) {
        const target = groups[h]!;
        if (h === g || target.microbatches !== groups[g]!.microbatches || shapeOf(target.layout) === shapeOf(groups[g]!.layout)) continue;
        for (const count of moveSizes(groups[g]!.replicas)) yield moved(groups, g, count, target.layout);
      }
    }
  }
  /** GPUs per site within each site's count (checked before the cost model is asked). */
  const fitsSites = (groups: readonly LayoutGroup[]): boolean => {
    const used = scenario.sites.map(() => 0);
    for (const g of groups) for (const [site, gpus] of g.layout.gpusPerSite) used[site]! += g.replicas * gpus;
    return used.every((u, s) => u <= scenario.sites[s]!.gpus);
  };
  let moves = 0;
  let improved = true;
  let lastMoveAt = 0;
  // A start with no better neighbour among its first few gives up early: on the bench rows the
  // first kept move came within 14 evaluations on every polish that found one (6 of 14 polishes),
  // while the 8 that found none each spent 150 evaluations (0.6 s of the 3-site row's main thread).
  const exhausted = () => evaluations >= maxEvaluations
    || evaluations - lastMoveAt >= (moves === 0 ? Math.min(FIRST_MOVE_WITHIN, maxEvaluations / 2) : maxEvaluations / 2);
  while (improved && !exhausted()) {
    improved = false;
    for (const groups of neighbours(best.groups)) {
      if (exhausted()) break;
      if (!fitsSites(groups)) continue;
      const tried = evaluateGroups(groups);
      if (tried.timeS < best.timeS * (1 - 1e-9)) {
        best = { groups, ...tried };
        moves++;
        lastMoveAt = evaluations;
        improved = true;
        break;
      }
    }
  }
  // The plan printed is evaluated from scratch (parsed and laid out) like any other.
  const plan = planOf(best.groups);
  return { plan, evaluation: evaluateLayout(scenario, layOutPlan(scenario, plan), 'closed-form'), evaluations, moves };
}
