/** Human-readable rendering of evaluations: a full breakdown for one plan, a table for many. */
import type { Evaluation, Scenario } from '../index';
import type { TimeInterval } from '../model/prediction-interval';
import { compactRanges } from '../report/site-summary';

const seconds = (s: number): string => (s >= 100 ? s.toFixed(0) : s >= 1 ? s.toFixed(2) : s.toFixed(3));
/** `5.41-6.05, 90%`: a prediction interval, in the point estimate's digits. */
export const intervalText = (interval: TimeInterval): string => `${seconds(interval.lowS)}-${seconds(interval.highS)}, ${Math.round(100 * interval.level)}%`;
/** `5.73 s (5.41-6.05, 90%)`. */
export const secondsWithInterval = (s: number, interval: TimeInterval): string => `${seconds(s)} s (${intervalText(interval)})`;
const percent = (x: number): string => `${(100 * x).toFixed(1)}%`;
const bar = (fraction: number, width = 24): string => '#'.repeat(Math.round(Math.max(0, fraction) * width));

const BREAKDOWN_LABELS: Record<string, string> = {
  computeS: 'compute (fwd+bwd+recompute)',
  tpExposedS: 'tensor-parallel comm',
  cpExposedS: 'context-parallel comm',
  epExposedS: 'expert-parallel all-to-all',
  ppExposedS: 'pipeline sends in-site',
  dpExposedS: 'gradient sync in-site',
  bubbleS: 'pipeline bubble',
  crossSiteS: 'cross-site links',
  optimizerS: 'optimizer step',
};

/** Full report of one evaluation. */
export function formatEvaluation(scenario: Scenario, evaluation: Evaluation): string {
  const p = evaluation.predicted;
  const lines: string[] = [];
  const gpus = scenario.sites.reduce((sum, site) => sum + site.gpus, 0);
  lines.push(`Scenario ${scenario.name}: ${scenario.model.name} on ${gpus} GPUs at ${scenario.sites.length} site(s)`);
  lines.push(evaluation.fits ? (evaluation.mayNotFit ? `Fits: yes, but may not fit: ${mayNotFitSites(evaluation)}${headroomHint(evaluation)}` : 'Fits: yes') : `Fits: NO\n${evaluation.violations.map((v) => `  - ${v}`).join('\n')}`);
  lines.push('');
  lines.push(`Iteration time   ${secondsWithInterval(p.iterationTimeS, p.interval)}   MFU ${percent(p.mfu)}   ${p.tokensPerSecondPerGpu.toFixed(0)} tokens/s/GPU   ${p.modelTflopsPerGpu.toFixed(0)} model TFLOP/s/GPU   ${p.hardwareTflopsPerGpu.toFixed(0)} hardware TFLOP/s/GPU`);
  if (p.interval.note) lines.push(`Interval         wide: ${p.interval.note}`);
  lines.push(`GPUs             ${p.gpusUsed} used, ${p.gpusIdle} idle; ${p.microbatchesPerReplica} microbatches per replica`);
  lines.push('');
  lines.push('Breakdown (critical path)');
  for (const [key, value] of Object.entries(p.breakdown)) {
    if (value === 0 && key !== 'computeS') continue;
    const share = value / p.iterationTimeS;
    lines.push(`  ${(BREAKDOWN_LABELS[key] ?? key).padEnd(30)} ${seconds(value).padStart(8)} s  ${percent(share).padStart(6)}  ${bar(share)}`);
  }
  const m = p.peakMemory;
  lines.push('');
  const terms: [string, number][] = [
    ['weights', m.weightsGiB], ['gradients', m.gradientsGiB], ['optimizer', m.optimizerGiB], ['fp8 weight copies', m.fp8WeightCopiesGiB],
    ['activations', m.activationsGiB], ['embedding/output', m.embeddingOutputGiB], ['CUDA context', m.cudaContextGiB],
    ['NCCL buffers', m.ncclBuffersGiB], ['fragmentation', m.fragmentationGiB],
  ];
  const named = terms.filter(([, gib]) => gib > 0).map(([name, gib]) => `${name} ${gib.toFixed(1)}`).join(' + ');
  const mi = p.memoryInterval;
  lines.push(`Memory per GPU   peak ${m.totalGiB.toFixed(1)} GiB (${mi.lowGiB.toFixed(1)}-${mi.highGiB.toFixed(1)}, ${Math.round(100 * mi.level)}%) (stage ${m.stage} at ${m.site}): ${named}`);
  lines.push('');
  lines.push('Sites');
  for (const site of p.sites) {
    const stages = site.stages.length === 0 ? 'idle' : `stages ${compactRanges(site.stages.map((s) => s.stage))}, ${Math.max(...site.stages.map((s) => s.replicas))} replica(s) of each`;
    lines.push(`  ${site.site.padEnd(14)} ${site.gpuType.padEnd(10)} ${String(site.gpusUsed).padStart(7)} used ${String(site.gpusIdle).padStart(7)} idle   ${site.memoryGiBPerGpu.toFixed(1)}/${site.memoryCapacityGiB} GiB${site.memoryReserveGiB ? ` (+${site.memoryReserveGiB} reserved)` : ''}   ${stages}${site.mayNotFit ? '   may not fit' : ''}`);
  }
  if (p.links.length > 0) {
    lines.push('');
    lines.push('Links (per direction)');
    for (const link of p.links) {
      lines.push(`  ${link.link.padEnd(30)} ${(link.bytesPerIteration / 1e9).toFixed(1).padStart(9)} GB/iteration   busy ${seconds(link.busyS)} s   utilisation ${percent(link.utilization)}`);
    }
  }
  return lines.join('\n');
}

/** Where no flagged site keeps a reserve yet, how to plan with headroom. */
function headroomHint(evaluation: Evaluation): string {
  const flagged = evaluation.predicted.sites.filter((s) => s.mayNotFit);
  return flagged.some((s) => s.memoryReserveGiB) ? '' : ' (to plan with headroom, give the site memoryReserveGiB)';
}

/** "bldg-b (78.6 GiB, interval up to 82.5, has 80)". */
function mayNotFitSites(evaluation: Evaluation): string {
  return evaluation.predicted.sites.filter((s) => s.mayNotFit)
    .map((s) => `${s.site} peaks at ${s.memoryGiBPerGpu.toFixed(1)} GiB per GPU, its ${Math.round(100 * s.memoryInterval.level)}% interval reaches ${s.memoryInterval.highGiB.toFixed(1)}, has ${s.memoryCapacityGiB}${s.memoryReserveGiB ? ` past its ${s.memoryReserveGiB} GiB reserve` : ''}`).join('; ');
}

/** One line per plan. */
export function formatEvaluationTable(evaluations: readonly Evaluation[]): string {
  const header = ' #  fits  iteration s  interval            MFU  tokens/s/GPU  GiB/GPU  first violation';
  const rows = evaluations.map((e, i) => {
    const p = e.predicted;
    return `${String(i).padStart(2)}  ${(e.fits ? (e.mayNotFit ? 'may' : 'yes') : 'NO').padEnd(4)}  ${seconds(p.iterationTimeS).padStart(11)}  ${intervalText(p.interval).padEnd(17)}  ${percent(p.mfu).padStart(6)}  ${p.tokensPerSecondPerGpu.toFixed(0).padStart(12)}  ${p.memoryGiBPerGpu.toFixed(1).padStart(7)}  ${e.violations[0] ?? ''}`;
  });
  return [header, ...rows].join('\n');
}
