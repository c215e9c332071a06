/** Checks shared by the framework exports. */
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
