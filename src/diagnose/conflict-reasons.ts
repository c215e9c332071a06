/** A diagnosis of "no plan fits" as short reasons, one line each, for callers that re-plan changed scenarios. */
import type { Scenario } from '../model/scenario';
import { diagnose, type Diagnosis } from './diagnose';

/** What each kind of conflicting requirement means for a planner, in words. */
const KIND_WORDS: Readonly<Record<string, string>> = {
  memory: 'memory',
  'gpu-count': 'GPU count',
  'batch-divisibility': 'the batch cannot be shared further',
  'search-space': 'the search space',
  'link-capacity': 'a link',
  'iteration-time': 'the required iteration time',
  model: 'the model',
};

/** "memory: lab's GPUs (H100-SXM) have 80 GiB each (fix: ...)" per conflicting requirement; the planner's reasons when the diagnosis found no conflict. */
export function conflictReasons(diagnosis: Diagnosis): string[] {
  if (diagnosis.status !== 'infeasible' || diagnosis.conflicts.length === 0) {
    return diagnosis.reasons.length > 0 ? [...diagnosis.reasons] : [`diagnosis ${diagnosis.status === 'unknown' ? 'undecided within its time limit' : 'found a plan on re-solving'}`];
  }
  return diagnosis.conflicts.map((c) => {
    const fix = c.relaxations[0];
    return `${KIND_WORDS[c.constraint] ?? c.constraint}: ${c.detail}${fix ? ` (smallest fix: ${fix.change})` : ''}`;
  });
}

/** The diagnosis of a scenario no plan fits, as reasons (see {@link conflictReasons}), with the kinds of the conflicting requirements. */
export async function diagnoseReasons(scenario: Scenario, reSolveTimeLimitS: number): Promise<{ readonly reasons: string[]; readonly kinds: string[] }> {
  const diagnosis = await diagnose(scenario, { reSolveTimeLimitS });
  return { reasons: conflictReasons(diagnosis), kinds: [...new Set(diagnosis.conflicts.map((c) => KIND_WORDS[c.constraint] ?? c.constraint))] };
}
