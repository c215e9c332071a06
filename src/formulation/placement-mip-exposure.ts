/**
 * The placement MIP's exposure rows (docs/formulation.md §3, F11 and F11b): the gradient sync not
 * hidden behind compute, E, for every stage and exposure form (F11), and each class of layouts
 * with equal compute windows with its own E_w and tail (F11b).
 */
import { CALIBRATION } from '../model/calibration-constants';
import type { ConfigCoefficients, LayoutCoefficients } from './coefficients';
import type { MipBuilder } from './mip';
import type { CrossSiteColumns } from './placement-mip-hosting';
import type { InSiteSyncColumns } from './placement-mip-in-site';
import { choicePipelineS, type Columns } from './placement-mip-replicas';
import { largestWindowsS, undominatedStages } from './stage-classes';

/** The exposure forms of exposedSyncS for given windows: E >= share x sync - window. */
export function exposureForms(c: ConfigCoefficients, windowB: number, windowF: number): { share: number; window: number }[] {
  const residual = CALIBRATION.dpOverlapResidual;
  // max(a, b) + max(c, d) is the largest of its four sums, so these forms are exposedSyncS exactly.
  return !c.overlapDp ? [{ share: 1, window: 0 }]
    : c.config.zero === 0 ? [{ share: 1, window: windowB }, { share: residual, window: 0 }]
      : [{ share: 1, window: windowB + windowF }, { share: (1 + residual) / 2, window: windowB },
        { share: (1 + residual) / 2, window: windowF }, { share: residual, window: 0 }];
}

/**
 * F11b: every replica group has its own tail (docs/cost-model.md): when layouts' compute windows
 * differ (heterogeneous GPUs), layouts with equal windows form a class w with its own exposure
 * E_w >= share x sync_j - window_{w,j}, and a used choice of the class needs T >= its pipeline + E_w.
 * With one class, F6 and F11 already say this.
 */
export function addWindowClassExposureRows(cols: Columns, c: ConfigCoefficients, classes: readonly number[][], intra: InSiteSyncColumns, spans: readonly number[] | undefined, cross: CrossSiteColumns | undefined): void {
  const { b, choices, T } = cols;
  const byWindows = new Map<string, LayoutCoefficients[]>();
  for (const layout of c.layouts) {
    const key = [...layout.backwardWindowS, ...layout.forwardWindowS].map((w) => w.toPrecision(12)).join(',');
    byWindows.set(key, [...(byWindows.get(key) ?? []), layout]);
  }
  if (byWindows.size < 2) return;
  let w = 0;
  for (const layouts of byWindows.values()) {
    const inClass = new Set(layouts);
    const members = choices.filter((ch) => inClass.has(ch.layout));
    if (members.length === 0) continue;
    const windows = layouts[0]!;
    const stageWindows = c.stages.map((_, k) => [windows.backwardWindowS[k]!, windows.forwardWindowS[k]!] as const);
    // The most its rows can require of E_w: the big-M of the T rows below.
    let upper = 0;
    const Ew = b.addColumn(`dp_exposed_s[windows${w}]`, 0, Infinity);
    classes.forEach((cls, ci) => {
      for (const j of undominatedStages(c, cls, (k) => stageWindows[k]!)) {
        for (const [f, form] of exposureForms(c, windows.backwardWindowS[j]!, windows.forwardWindowS[j]!).entries()) {
          upper = Math.max(upper, addStageExposureRows(b, `windows${w},stage${j},form${f}`, Ew, form.share, form.window, j, intra, spans?.[ci], cross));
        }
      }
    });
    b.setColumnUpper(Ew, upper);
    for (const ch of members) {
      // T >= pipeline + E_w when the choice is used; relaxed by the most E_w can be otherwise.
      b.addRow(`pipeline_time_own_tail[${ch.layout.layout.id},m${ch.microbatches}]`,
        [[T, 1], [Ew, -1], [ch.usedColumn, -(choicePipelineS(c, ch.layout, ch.microbatches) + upper)]], -upper, Infinity);
    }
    w++;
  }
}

/**
 * F11: E >= a sync - window, for the stage's in-site ring alone and, when its class spans sites,
 * with the cross-site phase too: E >= a (I_j + C + Λ) - window, relaxed by its largest value
 * (less the window) unless the class spans. A row whose largest right-hand side cannot pass 0 says
 * nothing that E >= 0 does not, and is left out. Returns the largest value the rows can require of E.
 */
function addStageExposureRows(b: MipBuilder, name: string, exposed: number, a: number, window: number, j: number, intra: InSiteSyncColumns, span: number | undefined, cross: CrossSiteColumns | undefined): number {
  const inSiteMostS = a * intra.maxS[j]! - window;
  if (inSiteMostS > 0) b.addRow(`dp_exposed[${name}]`, [[exposed, 1], [intra.columns[j]!, -a]], -window, Infinity);
  if (span === undefined || !cross) return Math.max(0, inSiteMostS);
  const bigM = a * (cross.maxS + cross.latencyMaxS + intra.maxS[j]!) - window;
  if (bigM <= 0) return Math.max(0, inSiteMostS);
  b.addRow(`dp_exposed_cross_site[${name}]`, [[exposed, 1], [intra.columns[j]!, -a], [cross.column, -a], [cross.latencyColumn, -a], [span, -bigM]], -window - bigM, Infinity);
  return Math.max(0, inSiteMostS, bigM);
}

/**
 * F11: E >= share x sync_j - window for every stage and exposure form in force, with
 * sync_j = I_j, plus C and the least round trip when the stage's class spans sites.
 */
export function addExposureRows(cols: Columns, c: ConfigCoefficients, classes: readonly number[][], intra: InSiteSyncColumns, spans: readonly number[] | undefined, cross: CrossSiteColumns | undefined): void {
  const { b, E } = cols;
  const windows = c.stages.map((_, j) => largestWindowsS(c, j));
  classes.forEach((cls, ci) => {
    for (const j of undominatedStages(c, cls, (k) => windows[k]!)) {
      const [windowB, windowF] = windows[j]!;
      exposureForms(c, windowB, windowF).forEach((form, f) => {
        addStageExposureRows(b, `stage${j},form${f}`, E, form.share, form.window, j, intra, spans?.[ci], cross);
      });
    }
  });
}
