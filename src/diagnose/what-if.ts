/**
 * `plan --what-if`: re-plans the scenario with one change each (a site removed, a link removed,
 * a user edit such as `cluster.links[0].bandwidthGbps=*0.5`), calling the planner as a black box,
 * and says what each costs against the base plan; changes no plan fits come with the diagnosis.
 *
 * A change that leaves the sites in several groups no link joins (a cut link, a removed transit
 * site) means the job must run inside one group: each group is planned on its own and the fastest
 * group's plan is the answer; its bound is the smallest of the groups' bounds.
 */
import { canonicalJson } from '../model/canonical-json';
import type { PlanSpec } from '../model/plan-schema';
import { changedRoutes } from '../model/route-changes';
import { parseScenario, type Scenario } from '../model/scenario';
import { applySpecEdit, connectedSiteGroups, keepSites, removeLink, removeSite, type SpecEdit } from '../model/scenario-edits';
import type { ScenarioSpec } from '../model/scenario-schema';
import { ScenarioValidationError } from '../model/validation-error';
import { plan } from '../solve/plan';
import type { PlanResult } from '../solve/plan-result';
import { diagnoseReasons } from './conflict-reasons';

/** One change to re-plan: what it is in words, and the changed spec (its sites may no longer all be joined). */
export interface WhatIfChange {
  readonly change: string;
  readonly spec: ScenarioSpec;
}

export interface WhatIfOutcome {
  readonly change: string;
  /** As `plan` reports it, for the best group: optimal, feasible, infeasible (nothing fits anywhere), unknown. */
  readonly status: PlanResult['status'];
  readonly iterationTimeS: number | null;
  /** A proven lower bound on every plan of the changed scenario (null when not proven). */
  readonly lowerBoundS: number | null;
  /** The changed plan's time over the base plan's (above 1: slower). */
  readonly slowdown: number | null;
  readonly plan: PlanSpec | null;
  /** The sites the changed scenario's plans may use (one group when the change splits them). */
  readonly sites: readonly string[];
  /** With a change that splits the sites: the groups no link joins, each planned on its own. */
  readonly groups?: readonly (readonly string[])[];
  /** Pairs of sites the plan uses whose traffic takes another route than in the base scenario (see src/model/route-changes.ts): where there are none, the plan is timed the same in the base scenario. */
  readonly reroutes: readonly string[];
  /** Why no plan fits (the diagnosis of each group), or why none was found. */
  readonly reasons: readonly string[];
}

/** Every site removed and every link removed, one at a time. */
export function removalChanges(scenario: Scenario): WhatIfChange[] {
  const spec = scenario.spec;
  return [
    ...scenario.sites.map((site) => ({ change: `remove site ${site.name}`, spec: removeSite(spec, site.index) })),
    ...scenario.links.map((link) => ({ change: `remove link ${link.label}`, spec: removeLink(spec, link.index) })),
  ];
}

/** A user edit as a change; throws {@link ScenarioValidationError} (paths as the edit names them) when the edited scenario is invalid. */
export function editChange(scenario: Scenario, edit: SpecEdit): WhatIfChange {
  const edited = applySpecEdit(scenario.spec, edit);
  if ('error' in edited && typeof edited.error === 'string') throw new ScenarioValidationError([{ path: '', message: edited.error }]);
  const spec = edited as ScenarioSpec;
  parseScenario(spec);
  return { change: edit.text, spec };
}

export interface WhatIfOptions {
  /** Seconds for each re-plan (default 10). */
  readonly timeLimitS?: number;
  readonly gap?: number;
  /** Seconds for each re-solve of the diagnosis of a change no plan fits (default 3); 0 skips the diagnosis. */
  readonly diagnoseTimeLimitS?: number;
}

interface GroupAnswer {
  readonly sites: readonly string[];
  readonly scenario?: Scenario;
  readonly result?: PlanResult;
  readonly reasons: readonly string[];
}

