/**
 * Why no plan fits, as a generic list of items the report renders. Filled from `plan`'s
 * `reasons` for now; a richer diagnosis (one item per violated constraint, each with the
 * relaxations that would make a plan fit) can supply the same shape.
 */
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
