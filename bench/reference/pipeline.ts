// Frozen copy of src/model/pipeline.ts at commit 4021979 (before the enumeration perf work): the reference
// that test/candidates-equivalence.test.ts and bench/enumeration-speed.ts compare the current code against. Do not edit.

/**
 * Pipeline schedule timing (docs/cost-model.md §3): with per-stage step times S_j and m
 * microbatches, an iteration's pipeline phase takes m * max S + bubble, where the bubble is
 * (sum S - max S) for GPipe and 1F1B, that divided by v for the interleaved schedule, and a
 * third of it for ZB-H1 (zero-bubble, Qi et al. 2024).
 */
import type { PlanSpec } from '../../src/model/plan-schema';

/** Fraction of the 1F1B fill/drain bubble a schedule keeps. */
export function bubbleFactor(plan: PlanSpec): number {
  switch (plan.schedule) {
    case 'gpipe':
    case '1f1b': return 1;
    case 'interleaved': return 1 / plan.virtualStages;
    case 'zb-h1': return 1 / 3;
  }
}

/** Sites crossed along one replica's chain of virtual stages: pairs (from, to) in chain order. */
export function chainCrossings(stageSite: readonly number[], virtualStages: number): { readonly from: number; readonly to: number }[] {
  const p = stageSite.length;
  const crossings: { from: number; to: number }[] = [];
  for (let q = 0; q + 1 < p * virtualStages; q++) {
    const from = stageSite[q % p]!;
    const to = stageSite[(q + 1) % p]!;
    if (from !== to) crossings.push({ from, to });
  }
  return crossings;
}

/**
 * Pipeline phase of one replica: m microbatches through stages with per-microbatch step times
 * `stepS` (seconds). Exact for equal stages under GPipe/1F1B ((m + p - 1) S); for unequal
 * stages the steady state runs at the slowest stage and fill/drain passes every other stage once.
 */
export function pipelinePhaseS(stepS: readonly number[], microbatches: number, plan: PlanSpec): { readonly steadyS: number; readonly bubbleS: number } {
  let sum = 0;
  let max = 0;
  for (const s of stepS) { sum += s; max = Math.max(max, s); }
  return { steadyS: microbatches * max, bubbleS: (sum - max) * bubbleFactor(plan) };
}

/**
 * Gradient sync left exposed after a stage's compute (docs/cost-model.md §3): all of it without
 * overlap; with ZeRO-0 what the backward window cannot hide; with ZeRO >= 1 the reduce-scatter
 * half against the backward window and the all-gather half against the forward window.
 * Non-decreasing in the sync time, so the planner's bounds can call it with lower bounds.
 */
export function exposedSyncS(plan: Pick<PlanSpec, 'zero'>, overlap: boolean, syncS: number, backwardWindowS: number, forwardWindowS: number): number {
  if (!overlap) return syncS;
  if (plan.zero === 0) return Math.max(0, syncS - backwardWindowS);
  return Math.max(0, syncS / 2 - backwardWindowS) + Math.max(0, syncS / 2 - forwardWindowS);
}
