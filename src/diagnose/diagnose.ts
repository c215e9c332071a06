/**
 * `diagnose`: why no plan fits and the smallest change that makes one fit, or, for a scenario
 * that has a plan, which requirements are tight and what relaxing each would buy
 * (docs/diagnosis.md).
 */
import type { Scenario } from '../model/scenario';
import type { ScenarioSpec } from '../model/scenario-schema';
import type { MipBackend } from '../solve/mip-backend';
import { HighsWorkerBackend } from '../solve/highs-worker-backend';
import { LpSolverBackend } from '../solve/lp-solver-backend';
import { findConflictSet } from './conflict-set';
import { FeasibilityOracle } from './feasibility-oracle';
import { applyRelaxation, mirroredRelaxation, sitesAreSymmetric, smallestRelaxations, type Relaxation } from './relaxations';
import { dropAll, scenarioRequirements, type ConstraintKind, type Requirement } from './requirements';
import { tightConstraints, type TightConstraint } from './sensitivity';

export interface Conflict {
  readonly constraint: ConstraintKind | 'model';
  /** Which conflicting set it belongs to (1-based): a plan fits only once every set has one member relaxed. */
  readonly set: number;
  readonly site?: string;
  readonly link?: string;
  readonly path?: string;
  readonly detail: string;
  /** Changes to this requirement alone that make a plan fit, each verified by a re-solve, smallest first. Empty when no change to it alone suffices. */
  readonly relaxations: readonly Relaxation[];
}

export interface Diagnosis {
  /** infeasible: no plan fits (conflicts say why); feasible: a plan fits (tight says what binds); unknown: re-solves ran out of time. */
  readonly status: 'infeasible' | 'feasible' | 'unknown';
  /** A minimal conflicting set of requirements, members ranked by their smallest relaxation. */
  readonly conflicts: readonly Conflict[];
  /** Independent minimal conflicting sets found (each needs one member relaxed). */
  readonly conflictSets?: number;
  /** With several sets: the smallest fix of each applied together, re-solved. */
  readonly combinedFix?: { readonly changes: readonly Relaxation[]; readonly fits: boolean; readonly iterationTimeS?: number };
  /** Whether every re-solve of the conflict search was decided (so no member can be dropped). */
  readonly minimal: boolean;
  readonly tight: readonly TightConstraint[];
  readonly iterationTimeS?: number;
  /** The planner's reasons for the original scenario, when no plan fits. */
  readonly reasons: readonly string[];
  readonly solver: { readonly reSolves: number; readonly cacheHits: number; readonly timeS: number };
}

export interface DiagnoseOptions {
  /** Seconds for each re-solve (default 3). */
  readonly reSolveTimeLimitS?: number;
  readonly backends?: readonly MipBackend[];
}

/** Conflicting sets looked for, one after another. */
const MAX_CONFLICT_SETS = 4;

/** Applies the smallest fix of every set together and re-solves: the fix that works on the scenario as given. */
async function verifyCombinedFix(spec: ScenarioSpec, scenario: Scenario, conflicts: readonly Conflict[], setCount: number, oracle: FeasibilityOracle) {
  const changes: Relaxation[] = [];
  for (let k = 1; k <= setCount; k++) {
    const best = conflicts.filter((c) => c.set === k && c.relaxations.length > 0).map((c) => c.relaxations[0]!).sort((a, b) => a.size - b.size)[0];
    if (!best) return { changes, fits: false };
    changes.push(best);
  }
  const answer = await oracle.check(changes.reduce((s, r) => applyRelaxation(s, scenario, r), spec));
  return { changes, fits: answer.feasibility === 'feasible', iterationTimeS: answer.evaluation?.predicted.iterationTimeS };
}

