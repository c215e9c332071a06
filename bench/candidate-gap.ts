/**
 * One candidate of a planner-scaling row, bound by bound: its quick bound and span floor, its
 * outer, capacity, forced-spanning, layout capacity and ring-pattern bounds, its placement MIP
 * solved tightly (dual bound, objective), and the MIP placement's time on the closed-form timing
 * (the floors) and op by op (the span), with each replica group's floors (group-floors.ts).
 * Run: npm run build && node dist/bench/candidate-gap.js <row> "<config as boundHolder prints it>" <dp> [MIP seconds, default 20]
 */
import { capacityLowerBound } from '../src/formulation/capacity-bound';
import { outerLowerBound, forcedSpanningLowerBound } from '../src/formulation/closed-form-bounds';
import { planOfGroups } from '../src/formulation/coefficients';
import { layoutCapacityLowerBound } from '../src/formulation/layout-capacity-bound';
import { buildPlacementMip, provenIterationBoundS } from '../src/formulation/placement-mip';
import { ringPatternSearch } from '../src/formulation/ring-pattern-bound';
import { FULL_SPACE } from '../src/formulation/search-space';
import { evaluateLayout } from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import { enumerateCandidates } from '../src/solve/candidates';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import { groupFloors } from './group-floors';
import { ROWS, scenarioFor } from './plan-scaling-scenarios';

async function main(): Promise<void> {
  const [rowArg, configArg, dpArg, secondsArg] = process.argv.slice(2);
  const scenario = scenarioFor(ROWS[Number(rowArg)]!);
  const siteGpus = scenario.sites.map((s) => s.gpus);
  const label = (c: { tp: number; cp: number; ep: number; pp: number; microBatchSeqs: number; schedule: string; virtualStages: number; recompute: string; zero: number }) =>
    `tp ${c.tp} cp ${c.cp} ep ${c.ep} pp ${c.pp} mbs ${c.microBatchSeqs} ${c.schedule}${c.virtualStages > 1 ? ` v ${c.virtualStages}` : ''} recompute ${c.recompute} zero ${c.zero}`;
  const candidates = enumerateCandidates(scenario, FULL_SPACE);
  const index = candidates.findIndex((c) => label(c.config) === configArg && c.dp === Number(dpArg));
  if (index < 0) throw new Error('no such candidate');
  const candidate = candidates[index]!;
  const c = candidate.coefficients();
  const pipelineS = Math.max(candidate.quickBoundS, candidate.pipelineFloorS());
  const out: Record<string, unknown> = {
    rank: index, quick: candidate.quickBoundS, spanFloor: candidate.pipelineFloorS(),
    outer: outerLowerBound(c, pipelineS), capacity: capacityLowerBound(c, siteGpus),
    forcedSpanning: forcedSpanningLowerBound(c, siteGpus, pipelineS), layoutCapacity: layoutCapacityLowerBound(c, siteGpus, -Infinity),
    ringPattern: ringPatternSearch(scenario, c, siteGpus, pipelineS).boundS,
  };
  let groups: string[] = [];
  const placement = buildPlacementMip(scenario, c, 0, Infinity)!;
  const backend = new HighsWorkerBackend(false);
  try {
    const solution = await backend.solve(placement.mip, { timeLimitS: Number(secondsArg ?? 20), relativeGap: 1e-4 });
    Object.assign(out, { mipStatus: solution.status, mipDual: provenIterationBoundS(placement, solution.dualBound), mipObjective: solution.objective });
    if (solution.values) {
      const placed = placement.choices.map((ch) => ({ layout: ch.layout, microbatches: ch.microbatches, replicas: Math.round(solution.values![ch.replicasColumn]!) })).filter((g) => g.replicas > 0);
      const plan = planOfGroups(c, scenario, placed);
      const laid = layOutPlan(scenario, plan);
      const floors = evaluateLayout(scenario, laid, 'closed-form').predicted;
      const span = evaluateLayout(scenario, laid).predicted;
      Object.assign(out, { mipPlanFloorsS: floors.iterationTimeS, mipPlanSpanS: span.iterationTimeS, mipPlanBreakdown: span.breakdown });
      groups = groupFloors(scenario, laid);
    }
  } finally {
    await backend.close();
  }
  console.log(JSON.stringify(out, (_, v: unknown) => (typeof v === 'number' ? Number(v.toFixed(4)) : v)));
  for (const line of groups) console.log(line);
}

void main();
