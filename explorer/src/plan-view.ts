/** What the page shows of a plan result and of a diagnosis, built in the worker from the library. */
import { planResultJson } from '../../src/cli/format-plan';
import type { Diagnosis } from '../../src/diagnose/diagnose';
import { applyRelaxation } from '../../src/diagnose/relaxations';
import type { FrameworkExport } from '../../src/export/export-types';
import { exportMegatron } from '../../src/export/megatron';
import { formatRankMap } from '../../src/export/rank-map';
import { exportTorchtitan } from '../../src/export/torchtitan';
import type { PlanLayout } from '../../src/model/placement';
import type { PlanSpec } from '../../src/model/plan-schema';
import type { Scenario } from '../../src/model/scenario';
import { bytesPerSToGbps } from '../../src/model/units';
import { breakdownChartSvg } from '../../src/report/breakdown-chart';
import { reportFromPlanResult } from '../../src/report/report-data';
import { siteMapSvg } from '../../src/report/site-map-svg';
import { timelineSvg } from '../../src/report/timeline-svg';
import type { PlanResult } from '../../src/solve/plan-result';
import type { DiagnosisView, PlanView } from './protocol';

export function planView(scenario: Scenario, result: PlanResult, elapsedS: number): PlanView {
  const data = reportFromPlanResult(scenario, result);
  const plan = data.plan!;
  const layout = data.layout!;
  const evaluation = data.evaluation!;
  const predicted = evaluation.predicted;
  const summary = [
    { label: 'degrees', value: `tp ${plan.tp} x cp ${plan.cp} x ep ${plan.ep} x pp ${plan.pp} x dp ${plan.dp}` },
    { label: 'schedule', value: `${plan.schedule}${plan.virtualStages > 1 ? ` (${plan.virtualStages} chunks per stage)` : ''}` },
    { label: 'microbatch', value: `${plan.microBatchSeqs} sequence(s); ${layout.groups.map((g) => +g.microbatches.toFixed(3)).join(' / ')} per replica` },
    { label: 'recompute, ZeRO', value: `${plan.recompute}, ZeRO-${plan.zero}` },
    ...(plan.rankOrder === 'tp-cp-ep-pp-dp' ? [{ label: 'rank order', value: "tp-cp-ep-pp-dp (a replica's stages side by side)" }] : []),
    { label: 'layers per stage', value: layout.stages.map((s) => s.layers).join(', ') },
    ...layout.groups.map((group, g) => ({ label: `group ${g}: ${group.replicas} replica(s)`, value: stageRuns(scenario, group.stageSite) })),
    { label: 'MFU', value: `${(100 * predicted.mfu).toFixed(1)}%` },
    { label: 'prediction interval', value: `${predicted.interval.lowS.toFixed(3)} to ${predicted.interval.highS.toFixed(3)} s (${Math.round(100 * predicted.interval.level)}%)` },
    { label: 'frameworks', value: result.frameworks && result.frameworks.length > 0 ? `runs as is in ${result.frameworks.join(', ')}` : 'neither Megatron-LM nor torchtitan runs it as planned' },
  ];
  return {
    planJson: planResultJson(result, scenario),
    status: result.status,
    iterationTimeS: predicted.iterationTimeS,
    lowerBoundS: result.bound.lowerBoundS,
    gap: result.bound.gap,
    summary,
    bars: data.bars,
    breakdownSvg: breakdownChartSvg(data.bars),
    timelineSvg: data.timeline ? timelineSvg(scenario, data.timeline) : undefined,
    timelineNote: data.timelineNote,
    siteMapSvg: siteMapSvg(scenario, predicted),
    network: (plan.network ?? []).map((s) => ({ between: s.between.join(' - '), settings: `${s.transport}, ${s.flowsPerGpuPair} flow(s) per GPU pair, ${s.collectives} collectives, compression ${s.gradientCompression}` })),
    links: scenario.links.map((link, i) => ({ label: link.label, gbps: bytesPerSToGbps(link.bandwidthBytesPerS), rttMs: link.rttS * 1000, utilization: predicted.links[i]?.utilization ?? 0 })),
    exports: { megatron: exportText(scenario, layout, 'megatron'), torchtitan: exportText(scenario, layout, 'torchtitan') },
    elapsedS,
  };
}

/** `stages 0-62 on bldg-a -> stages 63-125 on bldg-b`. */
function stageRuns(scenario: Scenario, stageSite: readonly number[]): string {
  const runs: string[] = [];
  let start = 0;
  for (let j = 1; j <= stageSite.length; j++) {
    if (j === stageSite.length || stageSite[j] !== stageSite[start]) {
      runs.push(`stages ${start}-${j - 1} on ${scenario.sites[stageSite[start]!]!.name}`);
      start = j;
    }
  }
  return runs.join(' -> ');
}

/** The text `scaleacross export --format F` prints: the settings, the rank map, and the export's messages. */
function exportText(scenario: Scenario, layout: PlanLayout, format: 'megatron' | 'torchtitan'): string {
  const result: FrameworkExport = format === 'megatron' ? exportMegatron(scenario, layout) : exportTorchtitan(scenario, layout);
  const lines = [`# ${format === 'megatron' ? 'Megatron-LM arguments' : 'torchtitan job config'} for ${scenario.name}`, result.text, ''];
  lines.push(...formatRankMap(result.rankMap).split('\n').map((line) => `# ${line}`));
  lines.push(...result.messages.map((m) => `# ${m.severity}: ${m.message}`));
  return `${lines.join('\n')}\n`;
}

export function diagnosisView(scenario: Scenario, diagnosis: Diagnosis, elapsedS: number): DiagnosisView {
  const fix = (r: Diagnosis['conflicts'][number]['relaxations'][number]) => ({
    change: r.change, path: r.path, verifiedIterationTimeS: r.verifiedIterationTimeS, spec: applyRelaxation(scenario.spec, scenario, r),
  });
  const conflicts: DiagnosisView['conflicts'][number][] = diagnosis.conflicts.map((c) => ({ set: c.set, constraint: c.constraint, detail: c.detail, fixes: c.relaxations.map(fix) }));
  // With several conflicts, one fix alone is not enough: the combined fix, when verified, is offered as well.
  const combined = diagnosis.combinedFix;
  if ((diagnosis.conflictSets ?? 1) > 1 && combined?.fits && combined.iterationTimeS !== undefined) {
    const spec = combined.changes.reduce((s, r) => applyRelaxation(s, scenario, r), scenario.spec);
    conflicts.push({ set: 0, constraint: 'together', detail: 'the smallest fix of each conflict, applied together', fixes: [{ change: combined.changes.map((r) => r.change).join('; and '), path: '', verifiedIterationTimeS: combined.iterationTimeS, spec }] });
  }
  return { status: diagnosis.status, conflicts, conflictSets: diagnosis.conflictSets ?? (diagnosis.conflicts.length > 0 ? 1 : 0), reasons: diagnosis.reasons, elapsedS };
}

/** A plan's shape: degrees, schedule and which sites each replica group's stages sit on (`tp 8 pp 16 dp 64, interleaved, 64x bldg-a:8 bldg-b:8`). */
export function planShape(plan: PlanSpec): string {
  const groups = plan.placement?.replicaGroups.map((g) => `${g.replicas}x ${g.stageSites.map((s) => `${s.site}:${s.stages}`).join(' ')}`).join(', ') ?? 'one site';
  return `tp ${plan.tp} cp ${plan.cp} ep ${plan.ep} pp ${plan.pp} dp ${plan.dp}, ${plan.schedule}, ${groups}`;
}
