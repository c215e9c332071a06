/** Rendering of `diagnose` results: human-readable text and the documented JSON shape. */
import type { Diagnosis } from '../diagnose/diagnose';

/** The JSON printed by `diagnose --json` (and under `diagnosis` by `plan --json` when no plan fits). */
export function diagnosisJson(d: Diagnosis) {
  return {
    status: d.status,
    conflicts: d.conflicts.map((c) => ({
      constraint: c.constraint, set: c.set, site: c.site, link: c.link, path: c.path, detail: c.detail,
      relaxations: c.relaxations.map((r) => ({ change: r.change, path: r.path, oldValue: r.oldValue, newValue: r.newValue, unit: r.unit, size: r.size, verifiedIterationTimeS: r.verifiedIterationTimeS })),
    })),
    conflictSets: d.conflictSets ?? (d.conflicts.length > 0 ? 1 : 0),
    combinedFix: d.combinedFix ?? null,
    minimal: d.minimal,
    tight: d.tight,
    iterationTimeS: d.iterationTimeS ?? null,
    reasons: d.reasons,
    solver: d.solver,
  };
}

const percent = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;

export function formatDiagnosis(name: string, d: Diagnosis): string {
  const lines: string[] = [];
  if (d.status === 'infeasible') {
    const sets = d.conflictSets ?? 1;
    const kind = d.minimal ? 'minimal: relaxing any one member is enough' : 'some re-solves timed out, so it may not be minimal';
    lines.push(sets > 1
      ? `Why no plan fits ${name}: ${sets} independent conflicts; relax one requirement of each (${kind} for its own conflict)`
      : `Why no plan fits ${name}: ${d.conflicts.length === 1 ? 'this requirement cannot be met' : `these ${d.conflicts.length} requirements conflict`} (${kind})`);
    for (let k = 1; k <= sets; k++) {
      if (sets > 1) lines.push(`  Conflict ${k}:`);
      d.conflicts.filter((c) => c.set === k).forEach((c, i) => {
        lines.push(`  ${i + 1}. [${c.constraint}] ${c.detail}`);
        if (c.relaxations.length === 0) lines.push('       no change to this requirement alone makes a plan fit');
        for (const r of c.relaxations) lines.push(`       fix: ${r.change}  (verified: a plan then takes ${r.verifiedIterationTimeS.toFixed(3)} s)`);
      });
    }
    if (d.combinedFix) {
      lines.push(d.combinedFix.fits
        ? `  Together: ${d.combinedFix.changes.map((r) => r.change).join('; and ')} (verified: a plan then takes ${d.combinedFix.iterationTimeS!.toFixed(3)} s)`
        : '  The smallest fixes of each conflict together do not make a plan fit; combine larger ones.');
    }
  } else if (d.status === 'feasible') {
    lines.push(`${name} has a plan (${d.iterationTimeS!.toFixed(3)} s per iteration). What binds it, and what 10% more would buy:`);
    for (const t of d.tight) {
      const marginal = t.marginal
        ? `  ${t.marginal.change} -> ${percent(t.marginal.relativeChange)} iteration time${t.marginal.withinGap ? ' (within the planner\'s gap: not resolved)' : ''}`
        : '';
      lines.push(`  ${t.tight ? 'tight ' : '      '}[${t.constraint}] ${t.detail}${marginal}`);
    }
  } else {
    lines.push(`Could not decide whether any plan fits ${name} within the re-solve time limit: raise --time-limit.`);
    for (const reason of d.reasons) lines.push(`  - ${reason}`);
  }
  lines.push(`Diagnosis: ${d.solver.reSolves} re-solves (${d.solver.cacheHits} from cache), ${d.solver.timeS.toFixed(2)} s`);
  return lines.join('\n');
}
