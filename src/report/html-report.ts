/**
 * The self-contained HTML report: scenario and plan tables with the bound and gap, the
 * iteration-time breakdown beside the baselines, the cost (priced scenarios), the pipeline
 * timeline, the site map and memory per GPU per site; for an infeasible scenario, why no plan
 * fits; on request the GPU-budget frontier and the what-if, baseline-plan and idle-GPU sections. Inline CSS and SVG only, no scripts and nothing fetched. Every piece of user text is
 * escaped.
 */
import { BREAKDOWN_PARTS, breakdownChartSvg } from './breakdown-chart';
import { costSection } from './cost-section';
import { escapeHtml, formatPercent, formatSeconds } from './html-escape';
import { extrasSections } from './extras-section';
import { frontierSection } from './frontier-section';
import { memoryChartSvg } from './memory-chart';
import type { ReportData } from './report-data';
import { siteMapSvg } from './site-map-svg';
import { timelineSvg } from './timeline-svg';
import { bytesPerSToGbps } from '../model/units';
import { FRAMEWORKS, capabilitiesOf, type Framework } from '../model/framework-capabilities';
import { gathersParamsInFp8 } from '../model/memory';

const CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1140px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f4f7fb; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.tables { display: flex; gap: 24px; flex-wrap: wrap; } .note { color: #555; font-style: italic; }
.status { display: inline-block; padding: 2px 8px; border-radius: 4px; background: #e8f1e4; } .status.bad { background: #fbe5e5; }
svg text { font: 12px system-ui, sans-serif; fill: #222; } svg text.small, svg text.lane-label { font-size: 11px; }
svg text.op-label { font-size: 9px; fill: #fff; } svg text.link-text { fill: #b03030; } svg text.link-label { font-size: 12px; fill: #b03030; }
.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
li.diagnosis-item { margin-bottom: 10px; }
`;

export function htmlReport(data: ReportData): string {
  const { scenario } = data;
  const sections: string[] = [];
  sections.push(`<h1>ScaleAcross report: ${escapeHtml(scenario.name)}</h1>`);
  sections.push(`<p>${escapeHtml(scenario.model.name)} on ${scenario.sites.reduce((s, x) => s + x.gpus, 0).toLocaleString('en-US')} GPUs at ${scenario.sites.length} site(s). ${originLine(data)}</p>`);
  if (data.calibration) sections.push(`<p class="calibration">${escapeHtml(data.calibration)}</p>`);
  sections.push(`<section id="summary"><h2>Scenario and plan</h2><div class="tables">${scenarioTable(data)}${data.plan ? planTable(data) : ''}</div>${siteTable(data)}</section>`);
  if (data.diagnosis.length > 0 || !data.plan || !data.evaluation) {
    sections.push(diagnosisSection(data));
  } else {
    const evaluation = data.evaluation;
    if (!evaluation.fits) {
      sections.push(`<section id="violations"><h2>This plan does not fit</h2><ul>${evaluation.violations.map((v) => `<li class="violation">${escapeHtml(v)}</li>`).join('')}</ul></section>`);
    }
    if (evaluation.mayNotFit) {
      const near = evaluation.predicted.sites.filter((site) => site.mayNotFit);
      sections.push(`<section id="may-not-fit"><h2>This plan may not fit</h2><ul>${near.map((site) => `<li class="may-not-fit">${escapeHtml(site.site)}: peak ${site.memoryGiBPerGpu.toFixed(1)} GiB per GPU, ${Math.round(100 * site.memoryInterval.level)}% interval ${site.memoryInterval.lowGiB.toFixed(1)}-${site.memoryInterval.highGiB.toFixed(1)} GiB, capacity ${site.memoryCapacityGiB} GiB (${escapeHtml(site.gpuType)})</li>`).join('')}</ul><p>The predicted memory fits, but the capacity lies within its interval (docs/cost-model.md §7).</p></section>`);
    }
    const interval = evaluation.predicted.interval;
    sections.push(`<section id="breakdown"><h2>Iteration time</h2><p>Predicted ${formatSeconds(evaluation.predicted.iterationTimeS)} per iteration <span id="iteration-interval" data-low-s="${interval.lowS}" data-high-s="${interval.highS}" data-level="${interval.level}">(${formatSeconds(interval.lowS)} to ${formatSeconds(interval.highS)}, ${Math.round(100 * interval.level)}% prediction interval from the calibration residuals${interval.note ? `; wide: ${escapeHtml(interval.note)}` : ''})</span>, MFU ${formatPercent(evaluation.predicted.mfu)}, ${evaluation.predicted.tokensPerSecondPerGpu.toFixed(0)} tokens/s/GPU, ${evaluation.predicted.modelTflopsPerGpu.toFixed(0)} model and ${evaluation.predicted.hardwareTflopsPerGpu.toFixed(0)} hardware TFLOP/s/GPU. Bars: the critical path of each plan, split by cause.</p>${breakdownChartSvg(data.bars)}${breakdownTable(data)}</section>`);
    const cost = costSection(data);
    if (cost) sections.push(cost);
    sections.push(timelineSection(data));
    sections.push(`<section id="site-map-section"><h2>Site map</h2><p>Boxes: sites, their GPUs and the pipeline stages and replicas they host. Edges: links with bandwidth, round-trip time and the predicted share of the iteration each is busy (busier direction); thicker is busier.</p>${siteMapSvg(scenario, evaluation.predicted)}${linkTable(data)}</section>`);
    sections.push(`<section id="memory"><h2>Memory per GPU</h2><p>Largest memory per GPU at each site (bar) against the site's GPU capacity (black line). Peak: ${evaluation.predicted.peakMemory.totalGiB.toFixed(1)} GiB on stage ${evaluation.predicted.peakMemory.stage} at ${escapeHtml(evaluation.predicted.peakMemory.site)} (${Math.round(100 * evaluation.predicted.memoryInterval.level)}% interval ${evaluation.predicted.memoryInterval.lowGiB.toFixed(1)}-${evaluation.predicted.memoryInterval.highGiB.toFixed(1)} GiB; grey whiskers: each site's interval).</p>${memoryChartSvg(evaluation.predicted.sites)}</section>`);
  }
  const frontier = frontierSection(data.frontier);
  if (frontier) sections.push(frontier);
  sections.push(...extrasSections(data.extras));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ScaleAcross report: ${escapeHtml(scenario.name)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${CSS}</style></head>
<body>
${sections.join('\n')}
<p class="note">Generated by ScaleAcross from the calibrated cost model (docs/cost-model.md). Predictions, not measurements.</p>
</body></html>
`;
}

function originLine(data: ReportData): string {
  const origin = data.origin;
  if (origin.kind === 'given') {
    return `Plan given in <code>${escapeHtml(origin.planFile)}</code> and evaluated; no search ran, so there is no lower bound.`;
  }
  if (!data.plan) return `Search status: <span class="status bad">${escapeHtml(origin.status)}</span>.`;
  return `Plan found by the search: <span class="status">${escapeHtml(origin.status)}</span>.`;
}

function row(label: string, value: string, id?: string): string {
  return `<tr${id ? ` id="${id}"` : ''}><th>${escapeHtml(label)}</th><td>${value}</td></tr>`;
}

function scenarioTable(data: ReportData): string {
  const { model, training } = data.scenario;
  const rows = [
    row('model', escapeHtml(model.name)),
    row('layers x hidden', `${model.layers} x ${model.hidden} (FFN ${model.ffnHidden}, ${model.heads} heads, ${model.kvHeads} KV heads)`),
    model.moe ? row('experts', `${model.moe.experts}, top-${model.moe.topK}`) : '',
    row('sequence length', String(training.seqLen)),
    row('global batch', `${training.globalBatchSeqs} sequences`),
    row('precision', escapeHtml(training.fp8Recipe ? `${training.precision} (${training.fp8Recipe} scaling)` : training.precision)
      + (training.fp8ParamGather ? (data.plan && !gathersParamsInFp8(data.scenario, data.plan) ? '; fp8 parameter gather off (ZeRO 0)' : '; weights kept and gathered in fp8') : '')
      + `; ${training.gradientDtype} gradients`
      + (training.optimizerMomentsDtype === 'bf16' ? (data.plan && data.plan.zero === 0 ? '; Adam moments in fp32 (bf16 needs ZeRO >= 1)' : '; Adam moments in bf16') : '')
      + (training.masterWeights !== 'fp32' ? (data.plan && data.plan.zero === 0 ? '; fp32 master weights (ZeRO 0)' : training.masterWeights === 'none' ? '; no master weights (the bf16 weights are updated)' : '; master weights as 16-bit remainders') : '')),
  ];
  return `<table id="scenario-table"><caption>Scenario</caption>${rows.join('')}</table>`;
}

function planTable(data: ReportData): string {
  const plan = data.plan!;
  const layout = data.layout!;
  const rows = [
    row('degrees', `tp ${plan.tp} x cp ${plan.cp} x ep ${plan.ep}${plan.expertTp !== undefined && plan.expertTp !== plan.tp ? ` (expert tp ${plan.expertTp})` : ''} x pp ${plan.pp} x dp ${plan.dp}`, 'plan-degrees'),
    row('schedule', `${escapeHtml(plan.schedule)}${plan.virtualStages > 1 ? ` (${plan.virtualStages} chunks per stage)` : ''}`),
    row('microbatch', `${plan.microBatchSeqs} sequence(s); ${layout.groups.map((g) => +g.microbatches.toFixed(3)).join(' / ')} per replica`),
    row('recompute, ZeRO', `${escapeHtml(plan.recompute)}${plan.recomputeModules ? ` (${escapeHtml(plan.recomputeModules.join(', '))})` : ''}, ZeRO-${plan.zero}`),
    ...(plan.rankOrder === 'tp-cp-ep-pp-dp' ? [row('rank order', 'tp-cp-ep-pp-dp (a replica\'s stages side by side; Megatron-LM --use-tp-pp-dp-mapping)')] : []),
    row('layers per stage', layout.stages.map((s) => s.layers).join(', ')),
  ];
  layout.groups.forEach((group, g) => {
    const runs: string[] = [];
    let start = 0;
    for (let j = 1; j <= group.stageSite.length; j++) {
      if (j === group.stageSite.length || group.stageSite[j] !== group.stageSite[start]) {
        runs.push(`stages ${start}-${j - 1} on ${escapeHtml(data.scenario.sites[group.stageSite[start]!]!.name)}`);
        start = j;
      }
    }
    rows.push(`<tr class="replica-group" data-group="${g}"><th>group ${g}: ${group.replicas} replica(s)</th><td>${runs.join(' → ')}</td></tr>`);
  });
  const origin = data.origin;
  const label = (f: Framework) => capabilitiesOf(f).label;
  if (origin.kind === 'searched' && origin.framework) rows.push(row('framework', `planned for ${escapeHtml(label(origin.framework))}: searched only what it runs as planned`, 'plan-framework'));
  if (data.frameworks) {
    const fit = data.frameworks;
    const parts = [`runs as is in ${fit.runnable.filter((f) => !fit.differences[f]).map(label).join(', ') || 'neither Megatron-LM nor torchtitan'}`];
    for (const f of fit.runnable.filter((x) => fit.differences[x])) parts.push(`with differences in ${label(f)}: ${fit.differences[f]!.map((m) => m.split('; ')[0]).join('; ')}`);
    for (const f of FRAMEWORKS.filter((x) => !fit.runnable.includes(x))) parts.push(`not in ${label(f)}: ${fit.missing[f]!.map((m) => m.split('; ')[0]).join('; ')}`);
    rows.push(row('frameworks', escapeHtml(parts.join('; ')), 'plan-frameworks'));
  }
  if (origin.kind === 'searched') {
    const bound = origin.bound;
    const space = origin.framework ? `${label(origin.framework)}'s search space` : 'the search space';
    rows.push(row('lower bound', `${formatSeconds(bound.lowerBoundS)} on every plan in ${escapeHtml(space)}${bound.proven ? ' (proven)' : ' (not proven)'}`, 'plan-bound'));
    rows.push(row('gap', formatPercent(bound.gap), 'plan-gap'));
  } else {
    rows.push(row('lower bound', 'none: this plan was given, not searched for (run report without --plan for a bound)', 'plan-bound'));
  }
  for (const s of plan.network ?? []) {
    rows.push(row(`network ${s.between.join('↔')}`, escapeHtml(`${s.transport}, ${s.flowsPerGpuPair} flow(s) per GPU pair, ${s.collectives} collectives, compression ${s.gradientCompression}`)));
  }
  return `<table id="plan-table"><caption>Plan</caption>${rows.join('')}</table>`;
}

function siteTable(data: ReportData): string {
  const rows = data.scenario.sites.map((site, i) => {
    const usage = data.evaluation?.predicted.sites[i];
    return `<tr class="site-row" data-site="${escapeHtml(site.name)}"><td>${escapeHtml(site.name)}</td><td>${escapeHtml(site.gpu.name)}</td><td class="num">${site.gpus}</td><td class="num">${usage?.gpusUsed ?? '-'}</td><td class="num">${usage ? `${usage.memoryGiBPerGpu.toFixed(1)} / ${usage.memoryCapacityGiB}` : '-'}</td></tr>`;
  });
  return `<table id="site-table"><caption>Sites</caption><tr><th>site</th><th>GPU</th><th>GPUs</th><th>used</th><th>GiB per GPU / capacity</th></tr>${rows.join('')}</table>`;
}

function breakdownTable(data: ReportData): string {
  const header = `<tr><th>part</th>${data.bars.map((b) => `<th>${escapeHtml(b.name)}</th>`).join('')}</tr>`;
  const rows = BREAKDOWN_PARTS.map((part) => `<tr><td>${escapeHtml(part.label)}</td>${data.bars.map((b) => `<td class="num">${b.breakdown ? formatSeconds(b.breakdown[part.key]) : '-'}</td>`).join('')}</tr>`);
  const total = `<tr><th>iteration</th>${data.bars.map((b) => `<th class="num">${b.iterationTimeS === undefined ? 'no plan fits' : formatSeconds(b.iterationTimeS)}</th>`).join('')}</tr>`;
  const speedups = data.baselines.length > 0
    ? `<p>${data.baselines.map((b) => (b.iterationTimeS === undefined ? `${escapeHtml(b.name)}: no plan fits its space` : `${escapeHtml(b.name)}: ${formatSeconds(b.iterationTimeS)}, ours is ${(b.speedup ?? 0).toFixed(2)}x faster${b.speedupAtLeast === undefined ? '' : ` (at least <span class="speedup-at-least">${b.speedupAtLeast.toFixed(2)}x</span> proven)`}`)).join('; ')}.</p>`
    : '<p class="note">No baselines computed.</p>';
  return `<table id="breakdown-table">${header}${rows.join('')}${total}</table>${speedups}`;
}

function timelineSection(data: ReportData): string {
  if (!data.timeline) return `<section id="timeline"><h2>Pipeline timeline</h2><p class="note">${escapeHtml(data.timelineNote ?? 'no timeline')}</p></section>`;
  const { timeline, pipeline } = data.timeline;
  const deviation = (timeline.spanS - pipeline.closedFormS) / pipeline.closedFormS;
  const notes: string[] = [];
  if (data.layout!.groups.length > 1) notes.push(`Drawn: one replica of group ${data.timeline.group} (of ${data.layout!.groups.length}), the group that sets the iteration time.`);
  if (timeline.microbatches > 64) notes.push(`${timeline.microbatches} microbatches: every op is drawn, as thin unlabelled bars.`);
  notes.push(`Simulated span ${formatSeconds(timeline.spanS)}; the closed form gives ${formatSeconds(pipeline.closedFormS)} (${deviation >= 0 ? '+' : ''}${(100 * deviation).toFixed(1)}%); the cost model's pipeline phase is ${formatSeconds(pipeline.phaseS)} (the span for 1F1B and ZB-H1, else the larger of the two).`);
  const legend = '<p class="legend"><span style="background:#4e79a7"></span>forward (lighter/darker: later chunks)<span style="background:#59a14f"></span>backward<span style="background:#76b7b2"></span>weight gradient (ZB-H1)<span style="background:#ddd"></span>idle (bubble)<span style="background:#e15759"></span>activations across a link<span style="background:#f1a340"></span>gradients back across a link</p>';
  return `<section id="timeline"><h2>Pipeline timeline (one iteration)</h2><p>${notes.map(escapeHtml).join(' ')}</p>${legend}${timelineSvg(data.scenario, data.timeline)}</section>`;
}

function linkTable(data: ReportData): string {
  if (data.scenario.links.length === 0) return '';
  const rows = data.scenario.links.map((link, i) => {
    const usage = data.evaluation!.predicted.links[i]!;
    return `<tr><td>${escapeHtml(link.label)}</td><td class="num">${bytesPerSToGbps(link.bandwidthBytesPerS).toLocaleString('en-US')}</td><td class="num">${(link.rttS * 1000).toFixed(2)}</td><td class="num">${(usage.bytesPerIteration / 1e9).toFixed(1)}</td><td class="num">${formatPercent(usage.utilization)}</td></tr>`;
  });
  return `<table id="link-table"><tr><th>link</th><th>Gb/s</th><th>RTT ms</th><th>GB per iteration (busier direction)</th><th>utilisation</th></tr>${rows.join('')}</table>`;
}

function diagnosisSection(data: ReportData): string {
  const items = data.diagnosis.map((item) => `<li class="diagnosis-item" data-constraint="${escapeHtml(item.constraint)}"><strong>${escapeHtml(item.constraint)}</strong>: ${escapeHtml(item.detail)}${item.relaxations.length > 0 ? `<ul>${item.relaxations.map((r) => `<li class="relaxation">${escapeHtml(r)}</li>`).join('')}</ul>` : ''}</li>`);
  return `<section id="diagnosis"><h2>Why no plan fits</h2><ul>${items.join('')}</ul></section>`;
}
