/** Checks shared by the framework exports. */
import type { PlanLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import type { ExportMessage } from './export-types';

/** Both frameworks run the same whole number of microbatches on every data-parallel replica. */
export function microbatchesPerReplica(scenario: Scenario, layout: PlanLayout, messages: ExportMessage[]): number {
  const counts = [...new Set(layout.groups.map((g) => g.microbatches))];
  if (counts.length > 1) {
    messages.push({ severity: 'error', message: `replica groups run different microbatch counts (${layout.groups.map((g) => g.microbatches).join(' / ')}); the framework splits the global batch evenly over data-parallel ranks, so this plan cannot be launched as planned` });
  }
  const m = counts[0]!;
  if (!Number.isInteger(m)) {
    messages.push({ severity: 'error', message: `globalBatchSeqs ${scenario.training.globalBatchSeqs} is not dp x microBatchSeqs x a whole number of microbatches` });
  }
  return Math.max(1, Math.round(m));
}

export function networkNote(layout: PlanLayout, framework: string, messages: ExportMessage[]): void {
  const settings = layout.plan.network ?? [];
  if (settings.length === 0) return;
  const described = settings.map((s) => `${s.between.join('<->')}: ${s.transport}, ${s.flowsPerGpuPair} flow(s) per GPU pair, ${s.collectives} collectives, compression ${s.gradientCompression}`).join('; ');
  messages.push({ severity: 'note', message: `the plan's cross-site network settings are not ${framework} arguments; configure them in the communication library and network (${described})` });
  if (settings.some((s) => s.gradientCompression !== 'none')) {
    messages.push({ severity: 'warning', message: `fp8 gradient compression across sites is not a ${framework} setting; without it cross-site gradient traffic doubles against the prediction` });
  }
}
