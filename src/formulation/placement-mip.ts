/**
 * The placement MIP for one outer configuration and data-parallel degree
 * (docs/formulation.md §3): how many replicas run each layout with each microbatch count, so
 * that the iteration time bound T is least. One function per constraint family, named for what
 * it bounds; each cites its equation (F1-F11) in docs/formulation.md.
 */
import { roundTripFloorOf, type ConfigCoefficients, type LayoutCoefficients } from './coefficients';
import { largestWindowsS, stageClasses, undominatedStages } from './stage-classes';
import { MipBuilder, type Mip } from './mip';
import type { Scenario } from '../model/scenario';
import { routeLatencyS } from '../model/cross-site';

/** One (layout, microbatch count) choice and its MIP columns. */
export interface PlacementChoice {
  readonly layout: LayoutCoefficients;
  readonly microbatches: number;
  /** Replicas running this layout with this many microbatches (integer). */
  readonly replicasColumn: number;
  /** 1 if any replica does (binary). */
  readonly usedColumn: number;
}

export interface PlacementMip {
  readonly mip: Mip;
  readonly choices: readonly PlacementChoice[];
  readonly iterationColumn: number;
  /** Pipeline link step column per link index (absent when no split layout uses the link). */
  readonly linkStepColumns: ReadonlyMap<number, number>;
  /** Most the tie-break costs can add to the objective: subtract it from a dual bound to bound T. */
  readonly tieBreakAllowanceS: number;
}

/** Tie-break cost per used choice, as a share of the lower bound. */
const TIE_BREAK_SHARE = 1e-6;
/**
 * HiGHS's tolerances are absolute (1e-6 for MIP feasibility and the absolute gap, 1e-7 for LP
 * feasibility), so a dual bound may sit slightly above the exact optimum: measured 1.6e-9 s over
 * on a random scenario whose iterations take 1.5 ms (test/bounds-random-scenarios.test.ts).
 */
const SOLVER_TOLERANCE_S = 1e-6;

/**
 * The lower bound on T (every placement the MIP describes) that a dual bound of its objective
 * proves: less the tie-break costs, and less the solver's tolerance (relative past 1 s).
 */
export function provenIterationBoundS(placement: PlacementMip, dualBoundS: number): number {
  return dualBoundS - placement.tieBreakAllowanceS - SOLVER_TOLERANCE_S * Math.max(1, Math.abs(dualBoundS));
}

/**
 * The objective at or above which no placement of this MIP can beat an incumbent plan of
 * `incumbentS`: a placement's T is at most its cost-model time (the MIP is a relaxation), and its
 * objective adds at most the tie-break allowance; twice the solver's tolerance on top. So when a
 * solver given this cutoff finds nothing, every placement of the MIP takes at least `incumbentS`.
 */
export function incumbentObjectiveCutoff(placement: PlacementMip, incumbentS: number): number {
  return incumbentS + placement.tieBreakAllowanceS + 2 * SOLVER_TOLERANCE_S * Math.max(1, Math.abs(incumbentS));
}

interface Columns {
  readonly b: MipBuilder;
  readonly choices: PlacementChoice[];
  readonly T: number;
  readonly E: number;
  readonly linkStep: Map<number, number>;
}

/**
 * Builds the MIP, or returns undefined when no (layout, microbatch) choice fits at all (or, with
 * `onlyFasterThanS`, none can take less than it). With `onlyFasterThanS`, choices whose pipeline
 * alone takes that long are left out (F0): the MIP then describes only placements faster than it,
 * so its answers bound this candidate by min(dual bound, onlyFasterThanS).
 */
