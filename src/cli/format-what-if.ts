/** Text and JSON of `plan`'s what-if table, idle-GPU explanation and comparison with a given baseline plan. */
import type { IdleGpuExplanation } from '../diagnose/idle-gpus';
import type { WhatIfOutcome } from '../diagnose/what-if';
import { planSummary } from '../model/plan-summary';
import type { BaselinePlanResult } from '../solve/baseline-plan';
import { intervalText } from './format-evaluation';

const s3 = (x: number | null): string => (x === null ? '-' : `${x.toFixed(3)} s`);

/** One row per change: time, bound, slowdown against the base plan, status, and where it runs or why nothing fits. */
export function formatWhatIf(outcomes: readonly WhatIfOutcome[], timeLimitS: number): string {
  const width = Math.max(6, ...outcomes.map((o) => o.change.length));
  const lines = [`What if (each change re-planned, up to ${timeLimitS} s each; slowdown = its time / the plan's)`];
  lines.push(`  ${'change'.padEnd(width)}  ${'time'.padStart(9)}  ${'bound'.padStart(9)}  ${'slowdown'.padStart(8)}  status`);
  for (const o of outcomes) {
    const slowdown = o.slowdown === null ? '-' : `${o.slowdown.toFixed(2)}x`;
    lines.push(`  ${o.change.padEnd(width)}  ${s3(o.iterationTimeS).padStart(9)}  ${s3(o.lowerBoundS).padStart(9)}  ${slowdown.padStart(8)}  ${o.status}`);
    if (o.groups) lines.push(`  ${''.padEnd(width)}  sites split into ${o.groups.map((g) => g.join(', ')).join(' | ')}: the job runs in one part${o.plan ? ` (best: ${o.sites.join(', ')})` : ''}`);
    if (o.plan) lines.push(`  ${''.padEnd(width)}  ${planSummary(o.plan)}`);
    for (const r of o.reroutes) lines.push(`  ${''.padEnd(width)}  re-routed (fewest hops): ${r}`);
    for (const r of o.reasons) lines.push(`  ${''.padEnd(width)}  - ${r}`);
  }
  return lines.join('\n');
}

export const whatIfJson = (outcomes: readonly WhatIfOutcome[]) => outcomes.map((o) => ({ ...o }));

/** Why GPUs sit idle, and the best plan that uses them. */
export function formatIdleGpus(explanation: IdleGpuExplanation): string {
  const lines = ['Idle GPUs (re-planned with search.allowIdleGpus: false: every GPU used)'];
  for (const s of explanation.sites) lines.push(`  ${s.site}: ${s.idle.toLocaleString('en-US')} of ${s.gpus.toLocaleString('en-US')} GPUs idle: ${s.reason}`);
  if (explanation.planUsingThem) {
    lines.push(`  best plan using every GPU: ${planSummary(explanation.planUsingThem)}`);
    if (explanation.largestIncrease) lines.push(`  largest growth against the plan: ${explanation.largestIncrease}`);
  }
  for (const r of explanation.kind === 'no-plan' ? explanation.reasons : []) lines.push(`  - ${r}`);
  return lines.join('\n');
}

export function idleGpusJson(explanation: IdleGpuExplanation) {
  return explanation.sites.map((s) => ({
    ...s,
    kind: explanation.kind,
    proven: explanation.proven,
    ...(explanation.lowerBoundUsingThemS !== undefined ? { lowerBoundUsingThemS: explanation.lowerBoundUsingThemS } : {}),
    ...(explanation.planUsingThem ? { planUsingThem: explanation.planUsingThem } : {}),
    ...(explanation.largestIncrease ? { largestIncrease: explanation.largestIncrease } : {}),
    ...(explanation.reasons.length > 0 ? { reasons: explanation.reasons } : {}),
  }));
}

/** "Against your plan (file): 6.9 s (...), the best plan is 1.09x faster", or why it does not fit. */
export function formatBaselinePlan(b: BaselinePlanResult): string {
  const time = `${b.iterationTimeS.toFixed(3)} s (${intervalText(b.evaluation.predicted.interval)})`;
  if (!b.fits) return `Against your plan (${b.source}): does not fit this scenario (${time} if it did): ${b.violations.join('; ')}`;
  const speedup = b.speedup === null ? '' : `, the best plan is ${b.speedup.toFixed(3)}x faster (speedup ${b.speedup.toFixed(4)}: ${(100 * (1 - 1 / b.speedup)).toFixed(1)}% less time)`;
  return `Against your plan (${b.source}): ${time}${speedup}`;
}

export function baselinePlanJson(b: BaselinePlanResult) {
  return {
    source: b.source, fits: b.fits, violations: b.violations, iterationTimeS: b.iterationTimeS,
    interval: b.evaluation.predicted.interval, speedup: b.speedup, predicted: b.evaluation.predicted,
  };
}