export async function diagnose(scenario: Scenario, options: DiagnoseOptions = {}): Promise<Diagnosis> {
  const started = Date.now();
  const reSolveTimeLimitS = options.reSolveTimeLimitS ?? 3;
  const backends = options.backends ?? [new HighsWorkerBackend(false), new HighsWorkerBackend(true), new LpSolverBackend()];
  const oracle = new FeasibilityOracle(backends, reSolveTimeLimitS);
  const spec = scenario.spec;
  const solverReport = () => ({ reSolves: oracle.calls, cacheHits: oracle.cacheHits, timeS: (Date.now() - started) / 1000 });
  try {
    // The reference for marginal values gets three re-solves' time: its gap limits what they can resolve.
    const base = await oracle.optimize(spec, [], 3 * reSolveTimeLimitS);
    if (base.feasibility === 'feasible') {
      const tight = await tightConstraints(spec, scenario, { plan: base.plan!, evaluation: base.evaluation!, lowerBoundS: base.lowerBoundS ?? 0 }, oracle, reSolveTimeLimitS);
      return { status: 'feasible', conflicts: [], minimal: true, tight, iterationTimeS: base.evaluation!.predicted.iterationTimeS, reasons: [], solver: solverReport() };
    }
    if (base.feasibility !== 'infeasible') {
      return { status: 'unknown', conflicts: [], minimal: false, tight: [], reasons: base.reasons, solver: solverReport() };
    }
    const requirements = scenarioRequirements(scenario);
    // One minimal conflicting set at a time; with that set dropped, look for the next, until a plan fits.
    const sets: Requirement[][] = [];
    let context = spec;
    let remaining = requirements;
    let minimal = true;
    for (let round = 0; round < MAX_CONFLICT_SETS; round++) {
      const conflictSet = await findConflictSet(context, remaining, oracle);
      if (conflictSet.unconditional) {
        if (sets.length === 0) {
          const conflict: Conflict = {
            constraint: 'model', set: 1,
            detail: 'no plan fits even with every requirement relaxed (16x GPUs and memory, default search space, batch rounded to a power of two)',
            relaxations: [],
          };
          return { status: 'infeasible', conflicts: [conflict], minimal: true, tight: [], reasons: base.reasons, solver: solverReport() };
        }
        break;
      }
      minimal &&= conflictSet.minimal;
      sets.push([...conflictSet.members]);
      context = dropAll(context, conflictSet.members);
      remaining = remaining.filter((r) => !conflictSet.members.includes(r));
      if ((await oracle.check(context)).feasibility !== 'infeasible') break;
    }
    const conflicts: Conflict[] = [];
    // A per-site member whose site is interchangeable with an earlier member's (identical sites,
    // symmetric links) gets that member's relaxations, mirrored: same problem, same answer.
    const siteIndex = (name: string | undefined) => scenario.sites.findIndex((s) => s.name === name);
    const mirrorOfEarlier = async (member: Requirement, earlier: readonly Conflict[]): Promise<Relaxation[] | undefined> => {
      if (member.constraint !== 'gpu-count' && member.constraint !== 'memory') return undefined;
      const to = siteIndex(member.site);
      for (const c of earlier) {
        if (c.constraint !== member.constraint || c.relaxations.length === 0) continue;
        const from = siteIndex(c.site);
        if (!sitesAreSymmetric(spec, from, to)) continue;
        const mirrored = c.relaxations.map((r) => mirroredRelaxation(scenario, r, from, to));
        if (mirrored.every((r) => r !== undefined)) return mirrored as Relaxation[];
      }
      return undefined;
    };
    for (const [k, members] of sets.entries()) {
      // A member's fixes are searched with the other sets' conflicts dropped, so that this set is the only one left.
      const others = sets.filter((_, j) => j !== k).flat();
      const setContext = dropAll(spec, others);
      for (const member of members) {
        const relaxations = (await mirrorOfEarlier(member, sets.length === 1 ? conflicts : [])
          ?? await smallestRelaxations(setContext, scenario, member, oracle)).sort((a, b) => a.size - b.size);
        conflicts.push({ constraint: member.constraint, set: k + 1, site: member.site, link: member.link, path: member.path, detail: member.detail, relaxations });
      }
    }
    const smallest = (c: Conflict) => (c.relaxations.length > 0 ? c.relaxations[0]!.size : Infinity);
    conflicts.sort((a, b) => a.set - b.set || smallest(a) - smallest(b));
    const combinedFix = sets.length > 1 ? await verifyCombinedFix(spec, scenario, conflicts, sets.length, oracle) : undefined;
    return { status: 'infeasible', conflicts, conflictSets: sets.length, combinedFix, minimal, tight: [], reasons: base.reasons, solver: solverReport() };
  } finally {
    if (!options.backends) await Promise.all(backends.map((b) => b.close()));
  }
}