export function buildPlacementMip(scenario: Scenario, c: ConfigCoefficients, lowerBoundS = 0, onlyFasterThanS = Infinity): PlacementMip | undefined {
  const b = new MipBuilder();
  // A tiny cost per used (layout, microbatch) choice prefers plans with fewer replica groups.
  const tieBreakS = TIE_BREAK_SHARE * Math.max(lowerBoundS, 1e-3);
  const choices = addReplicaColumns(b, scenario, c, tieBreakS, onlyFasterThanS);
  if (choices.length === 0) return undefined;
  const upperT = 1e7;
  // T starts at a closed-form lower bound (valid for every placement), which the LP relaxation alone would not see.
  const T = b.addColumn('iteration_time_s', lowerBoundS, upperT, { cost: 1 });
  const E = b.addColumn('dp_exposed_s', 0, upperT);
  const cols: Columns = { b, choices, T, E, linkStep: new Map() };
  addReplicaCountRow(cols, c);
  addBatchCoverageRow(cols, c);
  addSiteGpuCapacityRows(cols, scenario);
  addUsageRows(cols);
  addLinkStepRows(cols, c);
  addPipelineTimeRows(cols, c);
  addGradientSyncRows(cols, scenario, c, lowerBoundS);
  return { mip: b.build(), choices, iterationColumn: T, linkStepColumns: cols.linkStep, tieBreakAllowanceS: tieBreakS * choices.length };
}

/** A choice's time that depends on neither the link step nor E: bubble (with ZB-H1's short-pipeline gaps when k < pp), fill/drain latencies, optimizer. */
const closedFormFixedS = (c: ConfigCoefficients, layout: LayoutCoefficients, k: number): number =>
  layout.bubbleS + Math.max(0, c.config.pp - k) * layout.shortPipelineGapS + 2 * layout.crossingLatencyS + c.optimizerS;

/** The same, raised to the round-trip floor of k microbatches (eq. 5.8, at zero link step) where that is more. */
const choiceFixedS = (c: ConfigCoefficients, layout: LayoutCoefficients, k: number): number =>
  Math.max(closedFormFixedS(c, layout, k), roundTripFloorOf(layout, k) - k * layout.maxStepS + c.optimizerS);

/** The least time any replica running this choice takes: its pipeline at the slowest stage, bubble, fill latency and optimizer (F6 without E). */
export const choicePipelineS = (c: ConfigCoefficients, layout: LayoutCoefficients, k: number): number =>
  k * layout.maxStepS + choiceFixedS(c, layout, k);

/** F0: replica columns per (layout, microbatch count), leaving out choices that cannot beat `onlyFasterThanS`. */
function addReplicaColumns(b: MipBuilder, scenario: Scenario, c: ConfigCoefficients, tieBreakS: number, onlyFasterThanS: number): PlacementChoice[] {
  const choices: PlacementChoice[] = [];
  for (const layout of c.layouts) {
    let capacity = c.dp;
    for (const [site, gpus] of layout.gpusPerSite) capacity = Math.min(capacity, Math.floor(scenario.sites[site]!.gpus / gpus));
    for (const k of layout.fittingMicrobatches) {
      if (choicePipelineS(c, layout, k) >= onlyFasterThanS) continue;
      // Every other replica runs at least one microbatch.
      const upper = Math.min(capacity, Math.floor(c.totalMicrobatches / k), k <= c.totalMicrobatches - (c.dp - 1) ? c.dp : 0);
      if (upper < 1) continue;
      const replicasColumn = b.addColumn(`replicas[${layout.layout.id},m${k}]`, 0, upper, { integer: true });
      const usedColumn = b.addColumn(`used[${layout.layout.id},m${k}]`, 0, 1, { integer: true, cost: tieBreakS });
      choices.push({ layout, microbatches: k, replicasColumn, usedColumn });
    }
  }
  return choices;
}

/** F1: the replicas add up to dp. */
function addReplicaCountRow({ b, choices }: Columns, c: ConfigCoefficients): void {
  b.addRow('replicas_total', choices.map((ch) => [ch.replicasColumn, 1] as const), c.dp, c.dp);
}

/** F2: replicas x microbatches x microbatch size cover the global batch exactly. */
function addBatchCoverageRow({ b, choices }: Columns, c: ConfigCoefficients): void {
  b.addRow('batch_coverage', choices.map((ch) => [ch.replicasColumn, ch.microbatches] as const), c.totalMicrobatches, c.totalMicrobatches);
}

