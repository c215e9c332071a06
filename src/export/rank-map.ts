/**
 * Which global ranks run on which site. Megatron-LM's default rank order is tp-cp-ep-dp-pp
 * (tensor-parallel fastest; expert parallelism is carved out of dp x cp and does not move the
 * dense layout) and torchtitan's device mesh is [pp, dp_replicate, dp_shard, cp, tp] (row-major,
 * tp fastest): in both, rank = ((stage * dp + replica) * cp + cpRank) * tp + tpRank, replicas
 * numbered through the plan's replica groups in order.
 */
import type { PlanLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { compactRanges } from '../report/site-summary';

export interface RankRange {
  readonly firstRank: number;
  readonly lastRank: number;
  readonly site: string;
  readonly stages: string;
  readonly replicas: string;
  /** Node indices when every site has the same GPUs per node and the range is node-aligned. */
  readonly firstNode?: number;
  readonly lastNode?: number;
}

export interface RankMap {
  /** Rank order the map assumes, in the framework's words. */
  readonly order: string;
  readonly worldSize: number;
  readonly ranges: readonly RankRange[];
  /** Ranges that would put ranks of two sites on one node. */
  readonly problems: readonly string[];
}

export function rankToSiteMap(scenario: Scenario, layout: PlanLayout, order: string): RankMap {
  const { plan, groups } = layout;
  const ranksPerReplicaStage = plan.tp * plan.cp;
  const replicaSite: (readonly number[])[] = [];
  for (const group of groups) for (let r = 0; r < group.replicas; r++) replicaSite.push(group.stageSite);
  const raw: { site: number; first: number; last: number; stages: Set<number>; replicas: Set<number> }[] = [];
  for (let stage = 0; stage < plan.pp; stage++) {
    replicaSite.forEach((stageSite, replica) => {
      const site = stageSite[stage]!;
      const first = (stage * plan.dp + replica) * ranksPerReplicaStage;
      const last = first + ranksPerReplicaStage - 1;
      const previous = raw[raw.length - 1];
      if (previous && previous.site === site && previous.last + 1 === first) {
        previous.last = last;
        previous.stages.add(stage);
        previous.replicas.add(replica);
      } else {
        raw.push({ site, first, last, stages: new Set([stage]), replicas: new Set([replica]) });
      }
    });
  }
  const gpusPerNode = new Set(scenario.sites.map((s) => s.gpusPerNode));
  const uniformNode = gpusPerNode.size === 1 ? [...gpusPerNode][0]! : undefined;
  const problems: string[] = [];
  const ranges = raw.map((range) => {
    const site = scenario.sites[range.site]!;
    const count = range.last - range.first + 1;
    if (range.first % site.gpusPerNode !== 0 || count % site.gpusPerNode !== 0) {
      problems.push(`ranks ${range.first}-${range.last} (${site.name}) do not fill whole ${site.gpusPerNode}-GPU nodes, so a node would hold ranks of two sites`);
    }
    const aligned = uniformNode !== undefined && range.first % uniformNode === 0 && count % uniformNode === 0;
    return {
      firstRank: range.first,
      lastRank: range.last,
      site: site.name,
      stages: compactRanges([...range.stages].sort((a, b) => a - b)),
      replicas: compactRanges([...range.replicas].sort((a, b) => a - b)),
      ...(aligned ? { firstNode: range.first / uniformNode, lastNode: (range.last + 1) / uniformNode - 1 } : {}),
    };
  });
  return { order, worldSize: plan.pp * plan.dp * ranksPerReplicaStage, ranges, problems };
}

/** The map as an aligned text table. */
export function formatRankMap(map: RankMap): string {
  const lines = [`Rank-to-site map (${map.order}; world size ${map.worldSize})`, '  ranks                 nodes             site            stages         replicas'];
  for (const r of map.ranges) {
    const ranks = `${r.firstRank}-${r.lastRank}`;
    const nodes = r.firstNode === undefined ? '-' : `${r.firstNode}-${r.lastNode}`;
    lines.push(`  ${ranks.padEnd(21)} ${nodes.padEnd(17)} ${r.site.padEnd(15)} ${r.stages.padEnd(14)} ${r.replicas}`);
  }
  return lines.join('\n');
}
