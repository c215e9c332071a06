/**
 * The report's sections for what `plan` adds on request: the speedup over the plan run today
 * (`--baseline-plan`), why GPUs sit idle, and the what-if table (`--what-if`).
 */
import type { IdleGpuExplanation } from '../diagnose/idle-gpus';
import type { WhatIfOutcome } from '../diagnose/what-if';
import { planSummary } from '../model/plan-summary';
import type { BaselinePlanResult } from '../solve/baseline-plan';
import { escapeHtml, formatSeconds } from './html-escape';

export interface ReportExtras {
  readonly baselinePlan?: BaselinePlanResult;
  readonly idleGpus?: IdleGpuExplanation;
  readonly whatIf?: readonly WhatIfOutcome[];
}

const cellS = (x: number | null | undefined): string => `<td class="num" style="white-space: nowrap">${x === null || x === undefined ? '-' : formatSeconds(x)}</td>`;

/** The sections, in order; none when nothing was asked or found. */
export function extrasSections(extras: ReportExtras | undefined): string[] {
  if (!extras) return [];
  const sections: string[] = [];
  if (extras.baselinePlan) sections.push(baselinePlanSection(extras.baselinePlan));
  if (extras.idleGpus) sections.push(idleGpusSection(extras.idleGpus));
  if (extras.whatIf) sections.push(whatIfSection(extras.whatIf));
  return sections;
}

function baselinePlanSection(b: BaselinePlanResult): string {
  const what = `<p>The plan in ${escapeHtml(b.source)}, evaluated by the same cost model: ${formatSeconds(b.iterationTimeS)} per iteration.</p>`;
  if (!b.fits) return `<section id="baseline-plan"><h2>Against your plan</h2>${what}<p>It does not fit this scenario:</p><ul>${b.violations.map((v) => `<li class="violation">${escapeHtml(v)}</li>`).join('')}</ul></section>`;
  const speedup = b.speedup === null ? '' : `<p id="baseline-plan-speedup" data-speedup="${b.speedup}">This plan is <strong>${b.speedup.toFixed(3)}x</strong> as fast (${(100 * (1 - 1 / b.speedup)).toFixed(1)}% less time per iteration).</p>`;
  return `<section id="baseline-plan"><h2>Against your plan</h2>${what}${speedup}</section>`;
}

function idleGpusSection(e: IdleGpuExplanation): string {
  const rows = e.sites.map((s) => `<tr><td>${escapeHtml(s.site)}</td><td class="num">${s.idle.toLocaleString('en-US')} of ${s.gpus.toLocaleString('en-US')}</td><td>${escapeHtml(s.reason)}</td>${cellS(s.planUsingThemS)}</tr>`).join('');
  const using = e.planUsingThem ? `<p>Best plan found that uses every GPU: ${escapeHtml(planSummary(e.planUsingThem))}${e.largestIncrease ? `; largest growth against this plan: ${escapeHtml(e.largestIncrease)}` : ''}.</p>` : '';
  const reasons = e.kind === 'no-plan' ? `<ul>${e.reasons.map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>` : '';
  return `<section id="idle-gpus"><h2>Why GPUs sit idle</h2><p>Re-planned with <code>search.allowIdleGpus: false</code> (every GPU of every site used).</p><table><tr><th>site</th><th>idle GPUs</th><th>why</th><th>plan using them</th></tr>${rows}</table>${using}${reasons}</section>`;
}

function whatIfSection(outcomes: readonly WhatIfOutcome[]): string {
  const rows = outcomes.map((o) => {
    const notes = [
      ...(o.groups ? [`sites split into ${o.groups.map((g) => g.join(', ')).join(' | ')}; the job runs in one part${o.plan ? ` (${o.sites.join(', ')})` : ''}`] : []),
      ...(o.plan ? [planSummary(o.plan)] : []),
      ...o.reroutes.map((r) => `re-routed: ${r}`),
      ...o.reasons,
    ];
    return `<tr class="what-if"><td style="white-space: nowrap">${escapeHtml(o.change)}</td><td>${o.status}</td>${cellS(o.iterationTimeS)}${cellS(o.lowerBoundS)}<td class="num">${o.slowdown === null ? '-' : `${o.slowdown.toFixed(2)}x`}</td><td>${notes.map(escapeHtml).join('<br>')}</td></tr>`;
  }).join('');
  return `<section id="what-if"><h2>What if</h2><p>Each change re-planned on its own; slowdown is its plan's time over this plan's. When a change leaves sites no link joins, the job runs in one part.</p><table><tr><th>change</th><th>status</th><th>time</th><th>bound</th><th>slowdown</th><th>plan, or why none fits</th></tr>${rows}</table></section>`;
}
