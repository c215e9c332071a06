/**
 * Why no plan fits, as a list of items the report renders: from the diagnosis (one item per
 * member of a minimal conflicting set, with its verified smallest fixes), or, when no diagnosis
 * was run, from `plan`'s reasons with generic guidance.
 */
import type { Diagnosis } from '../diagnose/diagnose';

export interface DiagnosisItem {
  /** The constraint that nothing in the search space satisfies, e.g. "GPU memory". */
  readonly constraint: string;
  readonly detail: string;
  /** Changes to the scenario that would relax it, most direct first. */
  readonly relaxations: readonly string[];
}

/** One item per reason string from `plan`, classified by the constraint it names. */
export function diagnosisFromReasons(reasons: readonly string[]): DiagnosisItem[] {
  return reasons.map((reason) => {
    if (/GiB|memory/i.test(reason)) {
      return {
        constraint: 'GPU memory',
        detail: reason,
        relaxations: [
          'more GPUs (more pipeline stages and replicas to shard weights, gradients and optimizer state over)',
          'GPUs with more memory',
          'allow full recomputation, ZeRO-3 and larger tensor/pipeline degrees in the scenario\'s search section',
        ],
      };
    }
    if (/time limit/i.test(reason)) {
      return { constraint: 'search time', detail: reason, relaxations: ['raise --time-limit'] };
    }
    if (/placement|batch/i.test(reason)) {
      return {
        constraint: 'GPUs and batch',
        detail: reason,
        relaxations: ['a global batch divisible by more data-parallel degrees', 'allow idle GPUs (search.allowIdleGpus)'],
      };
    }
    return { constraint: 'search space', detail: reason, relaxations: ['widen the degrees in the scenario\'s search section'] };
  });
}

/** One item per conflicting requirement, its fixes verified by re-solves (src/diagnose). */
export function diagnosisItems(diagnosis: Diagnosis): DiagnosisItem[] {
  const sets = diagnosis.conflictSets ?? 1;
  return diagnosis.conflicts.map((c) => ({
    constraint: `${c.constraint}${c.site ? ` at ${c.site}` : c.link ? ` on ${c.link}` : ''}${sets > 1 ? ` (conflict ${c.set} of ${sets})` : ''}`,
    detail: c.detail,
    relaxations: c.relaxations.length > 0
      ? c.relaxations.map((r) => `${r.change} (verified: a plan then takes ${r.verifiedIterationTimeS.toFixed(3)} s)`)
      : ['no change to this requirement alone makes a plan fit'],
  }));
}