/** F3: GPUs used at each site fit the site. */
function addSiteGpuCapacityRows({ b, choices }: Columns, scenario: Scenario): void {
  for (const site of scenario.sites) {
    const terms = choices.filter((ch) => ch.layout.gpusPerSite.has(site.index))
      .map((ch) => [ch.replicasColumn, ch.layout.gpusPerSite.get(site.index)!] as const);
    if (terms.length > 0) b.addRow(`gpus[${site.name}]`, terms, -Infinity, site.gpus);
  }
}

/** F4: a choice with replicas is marked used. */
function addUsageRows({ b, choices }: Columns): void {
  for (const ch of choices) {
    const upper = b.columnUpper(ch.replicasColumn);
    b.addRow(`usage[${ch.layout.layout.id},m${ch.microbatches}]`, [[ch.replicasColumn, 1], [ch.usedColumn, -upper]], -Infinity, 0);
  }
}

/** F5: a link's pipeline step is the bytes all crossing replicas send per microbatch over its capacity. */
function addLinkStepRows(cols: Columns, c: ConfigCoefficients): void {
  const { b, choices } = cols;
  const links = new Set<number>();
  for (const ch of choices) for (const link of ch.layout.crossingsPerLink.keys()) links.add(link);
  for (const link of [...links].sort((x, y) => x - y)) {
    const maxStep = (c.dp * maxCrossings(choices, link) * c.sendBytes) / c.linkBytesPerS[link]!;
    const column = b.addColumn(`pipeline_link_step_s[${link}]`, 0, maxStep);
    cols.linkStep.set(link, column);
    const terms: (readonly [number, number])[] = [[column, 1]];
    for (const ch of choices) {
      const crossings = ch.layout.crossingsPerLink.get(link);
      if (crossings) terms.push([ch.replicasColumn, (-crossings * c.sendBytes) / c.linkBytesPerS[link]!]);
    }
    b.addRow(`pipeline_link_step[${link}]`, terms, 0, 0);
  }
}

const maxCrossings = (choices: readonly PlacementChoice[], link: number): number =>
  Math.max(0, ...choices.map((ch) => ch.layout.crossingsPerLink.get(link) ?? 0));

/**
 * F6: T covers every used choice's pipeline (k x max(slowest stage, link step) + bubble +
 * fill/drain crossings) plus the exposed gradient sync E and the optimizer step.
 */
function addPipelineTimeRows(cols: Columns, c: ConfigCoefficients): void {
  const { b, choices, T, E, linkStep } = cols;
  for (const ch of choices) {
    const k = ch.microbatches;
    const name = `${ch.layout.layout.id},m${k}`;
    const fixed = choiceFixedS(c, ch.layout, k);
    // The link-bound rows keep the closed form: eq. 5.8 already waits out every latency and a
    // steady state at the link adds to the closed form's terms, not to the floor's.
    const closedFixed = closedFormFixedS(c, ch.layout, k);
    const links = [...ch.layout.crossingsPerLink.keys()];
    if (links.length === 0) {
      b.addRow(`pipeline_time[${name}]`, [[T, 1], [E, -1], [ch.usedColumn, -(k * ch.layout.maxStepS + fixed)]], 0, Infinity);
      continue;
    }
    for (const link of links) {
      const step = linkStep.get(link)!;
      // Only the crossings routed over this link take at least its step (a hop takes its route's slowest link).
      const crossings = ch.layout.crossingsPerLink.get(link)!;
      const bigM = (k + 2 * crossings) * b.columnUpper(step) + k * ch.layout.maxStepS + fixed;
      // Steady state at the slowest GPU stage; fill and drain cross the link 2 x crossings times.
      b.addRow(`pipeline_time_stage_bound[${name},link${link}]`,
        [[T, 1], [E, -1], [step, -2 * crossings], [ch.usedColumn, -(k * ch.layout.maxStepS + fixed) - bigM]], -bigM, Infinity);
      // Steady state at the link.
      b.addRow(`pipeline_time_link_bound[${name},link${link}]`,
        [[T, 1], [E, -1], [step, -(k + 2 * crossings)], [ch.usedColumn, -closedFixed - bigM]], -bigM, Infinity);
    }
  }
}

