/**
 * One row per global rank, in the framework's rank order (the same order as rank-map.ts:
 * rank = ((stage * dp + replica) * cp + cpRank) * tp + tpRank, or ((replica * pp + stage) * cp +
 * cpRank) * tp + tpRank under rank order tp-cp-ep-pp-dp, replicas numbered through the plan's
 * replica groups), with the node it runs on. Nodes are numbered per site, in the order of
 * their first rank, `gpusPerNode` consecutive ranks each; idle GPUs are no ranks. Pure.
 */
import type { PlanLayout } from '../model/placement';
import { rankBlocks } from '../model/framework-issues';
import type { Scenario } from '../model/scenario';

export interface RankRow {
  readonly rank: number;
  /** Site index in the scenario. */
  readonly site: number;
  /** Node index within the site (0-based, in rank order). */
  readonly node: number;
  readonly localRank: number;
  readonly stage: number;
  readonly replica: number;
}

/** One node of the job: where it is and which ranks it runs. */
export interface NodeRow {
  /** Position of the node in rank order across all sites (torchrun's --node-rank). */
  readonly globalNode: number;
  readonly site: number;
  readonly node: number;
  readonly firstRank: number;
  readonly ranks: number;
}

/** The nodes a site runs, in its own node order. */
export interface SiteNodes {
  readonly site: number;
  readonly name: string;
  readonly gpusPerNode: number;
  readonly nodes: readonly NodeRow[];
}

export interface RankTable {
  readonly worldSize: number;
  readonly rows: readonly RankRow[];
  readonly nodes: readonly NodeRow[];
  /** Sites that run at least one rank, in scenario order. */
  readonly sites: readonly SiteNodes[];
  /** Why a node would hold ranks of two sites or of non-consecutive ranks (the export reports these as errors). */
  readonly problems: readonly string[];
}

export function rankTable(scenario: Scenario, layout: PlanLayout): RankTable {
  const { plan, groups } = layout;
  const perReplicaStage = plan.tp * plan.cp;
  const replicaSite: (readonly number[])[] = [];
  for (const group of groups) for (let r = 0; r < group.replicas; r++) replicaSite.push(group.stageSite);
  const worldSize = plan.pp * plan.dp * perReplicaStage;
  const usedOnSite = scenario.sites.map(() => 0);
  const rows: RankRow[] = [];
  const nodes: { site: number; node: number; firstRank: number; ranks: number }[] = [];
  const problems: string[] = [];
  for (const [stage, replica] of rankBlocks(plan, plan.dp)) {
    const site = replicaSite[replica]![stage]!;
    const perNode = scenario.sites[site]!.gpusPerNode;
    for (let k = 0; k < perReplicaStage; k++) {
      const rank = rows.length;
      const slot = usedOnSite[site]!++;
      const node = Math.floor(slot / perNode);
      const localRank = slot % perNode;
      const current = nodes[nodes.length - 1];
      if (localRank === 0) {
        nodes.push({ site, node, firstRank: rank, ranks: 1 });
      } else if (current !== undefined && current.site === site && current.node === node) {
        current.ranks++;
      } else {
        // The node's earlier ranks are not the ones just before: another site's ranks came between.
        if (problems.length < 3) problems.push(`rank ${rank} would run on node ${node} of ${scenario.sites[site]!.name} apart from that node's other ranks`);
      }
      rows.push({ rank, site, node, localRank, stage, replica });
    }
  }
  const globalNodes: NodeRow[] = nodes.map((n, globalNode) => ({ ...n, globalNode }));
  usedOnSite.forEach((used, site) => {
    const perNode = scenario.sites[site]!.gpusPerNode;
    if (used % perNode !== 0) problems.push(`${scenario.sites[site]!.name} runs ${used} ranks, not a whole number of ${perNode}-GPU nodes`);
  });
  const sites: SiteNodes[] = scenario.sites
    .filter((s) => usedOnSite[s.index]! > 0)
    .map((s) => ({ site: s.index, name: s.name, gpusPerNode: s.gpusPerNode, nodes: globalNodes.filter((n) => n.site === s.index) }));
  return { worldSize, rows, nodes: globalNodes, sites, problems };
}

/** `ranks.csv`: `rank,site,node,local_rank,stage,replica`, one row per global rank. */
export function ranksCsv(scenario: Scenario, table: RankTable): string {
  const lines = ['rank,site,node,local_rank,stage,replica'];
  for (const r of table.rows) lines.push(`${r.rank},${csvField(scenario.sites[r.site]!.name)},${r.node},${r.localRank},${r.stage},${r.replica}`);
  return `${lines.join('\n')}\n`;
}

function csvField(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
