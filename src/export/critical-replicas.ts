/**
 * The data-parallel replicas of the replica group that sets the predicted iteration time (the
 * cost model's critical group, `Prediction.criticalGroup`): the ranks to watch first when the
 * launched run is slower than planned. Replicas are numbered through the plan's replica groups
 * in order, as in the rank map. Pure.
 */
import { evaluateLayout } from '../model/evaluate';
import type { PlanLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { compactRanges } from '../report/site-summary';
import type { ExportMessage } from './export-types';

export interface CriticalReplicas {
  /** Index of the replica group in the plan's placement. */
  readonly group: number;
  /** Its data-parallel replica indices, compacted ("4-7"). */
  readonly replicas: string;
  /** Site names of its stages, in stage order, runs merged. */
  readonly sites: readonly string[];
}

export function criticalReplicas(scenario: Scenario, layout: PlanLayout, messages: ExportMessage[]): CriticalReplicas {
  const group = evaluateLayout(scenario, layout).predicted.criticalGroup;
  const first = layout.groups.slice(0, group).reduce((sum, g) => sum + g.replicas, 0);
  const { replicas: count, stageSite } = layout.groups[group]!;
  const replicas = compactRanges(Array.from({ length: count }, (_, r) => first + r));
  const sites = stageSite.filter((site, j) => j === 0 || site !== stageSite[j - 1]).map((site) => scenario.sites[site]!.name);
  if (layout.groups.length > 1) {
    messages.push({ severity: 'note', message: `replica group ${group} (data-parallel replicas ${replicas}, stages on ${sites.join(' -> ')}) sets the predicted iteration time: its pipeline, exposed gradient sync and optimizer step end last` });
  }
  return { group, replicas, sites };
}
