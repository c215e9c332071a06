/**
 * Independent checks of solver output against the cost model alone (docs/formulation.md §6).
 * A failure here means the formulation or a solver is wrong: it is an internal error, never
 * a quiet fallback.
 */
import type { PlacementMip } from '../formulation/placement-mip';
import { evaluate, type Evaluation } from '../model/evaluate';
import type { PlanSpec } from '../model/plan-schema';
import type { Scenario } from '../model/scenario';

export class InternalCheckError extends Error {
  constructor(message: string) {
    super(`independent check failed: ${message}`);
    this.name = 'InternalCheckError';
  }
}

const RELATIVE_TOLERANCE = 1e-6;

/**
 * A plan decoded from a MIP solution must fit, carry the link loads the MIP assumed, and take
 * no less time than the MIP's proven bound (the MIP is a relaxation of the cost model).
 */
export function checkMipPlan(scenario: Scenario, placement: PlacementMip, values: readonly number[], dualBoundS: number, evaluation: Evaluation, sendBytes: number): void {
  // The MIP bounds the time from below only, so a MIP plan may miss training.maxIterationTimeS; it must fit the resources.
  if (!evaluation.fitsResources) throw new InternalCheckError(`a MIP-feasible plan does not fit: ${evaluation.violations.join('; ')}`);
  // The MIP's dual bound holds for every placement of this candidate, this one included.
  const time = evaluation.predicted.iterationTimeS;
  if (time < dualBoundS * (1 - RELATIVE_TOLERANCE) - 1e-9) {
    throw new InternalCheckError(`cost model time ${time} s is below the MIP's proven bound ${dualBoundS} s: the bound would be invalid`);
  }
  for (const [link] of placement.linkStepColumns) {
    // Bytes the MIP's (rounded) replica counts put on the link, per its F5 coefficients.
    let mipBytes = 0;
    for (const choice of placement.choices) {
      mipBytes += Math.round(values[choice.replicasColumn]!) * (choice.layout.crossingsPerLink.get(link) ?? 0) * sendBytes;
    }
    const modelBytes = evaluation.predicted.links[link]!.pipelineBytesPerMicrobatch;
    if (Math.abs(mipBytes - modelBytes) > RELATIVE_TOLERANCE * Math.max(sendBytes, modelBytes)) {
      throw new InternalCheckError(`link ${scenario.links[link]!.label}: MIP carries ${mipBytes} B per microbatch, the cost model ${modelBytes} B`);
    }
  }
}

/** Re-evaluates a plan from its JSON text alone and confirms the figures about to be printed. */
export function recheckPlan(scenario: Scenario, plan: PlanSpec, printed: Evaluation): Evaluation {
  const fresh = evaluate(scenario, JSON.parse(JSON.stringify(plan)));
  if (!fresh.fits) throw new InternalCheckError(`the chosen plan does not fit: ${fresh.violations.join('; ')}`);
  const a = fresh.predicted.iterationTimeS;
  const b = printed.predicted.iterationTimeS;
  if (Math.abs(a - b) > RELATIVE_TOLERANCE * b) throw new InternalCheckError(`re-evaluated time ${a} s differs from ${b} s`);
  fresh.predicted.links.forEach((link, i) => {
    const other = printed.predicted.links[i]!;
    if (Math.abs(link.bytesPerIteration - other.bytesPerIteration) > RELATIVE_TOLERANCE * Math.max(1, other.bytesPerIteration)) {
      throw new InternalCheckError(`link ${link.link}: re-evaluated load differs`);
    }
  });
  return fresh;
}
