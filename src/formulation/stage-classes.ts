/**
 * Stage classes and compute windows of a candidate (docs/formulation.md §3): the stages every
 * layout places alike (one hosting binary per class in F7-F9), which of a class's stages can bind
 * an exposure row (F11, F11b), the largest windows any group could hide a stage's sync behind, and
 * the cost model's exposed sync for the candidate. Shared by the placement MIP, the closed-form
 * bounds (§4, step 3) and the ring-pattern bound.
 */
import { exposedSyncS } from '../model/pipeline';
import type { ConfigCoefficients } from './coefficients';

/**
 * Stage j's largest backward and forward compute windows over the candidate's layouts: the most
 * sync any replica group could hide behind its compute, so bounds that use them hold for every group.
 */
export function largestWindowsS(c: ConfigCoefficients, j: number): [number, number] {
  let backwardS = -Infinity;
  let forwardS = -Infinity;
  for (const l of c.layouts) {
    backwardS = Math.max(backwardS, l.backwardWindowS[j]!);
    forwardS = Math.max(forwardS, l.forwardWindowS[j]!);
  }
  return [backwardS, forwardS];
}

/** The cost model's exposed sync for this candidate's ZeRO stage and overlap setting. */
export const exposureOf = (c: ConfigCoefficients, syncS: number, backwardWindowS: number, forwardWindowS: number): number =>
  exposedSyncS(c.config, c.overlapDp, syncS, backwardWindowS, forwardWindowS);

/**
 * The stages of a class whose exposure rows can bind. Stages of one class share their hosting,
 * spanning and thresholds, and a stage's ring bounds (F14, F14b) grow with its gradient bytes;
 * so stage k's rows E >= a sync_k - window_k are implied by stage j's when j has at least k's
 * bytes and at most its windows (every exposure form grows with the windows). Dropping implied
 * rows leaves the MIP's optimum unchanged and shrinks it (32 stages -> 1-2 per class); the
 * ring-pattern bound's exposures likewise.
 */
export function undominatedStages(c: ConfigCoefficients, cls: readonly number[], windowsOf: (stage: number) => readonly number[]): number[] {
  const bytes = (j: number) => c.crossGradientBytes[j]!;
  const dominates = (j: number, k: number) => bytes(j) >= bytes(k) && windowsOf(j).every((w, i) => w <= windowsOf(k)[i]!);
  return cls.filter((k, ki) => !cls.some((j, ji) => j !== k && dominates(j, k) && (!dominates(k, j) || ji < ki)));
}

/**
 * Stage classes: stages that every layout places on the same site. A class's stages are hosted
 * by the same sites in every placement, so their gradient rings take the same links.
 */
export function stageClasses(c: ConfigCoefficients): number[][] {
  // Classes in order of their first stage; a stage joins the first class whose first stage every
  // layout puts on the same site as it (compared in place: this runs for every refined candidate).
  const classes: number[][] = [];
  for (let j = 0; j < c.stages.length; j++) {
    const same = classes.find((cls) => c.layouts.every((l) => l.layout.stageSite[j] === l.layout.stageSite[cls[0]!]));
    if (same) same.push(j);
    else classes.push([j]);
  }
  return classes;
}
