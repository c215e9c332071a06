/** Checks shared by the framework exports. */
import { evaluateLayout } from '../model/evaluate';
import { frameworkIssues } from '../model/framework-issues';
import type { Framework } from '../model/framework-capabilities';
import type { PlanLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import type { ExportMessage } from './export-types';

/**
 * The framework's capability issues with the plan (src/model/framework-issues.ts, from its table
 * in framework-capabilities.ts), as the export's error and warning lines: an export fails exactly
 * when `plan` would not list the framework as running the plan as is.
 */
export function capabilityMessages(framework: Framework, scenario: Scenario, layout: PlanLayout, messages: ExportMessage[]): void {
  for (const issue of frameworkIssues(framework, scenario, layout)) messages.push({ severity: issue.severity, message: issue.message });
}

/**
 * The plan's own fit, as `evaluate` judges it: a plan that uses more GPUs than a site has, does
 * not fit GPU memory, does not split the batch or runs a microbatch count its schedule refuses
 * cannot be launched as planned, so each violation is an error line (the export exits 4); a
 * missed training.maxIterationTimeS, and peak memory within the memory interval of a GPU's
 * capacity, are warnings (the plan runs).
 */
export function fitMessages(scenario: Scenario, layout: PlanLayout, messages: ExportMessage[]): void {
  const evaluation = evaluateLayout(scenario, layout);
  const deadlineS = scenario.training.maxIterationTimeS;
  const missesDeadline = deadlineS !== undefined && evaluation.predicted.iterationTimeS > deadlineS;
  // evaluate lists the deadline last, after every resource violation.
  const resources = missesDeadline ? evaluation.violations.slice(0, -1) : evaluation.violations;
  for (const violation of resources) messages.push({ severity: 'error', message: `the plan does not fit the scenario: ${violation}` });
  if (missesDeadline) messages.push({ severity: 'warning', message: evaluation.violations[evaluation.violations.length - 1]! });
  if (evaluation.fitsResources && evaluation.mayNotFit) {
    messages.push({ severity: 'warning', message: `peak memory ${evaluation.predicted.memoryGiBPerGpu.toFixed(1)} GiB per GPU is within the memory interval of a GPU's capacity: the plan may not fit` });
  }
}

/** Microbatches each data-parallel replica runs (both frameworks run the same whole number on every one; capabilityMessages reports when the plan's differ). */
export function microbatchesPerReplica(layout: PlanLayout): number {
  return Math.max(1, Math.round(layout.groups[0]!.microbatches));
}

/** The plan's cross-site network settings, which are communication-library settings rather than framework arguments. */
export function networkNote(layout: PlanLayout, framework: string, messages: ExportMessage[]): void {
  const settings = layout.plan.network ?? [];
  if (settings.length === 0) return;
  const described = settings.map((s) => `${s.between.join('<->')}: ${s.transport}, ${s.flowsPerGpuPair} flow(s) per GPU pair, ${s.collectives} collectives, compression ${s.gradientCompression}`).join('; ');
  messages.push({ severity: 'note', message: `the plan's cross-site network settings are not ${framework} arguments; configure them in the communication library and network (${described})` });
}

/** The architecture the plan was costed for, in one line (layers, widths, attention, MLP, experts, vocabulary). */
export function architectureSummary(scenario: Scenario): string {
  const m = scenario.model;
  const attention = m.attention ? `multi-head latent attention (q rank ${m.attention.qLoraRank ?? 'none'}, kv rank ${m.attention.kvLoraRank})`
    : `${m.heads} heads, ${m.kvHeads} key/value heads${m.headDim !== undefined ? `, head dim ${m.headDim}` : ''}`;
  const experts = m.moe ? `, ${m.moe.experts} experts top-${m.moe.topK} of width ${m.moe.expertFfnHidden}${m.moe.sharedExperts > 0 ? ` + ${m.moe.sharedExperts} shared` : ''}` : '';
  const window = m.slidingWindow ? `, sliding window ${m.slidingWindow.tokens} on ${m.slidingWindow.layers ?? m.layers} layers` : '';
  return `${m.layers} layers, hidden ${m.hidden}, ${attention}, ${m.mlp} FFN ${m.ffnHidden}${experts}${window}, vocabulary ${m.vocab}, embeddings ${m.tiedEmbeddings ? 'tied' : 'untied'}${m.mtpLayers ? `, ${m.mtpLayers} MTP layer(s)` : ''}`;
}
