/**
 * Per replica group of a laid-out plan: microbatches, stage steps, the round-trip floor (eq. 5.8),
 * the stage floor (eq. 5.9), the closed form (eq. 5.4) and the op-by-op span, and the group's end.
 */
import { groupPipelines } from '../src/model/critical-group';
import { forwardPartS } from '../src/model/pipeline';
import { pipelineSpanS } from '../src/model/pipeline-span';
import { roundTripFloorS, roundTripProfile } from '../src/model/pipeline-round-trip';
import { stageFloorS } from '../src/model/pipeline-stage-floor';
import type { PlanLayout } from '../src/model/placement';
import type { Scenario } from '../src/model/scenario';

export function groupFloors(scenario: Scenario, layout: PlanLayout): string[] {
  const { pipelines, ends, criticalGroup } = groupPipelines(scenario, layout);
  const plan = layout.plan;
  return pipelines.map((g, i) => {
    const forwardS = g.stepS.map((s, j) => forwardPartS(s, g.stageTimes[j]!));
    const profile = roundTripProfile(g.stepS, forwardS, plan, g.hops);
    const m = g.microbatches;
    const rt = roundTripFloorS(profile, m);
    const sf = profile ? stageFloorS(profile, g.stepS, g.hops.map((h) => h.stepS), m) : 0;
    const span = pipelineSpanS({ schedule: plan.schedule, virtualStages: plan.virtualStages, microbatches: m, forwardS, backwardS: g.stepS.map((s, j) => s - forwardS[j]!), hops: g.hops });
    const steps = [...new Set(g.stepS.map((s) => s.toFixed(4)))].join('/');
    return `${i === criticalGroup ? '*' : ' '}g${i} ${g.replicas}x [${g.stageSite.join('')}] m${m} steps ${steps} hops ${g.hops.map((h) => `${h.virtualStage}:${(h.stepS * 1e3).toFixed(1)}+${(h.latencyS * 1e3).toFixed(1)}ms`).join(',')} `
      + `| 5.8 ${rt.toFixed(4)} 5.9 ${sf.toFixed(4)} 5.4 ${g.closedFormS.toFixed(4)} span ${span.toFixed(4)} phase ${g.phaseS.toFixed(4)} end ${ends[i]!.endS.toFixed(4)}`;
  });
}
