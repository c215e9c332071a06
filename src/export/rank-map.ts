/**
 * Which global ranks run on which site. Megatron-LM's default rank order is tp-cp-ep-dp-pp
 * (tensor-parallel fastest; expert parallelism is carved out of dp x cp and does not move the
 * dense layout) and torchtitan's device mesh is [pp, dp_replicate, dp_shard, cp, tp] (row-major,
 * tp fastest): in both, rank = ((stage * dp + replica) * cp + cpRank) * tp + tpRank, replicas
 * numbered through the plan's replica groups in order. A plan with rank order tp-cp-ep-pp-dp
 * (Megatron-LM --use-tp-pp-dp-mapping) numbers a replica's stages side by side:
 * rank = ((replica * pp + stage) * cp + cpRank) * tp + tpRank (siteRankRuns).
 */
import { nodeAlignmentProblems, siteRankRuns } from '../model/framework-issues';
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
  /** Ranks of two sites on one node: empty, or one problem naming the first runs of ranks and how many more (nodeAlignmentProblems). */
  readonly problems: readonly string[];
}

export function rankToSiteMap(scenario: Scenario, layout: PlanLayout, order: string): RankMap {
  const { plan } = layout;
  const runs = siteRankRuns(layout);
  const gpusPerNode = new Set(scenario.sites.map((s) => s.gpusPerNode));
  const uniformNode = gpusPerNode.size === 1 ? [...gpusPerNode][0]! : undefined;
  const ranges = runs.map((run) => {
    const site = scenario.sites[run.site]!;
    const count = run.last - run.first + 1;
    const aligned = uniformNode !== undefined && run.first % uniformNode === 0 && count % uniformNode === 0;
    return {
      firstRank: run.first,
      lastRank: run.last,
      site: site.name,
      stages: compactRanges(run.stages),
      replicas: compactRanges(run.replicas),
      ...(aligned ? { firstNode: run.first / uniformNode, lastNode: (run.last + 1) / uniformNode - 1 } : {}),
    };
  });
  return { order, worldSize: plan.pp * plan.dp * plan.tp * plan.cp, ranges, problems: nodeAlignmentProblems(scenario, layout, runs) };
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
