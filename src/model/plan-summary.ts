/** A plan on one line: "tp 8 x pp 8 x dp 80, microbatch 1 seq, interleaved (v=4), ZeRO-1; on east, central, west". */
import type { PlanSpec } from './plan-schema';

export function planSummary(plan: PlanSpec): string {
  const degrees = [`tp ${plan.tp}`, ...(plan.cp > 1 ? [`cp ${plan.cp}`] : []), ...(plan.ep > 1 ? [`ep ${plan.ep}`] : []), `pp ${plan.pp}`, `dp ${plan.dp}`].join(' x ');
  const sites = [...new Set((plan.placement?.replicaGroups ?? []).flatMap((g) => g.stageSites.map((r) => r.site)))];
  const schedule = `${plan.schedule}${plan.virtualStages > 1 ? ` (v=${plan.virtualStages})` : ''}`;
  return `${degrees}, microbatch ${plan.microBatchSeqs} seq, ${schedule}, recompute ${plan.recompute}, ZeRO-${plan.zero}${plan.rankOrder === 'tp-cp-ep-pp-dp' ? ', ranks tp-cp-ep-pp-dp' : ''}${sites.length > 0 ? `; on ${sites.join(', ')}` : ''}`;
}
