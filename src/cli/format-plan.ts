/** Rendering of `plan` results: human-readable text and the documented JSON shape. */
import type { Scenario } from '../index';
import { FRAMEWORKS, capabilitiesOf, type Framework } from '../model/framework-capabilities';
import type { ExhaustiveCoverage, PlanResult } from '../solve/plan-result';
import { intervalJobOf, timeInterval } from '../model/prediction-interval';
import { planSpecCost } from '../model/prices';
import { formatCost } from './format-cost';
import { formatEvaluation, intervalText } from './format-evaluation';
import { formatScheduleSummary, formatSiteMap } from './format-site-map';

/**
 * The JSON printed by `plan --json`; `plan` is accepted verbatim by `evaluate --plan`. With a
 * priced scenario, `cost` (docs/cost-model.md §8) follows `predicted`.
 */
export function planResultJson(result: PlanResult, scenario: Scenario) {
  const cost = result.plan && result.evaluation ? planSpecCost(scenario, result.plan, result.evaluation) : undefined;
  return {
    status: result.status,
    plan: result.plan ?? null,
    predicted: result.evaluation?.predicted ?? null,
    ...(cost ? { cost } : {}),
    fits: result.evaluation?.fits ?? false,
    // Fits, but a site's peak memory lies within the memory interval of its capacity.
    mayNotFit: result.evaluation?.mayNotFit ?? false,
    bound: result.bound,
    baselines: result.baselines.map((b) => ({
      name: b.name, description: b.description, iterationTimeS: b.iterationTimeS ?? null,
      interval: b.iterationTimeS === undefined ? null : timeInterval(b.iterationTimeS, intervalJobOf(scenario)), speedup: b.speedup ?? null,
      speedupAtLeast: b.speedupAtLeast ?? null, bound: b.bound ?? null, plan: b.plan ?? null,
    })),
    network: result.plan?.network ?? [],
    solver: result.solver,
    reasons: result.reasons,
    // The framework whose space was searched (null: the framework-free space), and which run the plan as is.
    framework: result.framework ?? null,
    frameworks: result.frameworks ?? [],
    frameworkGaps: result.frameworkGaps ?? {},
    frameworkDifferences: result.frameworkDifferences ?? {},
  };
}

const labelOf = (framework: Framework): string => capabilitiesOf(framework).label;

/**
 * "Planned for F" (with --framework), the frameworks that run the plan as is, those that run it
 * with differences from the prediction, and what the others lack (each message's first clause).
 */
export function formatFrameworkLine(result: Pick<PlanResult, 'framework' | 'frameworks' | 'frameworkGaps' | 'frameworkDifferences'>): string | undefined {
  if (result.frameworks === undefined) return undefined;
  const clauses = (messages: readonly string[] | undefined) => (messages ?? []).map((m) => m.split('; ')[0]!).join('; ');
  const asIs = result.frameworks.filter((f) => (result.frameworkDifferences?.[f] ?? []).length === 0);
  const parts = [`Runs as is in: ${asIs.length > 0 ? asIs.map(labelOf).join(', ') : 'neither Megatron-LM nor torchtitan'}`];
  for (const f of result.frameworks.filter((x) => !asIs.includes(x))) parts.push(`with differences in ${labelOf(f)}: ${clauses(result.frameworkDifferences?.[f])}`);
  for (const f of FRAMEWORKS.filter((x) => !result.frameworks!.includes(x))) parts.push(`not in ${labelOf(f)}: ${clauses(result.frameworkGaps?.[f])}`);
  const planned = result.framework === undefined ? '' : `Planned for ${labelOf(result.framework)} (searched only what it runs as planned). `;
  // A framework-free plan that some framework cannot run: say how to get one it can.
  const hint = result.framework === undefined && result.frameworks.length < FRAMEWORKS.length
    ? `. For a plan a framework runs as planned: plan --framework ${FRAMEWORKS.filter((f) => !result.frameworks!.includes(f)).join('|')}` : '';
  return `${planned}${parts.join('; ')}${hint}`;
}

const seconds = (s: number): string => (Number.isFinite(s) ? `${s.toFixed(3)} s` : 'none');

