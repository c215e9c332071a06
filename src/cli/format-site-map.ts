/** A compact plain-text site map and schedule summary for `plan`'s human output. */
import type { Evaluation } from '../model/evaluate';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';
import { bytesPerSToGbps } from '../model/units';
import { hostedSummary } from '../report/site-summary';

/** `[bldg-a: 8192 GPUs, 8192 used | stages 0-15 x 64 replicas]` per site, then one line per link. */
export function formatSiteMap(scenario: Scenario, evaluation: Evaluation): string {
  const p = evaluation.predicted;
  const lines = ['Site map'];
  scenario.sites.forEach((site, i) => {
    const usage = p.sites[i]!;
    lines.push(`  [${site.name}: ${site.gpus} x ${site.gpu.name}, ${usage.gpusUsed} used | ${hostedSummary(usage)}]`);
  });
  scenario.links.forEach((link, i) => {
    const a = scenario.sites[link.siteA]!.name;
    const b = scenario.sites[link.siteB]!.name;
    lines.push(`  ${a} <==[ ${bytesPerSToGbps(link.bandwidthBytesPerS).toLocaleString('en-US', { maximumFractionDigits: 1 })} Gb/s, RTT ${(link.rttS * 1000).toFixed(2)} ms, ${(100 * p.links[i]!.utilization).toFixed(1)}% busy ]==> ${b}`);
  });
  return lines.join('\n');
}

/** One line: schedule, chunks, microbatches per replica, bubble and cross-site share of the iteration. */
export function formatScheduleSummary(plan: PlanSpec, evaluation: Evaluation): string {
  const p = evaluation.predicted;
  const chunks = plan.virtualStages > 1 ? `, ${plan.virtualStages} chunks per stage` : '';
  return `Schedule: ${plan.schedule}${chunks}, ${plan.pp} stage(s) x ${+p.microbatchesPerReplica.toFixed(3)} microbatch(es) of ${plan.microBatchSeqs} seq per replica; bubble ${(100 * p.breakdown.bubbleS / p.iterationTimeS).toFixed(1)}%, cross-site ${(100 * p.breakdown.crossSiteS / p.iterationTimeS).toFixed(1)}% of the iteration`;
}