/**
 * F7-F14: gradient sync. Stage classes (stages every layout places alike) get hosting binaries
 * per site (F7), a spanning binary (F8) and ring membership (F9); C bounds the cross-site phase
 * (F10); pods (F12) and replica-count thresholds (F13) give each stage's in-site ring time I_j
 * (F14); E bounds the exposed sync of every stage (F11).
 */
function addGradientSyncRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, lowerBoundS: number): void {
  const classes = stageClasses(c);
  const hosting = scenario.sites.length > 1 ? addHostingRows(cols, scenario, c, classes) : undefined;
  const crossBytes = hosting ? addCrossSiteSyncRows(cols, scenario, c, classes, hosting.participates, hosting.hosted) : undefined;
  const cross = hosting && crossBytes ? { ...crossBytes, ...addCrossSiteLatencyRows(cols, scenario, c, hosting.hosted) } : undefined;
  const podSpans = addPodRows(cols, scenario);
  const intra = addIntraSiteSyncRows(cols, scenario, c, classes, podSpans, RING_CHORD_TOLERANCE * lowerBoundS);
  addExposureRows(cols, c, classes, intra, hosting?.spans, cross);
  addWindowClassExposureRows(cols, c, classes, intra, hosting?.spans, cross);
}

/** The exposure forms of exposedSyncS for given windows: E >= share x sync - window. */
function exposureForms(c: ConfigCoefficients, windowB: number, windowF: number): { share: number; window: number }[] {
  return !c.overlapDp ? [{ share: 1, window: 0 }]
    : c.config.zero === 0 ? [{ share: 1, window: windowB }]
      : [{ share: 0.5, window: windowB }, { share: 0.5, window: windowF }, { share: 1, window: windowB + windowF }];
}

/**
 * F11b: every replica group has its own tail (docs/cost-model.md): when layouts' compute windows
 * differ (heterogeneous GPUs), layouts with equal windows form a class w with its own exposure
 * E_w >= share x sync_j - window_{w,j}, and a used choice of the class needs T >= its pipeline + E_w.
 * With one class, F6 and F11 already say this.
 */
function addWindowClassExposureRows(cols: Columns, c: ConfigCoefficients, classes: readonly number[][], intra: InSiteSyncColumns, spans: readonly number[] | undefined, cross: CrossSiteColumns | undefined): void {
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

/** The most replicas of a stage class `site` can hold through the given choices (at most dp): the big-M of F7 and F13. */
const replicasSiteCanHold = (c: ConfigCoefficients, placing: readonly PlacementChoice[], site: Scenario['sites'][number]): number =>
  placing.length === 0 ? 0 : Math.min(c.dp, Math.floor(site.gpus / Math.min(...placing.map((ch) => ch.layout.gpusPerSite.get(site.index)!))));

/** Columns x of the choices that place stage class `cls` on `site`. */
const choicesPlacing = (choices: readonly PlacementChoice[], cls: readonly number[], site: number) =>
  choices.filter((ch) => ch.layout.layout.stageSite[cls[0]!] === site);

/** F7-F9: hosts[class,site] (binary), spans[class] (binary) and in_ring[class,site]. */
function addHostingRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, classes: readonly number[][]) {
  const { b, choices } = cols;
  const siteCount = scenario.sites.length;
  const spans: number[] = [];
  const participates: number[][] = [];
  const hostedByClass: number[][] = [];
  classes.forEach((cls, ci) => {
    const hosted = scenario.sites.map((site) => {
      const h = b.addColumn(`hosts[class${ci},${site.name}]`, 0, 1, { integer: true });
      const placing = choicesPlacing(choices, cls, site.index);
      const terms: (readonly [number, number])[] = [[h, Math.max(1, replicasSiteCanHold(c, placing, site))], ...placing.map((ch) => [ch.replicasColumn, -1] as const)];
      b.addRow(`hosting[class${ci},${site.name}]`, terms, 0, Infinity);
      return h;
    });
    const span = b.addColumn(`spans[class${ci}]`, 0, 1, { integer: true });
    for (let s = 0; s < siteCount; s++) for (let t = s + 1; t < siteCount; t++) {
      b.addRow(`spanning[class${ci},${s},${t}]`, [[span, 1], [hosted[s]!, -1], [hosted[t]!, -1]], -1, Infinity);
    }
    spans.push(span);
    hostedByClass.push(hosted);
    participates.push(hosted.map((h, s) => {
      const q = b.addColumn(`in_ring[class${ci},${scenario.sites[s]!.name}]`, 0, 1);
      b.addRow(`ring_member[class${ci},${scenario.sites[s]!.name}]`, [[q, 1], [h, -1], [span, -1]], -1, Infinity);
      return q;
    }));
  });
  return { spans, participates, hosted: hostedByClass };
}