/** With `boundLine`, that line replaces the bound line (the cost objective states its own bound). */
export function formatPlanResult(scenario: Scenario, result: PlanResult, boundLine?: string): string {
  const lines: string[] = [];
  const solver = result.solver;
  const how = `${solver.engine}; ${solver.timeS.toFixed(2)} s; ${solver.mipsSolved} MIPs, ${solver.pruned} of ${solver.candidates} candidates pruned by bounds${solver.timedOut ? '; stopped at the time limit' : ''}`;
  if (!result.plan || !result.evaluation) {
    const inSpace = result.framework === undefined ? '' : ` in ${labelOf(result.framework)}'s search space`;
    lines.push(result.status === 'infeasible' ? `No plan fits ${scenario.name}${inSpace}.` : `No plan found for ${scenario.name}${inSpace} (not proven infeasible).`);
    for (const reason of result.reasons) lines.push(`  - ${reason}`);
    lines.push(`Solver: ${how}`);
    if (solver.exhaustive) lines.push(formatCoverage(solver.exhaustive));
    return lines.join('\n');
  }
  const p = result.plan;
  lines.push(`Plan (${result.status}): tp ${p.tp} x cp ${p.cp} x ep ${p.ep}${p.expertTp !== undefined && p.expertTp !== p.tp ? ` (expert tp ${p.expertTp})` : ''} x pp ${p.pp} x dp ${p.dp}, microbatch ${p.microBatchSeqs} seq, ${p.schedule}${p.virtualStages > 1 ? ` (v=${p.virtualStages})` : ''}, recompute ${p.recompute}${p.recomputeModules ? ` (${p.recomputeModules.join(', ')})` : ''}, ZeRO-${p.zero}${p.rankOrder === 'tp-cp-ep-pp-dp' ? ', ranks tp-cp-ep-pp-dp' : ''}`);
  for (const group of p.placement?.replicaGroups ?? []) {
    lines.push(`  ${String(group.replicas).padStart(6)} replica(s) x ${group.microbatches ?? '-'} microbatches: ${group.stageSites.map((r) => `${r.stages} stage(s) on ${r.site}`).join(' -> ')}`);
  }
  const bound = result.bound;
  const space = result.framework === undefined ? 'the search space' : `${labelOf(result.framework)}'s search space`;
  lines.push(boundLine ?? `Bound: every plan in ${space} takes at least ${seconds(bound.lowerBoundS)}; gap ${(100 * bound.gap).toFixed(2)}%${bound.proven ? ' (proven)' : ' (not proven)'}`);
  const frameworks = formatFrameworkLine(result);
  if (frameworks !== undefined) lines.push(frameworks);
  lines.push(formatScheduleSummary(p, result.evaluation));
  lines.push('');
  lines.push(formatSiteMap(scenario, result.evaluation));
  lines.push('');
  lines.push(formatEvaluation(scenario, result.evaluation));
  const cost = planSpecCost(scenario, result.plan, result.evaluation);
  if (cost) lines.push('', formatCost(scenario, cost));
  if (result.plan.network && result.plan.network.length > 0) {
    lines.push('');
    lines.push('Network settings');
    for (const s of result.plan.network) {
      lines.push(`  ${s.between.join('<->').padEnd(30)} ${s.transport}, ${s.flowsPerGpuPair} flow(s) per GPU pair, ${s.collectives} collectives, compression ${s.gradientCompression}`);
    }
  }
  if (result.baselines.length > 0) {
    lines.push('');
    lines.push(`Baselines (best plan found in each restricted space, and what its search proved${result.framework === undefined ? '' : `, within ${labelOf(result.framework)}'s`})`);
    for (const b of result.baselines) {
      const time = b.iterationTimeS === undefined ? 'no plan fits' : `${b.iterationTimeS.toFixed(3)} s (${intervalText(timeInterval(b.iterationTimeS, intervalJobOf(scenario)))}), ours is ${b.speedup!.toFixed(2)}x faster (${(100 * (1 - 1 / b.speedup!)).toFixed(1)}% less time)${provenText(b)}`;
      lines.push(`  ${b.name.padEnd(11)} ${time}  [${b.description}]`);
    }
  }
  lines.push('');
  lines.push(`Solver: ${how}${solver.fallbacksUsed.length > 0 ? `; fallbacks used: ${solver.fallbacksUsed.join(', ')}` : ''}`);
  if (solver.exhaustive) lines.push(formatCoverage(solver.exhaustive));
  return lines.join('\n');
}

const count = (n: number): string => n.toLocaleString('en-US');

/** What `plan --exhaustive` covered: "covered N plans, evaluated M representatives, pruned K by bound" (docs/formulation.md §9). */
export function formatCoverage(c: ExhaustiveCoverage): string {
  if (c.mode === 'naive') return `Exhaustive (naive): evaluated ${count(c.plansEvaluated)} plans (${count(c.placementsEvaluated)} placements) of ${count(c.candidatesEnumerated)} of ${count(c.candidates)} candidates`;
  const symmetry = c.siteSymmetries > 1 ? `${c.siteSymmetries} site symmetries` : 'no site symmetry';
  return `Exhaustive: covered ${count(c.plansCovered)} plans (${count(c.placementsCovered)} placements), evaluated ${count(c.placementsEvaluated)} representative placements `
    + `(${count(c.plansEvaluated)} plans timed; ${symmetry}), pruned ${count(c.candidatesPrunedByBound + c.choicesPrunedByBound)} by bound `
    + `(${count(c.candidatesPrunedByBound)} of ${count(c.candidates)} candidates, ${count(c.choicesPrunedByBound)} (layout, microbatch) choices; ${count(c.partialPlacementsPruned)} partial placements cut)`;
}

/**
 * What a baseline's search proved about its space: every plan of it takes at least its bound, so
 * ours is at least bound / ours times as fast (docs/formulation.md §4, step 8).
 */
function provenText(b: PlanResult['baselines'][number]): string {
  if (b.speedupAtLeast === undefined || !b.bound) return '';
  return `; proven: no plan of this space under ${b.bound.lowerBoundS.toFixed(3)} s, ours at least ${b.speedupAtLeast.toFixed(2)}x as fast`;
}