/** Re-plans `base` with each change; `baseTimeS` is the base plan's iteration time (for the slowdown). */
export async function whatIf(base: Scenario, baseTimeS: number | undefined, changes: readonly WhatIfChange[], options: WhatIfOptions = {}): Promise<WhatIfOutcome[]> {
  // Changes that leave the same scenario (a cut link and a removed site can) are planned once.
  const cache = new Map<string, Promise<GroupAnswer>>();
  const answer = (spec: ScenarioSpec, sites: readonly string[]): Promise<GroupAnswer> => {
    const key = canonicalJson({ ...spec, name: '' });
    let found = cache.get(key);
    if (!found) { found = planGroup(spec, sites, options); cache.set(key, found); }
    return found;
  };
  const outcomes: WhatIfOutcome[] = [];
  for (const change of changes) {
    const groups = connectedSiteGroups(change.spec);
    const answers: GroupAnswer[] = [];
    for (const sites of groups) answers.push(await answer(groups.length > 1 ? keepSites(change.spec, sites, `(${sites.join(', ')})`) : change.spec, sites));
    outcomes.push(combine(base, baseTimeS, change.change, groups, answers, options.gap ?? 0.01));
  }
  return outcomes;
}

async function planGroup(spec: ScenarioSpec, sites: readonly string[], options: WhatIfOptions): Promise<GroupAnswer> {
  let scenario: Scenario;
  try {
    scenario = parseScenario(spec);
  } catch (error) {
    if (error instanceof ScenarioValidationError) return { sites, reasons: [error.message.split('\n').join('; ')] };
    throw error;
  }
  const result = await plan(scenario, { timeLimitS: options.timeLimitS ?? 10, gap: options.gap, baselines: false });
  if (result.plan || result.status !== 'infeasible' || options.diagnoseTimeLimitS === 0) return { sites, scenario, result, reasons: result.reasons };
  const diagnosis = await diagnoseReasons(scenario, options.diagnoseTimeLimitS ?? 3);
  return { sites, scenario, result, reasons: diagnosis.reasons };
}

function combine(base: Scenario, baseTimeS: number | undefined, change: string, groups: readonly (readonly string[])[], answers: readonly GroupAnswer[], gap: number): WhatIfOutcome {
  const split = groups.length > 1 ? { groups } : {};
  const timeOf = (a: GroupAnswer) => a.result?.evaluation?.predicted.iterationTimeS ?? Infinity;
  const best = [...answers].sort((a, b) => timeOf(a) - timeOf(b))[0];
  const named = (a: GroupAnswer, reason: string) => (groups.length > 1 ? `${a.sites.join(', ')}: ${reason}` : reason);
  const reasons = answers.filter((a) => !a.result?.plan).flatMap((a) => a.reasons.map((r) => named(a, r)));
  if (!best || !best.result?.plan || !best.result.evaluation || !best.scenario) {
    // No site left, or every part proven to hold no plan: decided.
    const decided = answers.every((a) => a.result === undefined || a.result.status === 'infeasible');
    return {
      change, status: decided ? 'infeasible' : 'unknown', iterationTimeS: null, lowerBoundS: null, slowdown: null, plan: null,
      sites: groups.flat(), ...split, reroutes: [], reasons: answers.length === 0 ? ['no site left'] : reasons,
    };
  }
  const timeS = timeOf(best);
  // Every plan of the changed scenario runs inside one group: the smallest group bound bounds them all.
  const proven = answers.every((a) => a.result === undefined || a.result.bound.proven);
  const lowerBoundS = Math.min(timeS, ...answers.map((a) => (a.result ? a.result.bound.lowerBoundS : Infinity)));
  const provenGap = (timeS - lowerBoundS) / timeS;
  return {
    change,
    status: proven && provenGap <= gap * (1 + 1e-9) ? 'optimal' : 'feasible',
    iterationTimeS: timeS,
    lowerBoundS: proven ? lowerBoundS : null,
    slowdown: baseTimeS === undefined ? null : timeS / baseTimeS,
    plan: best.result.plan,
    sites: best.sites,
    ...split,
    reroutes: changedRoutes(base, best.scenario, best.result.evaluation.predicted.sites.filter((u) => u.gpusUsed > 0).map((u) => u.site)),
    reasons,
  };
}