/**
 * F10: C >= each site's outgoing cross-site gradient bytes over the bandwidth of all its links,
 * and >= each class's bytes over the site's fastest single link, seconds.
 */
function addCrossSiteSyncRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, classes: readonly number[][], participates: readonly number[][], hosted: readonly (readonly number[])[]) {
  const { b } = cols;
  const incident = c.siteIncidentBytesPerS;
  const totalCross = c.crossGradientBytes.reduce((a, x) => a + x, 0);
  const narrowest = Math.min(...incident.filter((bw) => bw > 0));
  if (!Number.isFinite(narrowest)) return undefined;
  // The most any row below asks of C: a ring over k sites sends 2(k - 1)/k < 2 times the bytes
  // (F10 rows), and one class's bytes over a site's widest link (one-link rows).
  const slowestWidest = Math.min(...c.siteWidestLinkBytesPerS.filter((bw) => bw > 0));
  const maxS = Math.max((2 * totalCross) / narrowest, totalCross / slowestWidest);
  const column = b.addColumn('cross_site_sync_s', 0, maxS);
  const share = ringShareColumns(cols, scenario, participates, hosted);
  scenario.sites.forEach((site, s) => {
    if (incident[s] === 0) return;
    const terms: (readonly [number, number])[] = [[column, 1]];
    classes.forEach((cls, ci) => {
      const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
      terms.push([share[ci]![s]!, -bytes / incident[s]!]);
    });
    b.addRow(`cross_site_sync[${site.name}]`, terms, 0, Infinity);
    // Each class's ring hop out of the site travels one route, whose first link is one of the site's links.
    const widest = c.siteWidestLinkBytesPerS[s]!;
    classes.forEach((cls, ci) => {
      const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
      // (With the ring share here too, measured: HiGHS found the 4-site 405B row's good placements far later.)
      b.addRow(`cross_site_sync_one_link[class${ci},${site.name}]`, [[column, 1], [participates[ci]![s]!, -bytes / widest]], 0, Infinity);
    });
  });
  return { column, maxS };
}

/**
 * F10d: the bytes a site sends in a hierarchical cross-site ring over k sites are 2(k - 1)/k times
 * a stage's gradient shard (1 at k = 2, 4/3 at 3, 3/2 at 4, ...): concave in k, so on [2, S] it is
 * at least the chord 1 + f (k - 2), f = (2(S - 1)/S - 1)/(S - 2). share[class,s] >= in_ring[class,s],
 * and >= 1 + f (sum_u hosts[class,u] - 2) - (1 + f (S - 2)) (1 - in_ring[class,s]). With two
 * sites share = in_ring.
 */
