/**
 * A minimal conflicting set of requirements by the deletion filter (docs/diagnosis.md §3):
 * start from every requirement; try dropping each in turn on top of those already dropped; if
 * the scenario is still infeasible the requirement is not needed for the conflict and stays
 * dropped, otherwise it belongs to the conflict and is kept (requirements of one kind are first
 * tried as a group, which only saves re-solves: a member is still kept only after its own test). Dropping only widens the plan space,
 * so at the end the kept set is infeasible on its own (everything else dropped) and dropping any
 * one member of it makes a plan fit: it is irreducible.
 */
import type { ScenarioSpec } from '../model/scenario-schema';
import type { FeasibilityOracle } from './feasibility-oracle';
import { dropAll, type Requirement } from './requirements';

export interface ConflictSet {
  readonly members: readonly Requirement[];
  /** Dropped requirements: not needed for the conflict. */
  readonly dropped: readonly Requirement[];
  /** False when some re-solve could not decide (time limit): the set conflicts but may not be minimal. */
  readonly minimal: boolean;
  /** True when the scenario stays infeasible with every requirement dropped (the model itself cannot fit any plan space). */
  readonly unconditional: boolean;
}

export async function findConflictSet(spec: ScenarioSpec, requirements: readonly Requirement[], oracle: FeasibilityOracle): Promise<ConflictSet> {
  const everythingDropped = await oracle.check(dropAll(spec, requirements));
  if (everythingDropped.feasibility === 'infeasible') {
    return { members: [], dropped: requirements, minimal: true, unconditional: true };
  }
  const dropped: Requirement[] = [];
  const members: Requirement[] = [];
  let minimal = everythingDropped.feasibility === 'feasible';
  // Requirements of one kind (all links, all sites' memory, ...) are first tried as a group: when
  // dropping the whole group keeps the conflict, one re-solve drops them all; otherwise each is
  // tried on its own, as the plain deletion filter does.
  for (const group of groupsByKind(requirements)) {
    if (group.length > 1 && (await oracle.check(dropAll(spec, [...dropped, ...group]))).feasibility === 'infeasible') {
      dropped.push(...group);
      continue;
    }
    for (const requirement of group) {
      const answer = await oracle.check(dropAll(spec, [...dropped, requirement]));
      if (answer.feasibility === 'infeasible') {
        dropped.push(requirement);
      } else {
        if (answer.feasibility !== 'feasible') minimal = false;
        members.push(requirement);
      }
    }
  }
  return { members, dropped, minimal, unconditional: false };
}

/** Consecutive requirements of the same constraint kind, in order. */
function groupsByKind(requirements: readonly Requirement[]): Requirement[][] {
  const groups: Requirement[][] = [];
  for (const r of requirements) {
    const last = groups[groups.length - 1];
    if (last && last[0]!.constraint === r.constraint) last.push(r);
    else groups.push([r]);
  }
  return groups;
}
