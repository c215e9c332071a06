/**
 * Why the best plan leaves GPUs idle: re-plans with `search.allowIdleGpus: false` (only plans
 * that use every GPU of every site) and reads the reason off what that returns: no plan fits
 * (the diagnosis says which requirement: the batch cannot be shared further, memory, a link, ...),
 * or the best plan using them is slower (with its time, and whether that is proven by its bound).
 */
import type { Evaluation } from '../model/evaluate';
import type { PlanSpec } from '../model/plan-schema';
import { parseScenario, type Scenario } from '../model/scenario';
import { forbidIdleGpus } from '../model/scenario-edits';
import { plan } from '../solve/plan';
import { diagnoseReasons } from './conflict-reasons';

export interface IdleGpus {
  readonly site: string;
  readonly idle: number;
  /** GPUs at the site. */
  readonly gpus: number;
  /** Why, in words (see {@link IdleGpuExplanation.kind}). */
  readonly reason: string;
  /** Iteration time of the best plan found that uses every GPU. */
  readonly planUsingThemS?: number;
}

export interface IdleGpuExplanation {
  /**
   * slower: a plan using every GPU was found and is slower; no-plan: none fits (reasons from the
   * diagnosis); not-found: none found within the time limit; not-slower: the plan using them is
   * as fast (within the search's gap, the base search kept the other).
   */
  readonly kind: 'slower' | 'no-plan' | 'not-found' | 'not-slower';
  readonly sites: readonly IdleGpus[];
  /** The best plan found that uses every GPU, and its proven lower bound (null when not proven). */
  readonly planUsingThem?: PlanSpec;
  readonly evaluationUsingThem?: Evaluation;
  readonly lowerBoundUsingThemS?: number | null;
  /** Proven: every plan that uses every GPU takes at least as long as the base plan. */
  readonly proven: boolean;
  /** Why no plan using every GPU fits (the diagnosis), when none does. */
  readonly reasons: readonly string[];
  /** The breakdown term that grows most from the base plan to the plan using every GPU: "gradient sync in-site +0.445 s". */
  readonly largestIncrease?: string;
}

export interface IdleGpuOptions {
  /** Seconds for the re-plan (default 10). */
  readonly timeLimitS?: number;
  readonly gap?: number;
  /** Seconds for each re-solve of the diagnosis when nothing uses every GPU (default 3). */
  readonly diagnoseTimeLimitS?: number;
}

/** Undefined when `evaluation` leaves no GPU idle. */
export async function explainIdleGpus(scenario: Scenario, evaluation: Evaluation, options: IdleGpuOptions = {}): Promise<IdleGpuExplanation | undefined> {
  const idleSites = evaluation.predicted.sites.filter((s) => s.gpusIdle > 0);
  if (idleSites.length === 0) return undefined;
  const baseS = evaluation.predicted.iterationTimeS;
  const forced = parseScenario(forbidIdleGpus(scenario.spec));
  const result = await plan(forced, { timeLimitS: options.timeLimitS ?? 10, gap: options.gap, baselines: false });
  const each = (reason: string, planUsingThemS?: number): IdleGpus[] =>
    idleSites.map((s) => ({ site: s.site, idle: s.gpusIdle, gpus: s.gpusUsed + s.gpusIdle, reason, ...(planUsingThemS === undefined ? {} : { planUsingThemS }) }));
  if (!result.plan || !result.evaluation) {
    if (result.status !== 'infeasible') {
      const reason = `undecided: no plan using every GPU found within ${options.timeLimitS ?? 10} s`;
      return { kind: 'not-found', sites: each(reason), proven: false, reasons: result.reasons };
    }
    const { reasons, kinds } = await diagnoseReasons(forced, options.diagnoseTimeLimitS ?? 3);
    return { kind: 'no-plan', sites: each(`no plan uses every GPU: ${kinds.length > 0 ? kinds.join(', ') : reasons.join('; ')}`), proven: true, reasons };
  }
  const usingS = result.evaluation.predicted.iterationTimeS;
  const lowerBoundUsingThemS = result.bound.proven ? result.bound.lowerBoundS : null;
  const found = { planUsingThem: result.plan, evaluationUsingThem: result.evaluation, lowerBoundUsingThemS, reasons: [], largestIncrease: largestIncrease(evaluation, result.evaluation) };
  if (usingS <= baseS) {
    const reason = `a plan using them is not slower (${usingS.toFixed(3)} s vs ${baseS.toFixed(3)} s): the base search stopped within its gap`;
    return { kind: 'not-slower', sites: each(reason, usingS), proven: false, ...found };
  }
  const proven = lowerBoundUsingThemS !== null && lowerBoundUsingThemS >= baseS;
  const why = proven ? `proven: every plan using them takes at least ${lowerBoundUsingThemS!.toFixed(3)} s`
    : lowerBoundUsingThemS === null ? 'best found; no proven bound on plans using them, so not proven'
      : `best found; plans using them take at least ${lowerBoundUsingThemS.toFixed(3)} s, so not proven`;
  return { kind: 'slower', sites: each(`using them is slower: ${usingS.toFixed(3)} s vs ${baseS.toFixed(3)} s (${why})`, usingS), proven, ...found };
}

/** The breakdown term with the largest growth from `from` to `to`, in words; undefined when none grows. */
function largestIncrease(from: Evaluation, to: Evaluation): string | undefined {
  const a = from.predicted.breakdown as unknown as Record<string, number>;
  const b = to.predicted.breakdown as unknown as Record<string, number>;
  let best: { key: string; delta: number } | undefined;
  for (const key of Object.keys(b)) {
    if (typeof b[key] !== 'number' || typeof a[key] !== 'number') continue;
    const delta = b[key]! - a[key]!;
    if (delta > 0 && (!best || delta > best.delta)) best = { key, delta };
  }
  return best && `${BREAKDOWN_WORDS[best.key] ?? best.key} +${best.delta.toFixed(3)} s`;
}

/** Breakdown terms in words (as the plan output names them). */
const BREAKDOWN_WORDS: Readonly<Record<string, string>> = {
  computeS: 'compute', tpExposedS: 'tensor-parallel comm', cpExposedS: 'context-parallel comm', epExposedS: 'expert-parallel all-to-all',
  ppExposedS: 'pipeline sends in-site', dpExposedS: 'gradient sync in-site', bubbleS: 'pipeline bubble', crossSiteS: 'cross-site links', optimizerS: 'optimizer step',
};