function ringShareColumns(cols: Columns, scenario: Scenario, participates: readonly number[][], hosted: readonly (readonly number[])[]): number[][] {
  const { b } = cols;
  const n = scenario.sites.length;
  if (n < 3) return participates.map((q) => [...q]);
  const f = ((2 * (n - 1)) / n - 1) / (n - 2);
  const bigM = 1 + f * (n - 2);
  return participates.map((q, ci) => q.map((inRing, s) => {
    const w = b.addColumn(`ring_share[class${ci},${scenario.sites[s]!.name}]`, 0, 2);
    b.addRow(`ring_share_member[class${ci},${scenario.sites[s]!.name}]`, [[w, 1], [inRing, -1]], 0, Infinity);
    // w >= 1 - 2f + f sum h - M + M q
    b.addRow(`ring_share_sites[class${ci},${scenario.sites[s]!.name}]`, [[w, 1], ...hosted[ci]!.map((h) => [h, -f] as const), [inRing, -bigM]], 1 - 2 * f - bigM, Infinity);
    return w;
  }));
}

/** I_j per stage, and the most any row requires of it. */
interface InSiteSyncColumns {
  readonly columns: readonly number[];
  readonly maxS: readonly number[];
}

/** The cross-site phase's columns: C (bytes over bandwidth, F10) and Λ (ring hop latencies, F10b). */
interface CrossSiteColumns {
  readonly column: number;
  readonly maxS: number;
  readonly latencyColumn: number;
  readonly latencyMaxS: number;
}

/**
 * F10b: Λ, the cross-site ring's latency term 2 (k - 1) x (its longest hop) in the cost model,
 * where k is the number of sites a stage spans. Every hop takes at least the shortest link's
 * latency: Λ >= 2 λmin (sum_s hosts[class,s] - 1). The ring visits its sites in index order and
 * closes with a hop from the last back to the first: when sites s < t both host a class, that hop
 * joins some a <= s to some b >= t, so it takes at least R(s,t) = min route latency over such
 * (a, b): Λ >= 2 R(s,t) (sum_u hosts[class,u] - 1) - M (2 - hosts[class,s] - hosts[class,t]).
 */
function addCrossSiteLatencyRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, hosted: readonly (readonly number[])[]): { latencyColumn: number; latencyMaxS: number } {
  const { b } = cols;
  const siteCount = scenario.sites.length;
  const closing = (s: number, t: number): number => {
    let least = Infinity;
    for (let a = 0; a <= s; a++) for (let z = t; z < siteCount; z++) least = Math.min(least, routeLatencyS(scenario, z, a));
    return least;
  };
  let longest = 0;
  for (let s = 0; s < siteCount; s++) for (let t = 0; t < siteCount; t++) if (s !== t) longest = Math.max(longest, routeLatencyS(scenario, s, t));
  const latencyMaxS = 2 * (siteCount - 1) * longest;
  const latencyColumn = b.addColumn('cross_site_latency_s', 0, latencyMaxS);
  hosted.forEach((h, ci) => {
    const sitesHosting = h.map((col) => [col, -2 * c.minLinkLatencyS] as const);
    b.addRow(`cross_site_latency[class${ci}]`, [[latencyColumn, 1], ...sitesHosting], -2 * c.minLinkLatencyS, Infinity);
    for (let s = 0; s < siteCount; s++) for (let t = s + 1; t < siteCount; t++) {
      const r = closing(s, t);
      if (!(r > c.minLinkLatencyS)) continue; // the row above already says as much
      const bigM = 2 * r * (siteCount - 1);
      b.addRow(`cross_site_latency_closing[class${ci},${s},${t}]`,
        [[latencyColumn, 1], ...h.map((col, u) => [col, -2 * r + (u === s || u === t ? -bigM : 0)] as const)], -2 * r - 2 * bigM, Infinity);
    }
  });
  return { latencyColumn, latencyMaxS };
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

/** F12: pods[site] = 1 when the GPUs used at a site exceed one full-bisection pod. */
function addPodRows(cols: Columns, scenario: Scenario): (number | undefined)[] {
  const { b, choices } = cols;
  return scenario.sites.map((site) => {
    if (site.podGpus >= site.gpus || site.podOversubscription <= 1) return undefined;
    const z = b.addColumn(`spans_pods[${site.name}]`, 0, 1, { integer: true });
    const terms: (readonly [number, number])[] = choices.filter((ch) => ch.layout.gpusPerSite.has(site.index))
      .map((ch) => [ch.replicasColumn, ch.layout.gpusPerSite.get(site.index)!] as const);
    b.addRow(`pod_spill[${site.name}]`, [...terms, [z, -(site.gpus - site.podGpus)]], -Infinity, site.podGpus);
    return z;
  });
}

/**
 * F14b: the largest slope s with ring(n) >= ring(t) + s (n - t) for every replica count n in
 * [t, maxCount]. The ring time 2(n-1)/n A + 2(n-1) L is concave in n within a network tier, and
 * jumps up where the group leaves the scale-up domain; so the least chord slope from t is reached
 * at the end of a tier piece: just before or after the jump, or at maxCount.
 */
function ringChordSlope(c: ConfigCoefficients, stage: number, site: Scenario['sites'][number], t: number, maxCount: number, spansPods: boolean): number {
  if (maxCount <= t) return 0;
  const atT = c.ringS(stage, site.index, t, spansPods);
  const lastScaleUp = Math.floor(site.scaleUpDomainGpus / (c.config.cp * c.config.tp));
  let slope = Infinity;
  for (const n of [lastScaleUp, lastScaleUp + 1, maxCount]) {
    if (n > t && n <= maxCount) slope = Math.min(slope, (c.ringS(stage, site.index, n, spansPods) - atT) / (n - t));
  }
  // A hair under the exact chord, so rounding can never cut off a real placement.
  return Number.isFinite(slope) ? Math.max(0, slope * (1 - 1e-9)) : 0;
}

/** Replica-count thresholds at which a stage's in-site ring time is bounded from below. */
const RING_THRESHOLDS = [2, 16] as const;
/** Larger thresholds, each added only where the chords so far fall short of the ring by more than the tolerance. */
const RING_EXTRA_THRESHOLDS = [128, 1024, 8192] as const;
/** Share of the candidate's lower bound by which the F14b chords may undershoot a ring before another threshold is added. */
const RING_CHORD_TOLERANCE = 0.002;

/**
 * The replica-count thresholds of one (class, site): 2 and 16, then each larger one while the
 * chord from the last threshold undershoots some stage's ring (sampled at powers of two up to the
 * most replicas the site can hold) by more than `toleranceS`. The choice affects only tightness:
 * every threshold's rows are valid.
 */
function ringThresholds(c: ConfigCoefficients, cls: readonly number[], site: Scenario['sites'][number], maxCount: number, toleranceS: number): number[] {
  const chosen: number[] = RING_THRESHOLDS.filter((t) => t <= c.dp);
  for (const next of RING_EXTRA_THRESHOLDS) {
    const last = chosen[chosen.length - 1];
    if (last === undefined || next >= maxCount) break;
    const undershoot = Math.max(...cls.flatMap((j) => [false, true].map((pods) => {
      const slope = ringChordSlope(c, j, site, last, maxCount, pods);
      const atLast = c.ringS(j, site.index, last, pods);
      let worst = 0;
      for (let n = 2 * last; n <= maxCount; n *= 2) worst = Math.max(worst, c.ringS(j, site.index, n, pods) - atLast - slope * (n - last));
      return worst;
    })));
    if (undershoot <= toleranceS) break;
    chosen.push(next);
  }
  return chosen;
}

/**
 * F13-F14: I_j, stage j's in-site ring time: at each site, once at least t replicas of its class
 * are there (binary reached[class,site,t]), I_j is at least the ring time of t ranks at that site,
 * with the pod-oversubscribed bandwidth when the site spills out of a pod. The ring time rises
 * with the rank count, so each threshold's value bounds every larger count.
 */
function addIntraSiteSyncRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients, classes: readonly number[][], podSpans: readonly (number | undefined)[], chordToleranceS: number): InSiteSyncColumns {
  const { b, choices } = cols;
  const intra = c.stages.map((_, j) => b.addColumn(`in_site_sync_s[stage${j}]`, 0, Infinity));
  // The most any row below can require of I_j: its upper bound (I_j only ever needs to meet its
  // rows, and every other row it is in only gets harder as it grows), and the exposure rows' big-M.
  const maxS = c.stages.map(() => 0);
  const requires = (j: number, valueS: number) => { maxS[j] = Math.max(maxS[j]!, valueS); };
  classes.forEach((cls, ci) => {
    for (const site of scenario.sites) {
      const placing = choicesPlacing(choices, cls, site.index);
      if (placing.length === 0) continue;
      const maxCount = replicasSiteCanHold(c, placing, site);
      const count = placing.map((ch) => [ch.replicasColumn, 1] as const);
      const thresholds = ringThresholds(c, cls, site, maxCount, chordToleranceS);
      thresholds.forEach((t, ti) => {
        // The counts where this threshold's rows are the tightest: up to the next threshold.
        const segmentEnd = Math.min(maxCount, (thresholds[ti + 1] ?? Infinity) - 1);
        const reached = b.addColumn(`reached[class${ci},${site.name},${t}]`, 0, 1, { integer: true });
        b.addRow(`threshold[class${ci},${site.name},${t}]`, [...count, [reached, -Math.max(1, maxCount - t + 1)]], -Infinity, t - 1);
        for (const j of cls) {
          const ring = c.ringS(j, site.index, t, false);
          if (ring > 0) b.addRow(`in_site_sync[stage${j},${site.name},${t}]`, [[intra[j]!, 1], [reached, -ring]], 0, Infinity);
          requires(j, ring);
          // F14b: past the threshold the ring keeps growing (2(n-1) step latencies): the chord from t on.
          const slope = ringChordSlope(c, j, site, t, maxCount, false);
          // Only where the chord climbs above the threshold's value by more than the tolerance.
          if (slope * (segmentEnd - t) > chordToleranceS) {
            b.addRow(`in_site_sync_chord[stage${j},${site.name},${t}]`, [[intra[j]!, 1], [reached, -ring], ...count.map(([col]) => [col, -slope] as const)], -slope * t, Infinity);
            requires(j, ring + slope * (maxCount - t));
          }
          const z = podSpans[site.index];
          const podRing = c.ringS(j, site.index, t, true);
          if (z !== undefined && podRing > ring) {
            b.addRow(`in_site_sync_pods[stage${j},${site.name},${t}]`, [[intra[j]!, 1], [reached, -podRing], [z, -podRing]], -podRing, Infinity);
            requires(j, podRing);
            const podSlope = ringChordSlope(c, j, site, t, maxCount, true);
            if (podSlope * (segmentEnd - t) > chordToleranceS) {
              // Active only when the site spills out of a pod: relaxed by podSlope (maxCount - t) otherwise.
              const relax = podSlope * (maxCount - t);
              b.addRow(`in_site_sync_pods_chord[stage${j},${site.name},${t}]`,
                [[intra[j]!, 1], [reached, -podRing], [z, -podRing - relax], ...count.map(([col]) => [col, -podSlope] as const)], -podSlope * t - podRing - relax, Infinity);
              requires(j, podRing + podSlope * (maxCount - t));
            }
          }
        }
      });
    }
  });
  intra.forEach((column, j) => b.setColumnUpper(column, maxS[j]!));
  return { columns: intra, maxS };
}

/**
 * F11: E >= share x sync_j - window for every stage and exposure form in force, with
 * sync_j = I_j, plus C and the least round trip when the stage's class spans sites.
 */
function addExposureRows(cols: Columns, c: ConfigCoefficients, classes: readonly number[][], intra: InSiteSyncColumns, spans: readonly number[] | undefined, cross: CrossSiteColumns | undefined): void {
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
