/**
 * The placement MIP for one outer configuration and data-parallel degree
 * (docs/formulation.md §3): how many replicas run each layout with each microbatch count, so
 * that the iteration time bound T is least. One function per constraint family, named for what
 * it bounds; each cites its equation (F1-F11) in docs/formulation.md.
 */
import type { ConfigCoefficients, LayoutCoefficients } from './coefficients';
import { MipBuilder, type Mip } from './mip';
import type { Scenario } from '../model/scenario';

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

interface Columns {
  readonly b: MipBuilder;
  readonly choices: PlacementChoice[];
  readonly T: number;
  readonly E: number;
  readonly linkStep: Map<number, number>;
}

/** Builds the MIP, or returns undefined when no (layout, microbatch) choice fits at all. */
export function buildPlacementMip(scenario: Scenario, c: ConfigCoefficients, lowerBoundS = 0): PlacementMip | undefined {
  const b = new MipBuilder();
  // A tiny cost per used (layout, microbatch) choice prefers plans with fewer replica groups.
  const tieBreakS = TIE_BREAK_SHARE * Math.max(lowerBoundS, 1e-3);
  const choices = addReplicaColumns(b, scenario, c, tieBreakS);
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
  addGradientSyncRows(cols, scenario, c);
  return { mip: b.build(), choices, iterationColumn: T, linkStepColumns: cols.linkStep, tieBreakAllowanceS: tieBreakS * choices.length };
}

function addReplicaColumns(b: MipBuilder, scenario: Scenario, c: ConfigCoefficients, tieBreakS: number): PlacementChoice[] {
  const choices: PlacementChoice[] = [];
  for (const layout of c.layouts) {
    let capacity = c.dp;
    for (const [site, gpus] of layout.gpusPerSite) capacity = Math.min(capacity, Math.floor(scenario.sites[site]!.gpus / gpus));
    for (const k of layout.fittingMicrobatches) {
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
    const fixed = ch.layout.bubbleS + 2 * ch.layout.crossingLatencyS + c.optimizerS;
    const links = [...ch.layout.crossingsPerLink.keys()];
    if (links.length === 0) {
      b.addRow(`pipeline_time[${name}]`, [[T, 1], [E, -1], [ch.usedColumn, -(k * ch.layout.maxStepS + fixed)]], 0, Infinity);
      continue;
    }
    for (const link of links) {
      const step = linkStep.get(link)!;
      const crossings = ch.layout.crossings;
      const bigM = (k + 2 * crossings) * b.columnUpper(step) + k * ch.layout.maxStepS + fixed;
      // Steady state at the slowest GPU stage; fill and drain cross the link 2 x crossings times.
      b.addRow(`pipeline_time_stage_bound[${name},link${link}]`,
        [[T, 1], [E, -1], [step, -2 * crossings], [ch.usedColumn, -(k * ch.layout.maxStepS + fixed) - bigM]], -bigM, Infinity);
      // Steady state at the link.
      b.addRow(`pipeline_time_link_bound[${name},link${link}]`,
        [[T, 1], [E, -1], [step, -(k + 2 * crossings)], [ch.usedColumn, -fixed - bigM]], -bigM, Infinity);
    }
  }
}

/**
 * F7-F11: gradient sync. h[class,site] marks sites hosting a stage class, spans[class] a class
 * on two or more sites, q[class,site] a site in that cross-site ring; C bounds the cross-site
 * phase by each site's outgoing gradient bytes over its links; E bounds the exposed sync of
 * every stage, with all replicas on one site or spread over several.
 */
function addGradientSyncRows(cols: Columns, scenario: Scenario, c: ConfigCoefficients): void {
  const { b, choices, E } = cols;
  const classes = stageClasses(c);
  const siteCount = scenario.sites.length;
  const spans: number[] = [];
  const participates: number[][] = [];
  if (siteCount > 1) {
    classes.forEach((cls, ci) => {
      const hosted = scenario.sites.map((site) => {
        const h = b.addColumn(`hosts[class${ci},${site.name}]`, 0, 1, { integer: true });
        const terms: (readonly [number, number])[] = [[h, c.dp]];
        for (const ch of choices) if (ch.layout.layout.stageSite[cls[0]!] === site.index) terms.push([ch.replicasColumn, -1]);
        b.addRow(`hosting[class${ci},${site.name}]`, terms, 0, Infinity); // F7
        return h;
      });
      const span = b.addColumn(`spans[class${ci}]`, 0, 1, { integer: true });
      for (let s = 0; s < siteCount; s++) for (let t = s + 1; t < siteCount; t++) {
        b.addRow(`spanning[class${ci},${s},${t}]`, [[span, 1], [hosted[s]!, -1], [hosted[t]!, -1]], -1, Infinity); // F8
      }
      spans.push(span);
      participates.push(hosted.map((h, s) => {
        const q = b.addColumn(`in_ring[class${ci},${scenario.sites[s]!.name}]`, 0, 1);
        b.addRow(`ring_member[class${ci},${scenario.sites[s]!.name}]`, [[q, 1], [h, -1], [span, -1]], -1, Infinity); // F9
        return q;
      }));
    });
  }
  const totalCross = c.crossGradientBytes.reduce((a, x) => a + x, 0);
  let crossColumn = -1;
  let crossMax = 0;
  if (siteCount > 1 && scenario.links.length > 0) {
    const incidentBandwidth = scenario.sites.map((site) => scenario.links
      .filter((l) => l.siteA === site.index || l.siteB === site.index)
      .reduce((sum, l) => sum + c.linkBytesPerS[l.index]!, 0));
    crossMax = totalCross / Math.min(...incidentBandwidth.filter((bw) => bw > 0));
    crossColumn = b.addColumn('cross_site_sync_s', 0, crossMax);
    scenario.sites.forEach((site, s) => {
      if (incidentBandwidth[s] === 0) return;
      // In seconds (bytes over the site's link bandwidth), which keeps coefficients well scaled.
      const terms: (readonly [number, number])[] = [[crossColumn, 1]];
      classes.forEach((cls, ci) => {
        const bytes = cls.reduce((sum, j) => sum + c.crossGradientBytes[j]!, 0);
        terms.push([participates[ci]![s]!, -bytes / incidentBandwidth[s]!]);
      });
      b.addRow(`cross_site_sync[${site.name}]`, terms, 0, Infinity); // F10
    });
  }
  // F11: exposure forms a x sync - window for each stage, by the overlap in force.
  classes.forEach((cls, ci) => {
    for (const j of cls) {
      const windowB = Math.max(...c.layouts.map((l) => l.backwardWindowS[j]!));
      const windowF = Math.max(...c.layouts.map((l) => l.forwardWindowS[j]!));
      const forms: { share: number; window: number }[] = !c.overlapDp ? [{ share: 1, window: 0 }]
        : c.config.zero === 0 ? [{ share: 1, window: windowB }]
          : [{ share: 0.5, window: windowB }, { share: 0.5, window: windowF }, { share: 1, window: windowB + windowF }];
      const oneSite = c.intraSyncOneSiteS[j]!;
      const spread = c.intraSyncSpreadS[j]!;
      forms.forEach((form, f) => {
        const a = form.share;
        const spanTerm = spans[ci];
        const intraTerms: (readonly [number, number])[] = [[E, 1]];
        if (spanTerm !== undefined) intraTerms.push([spanTerm, -a * (spread - oneSite)]);
        b.addRow(`dp_exposed_in_site[stage${j},form${f}]`, intraTerms, a * oneSite - form.window, Infinity);
        if (spanTerm !== undefined && crossColumn >= 0) {
          // Active only when the stage spans sites: E >= a (spread + C + 2 latency) - window.
          const bigM = a * (crossMax + 2 * c.minLinkLatencyS + spread);
          b.addRow(`dp_exposed_cross_site[stage${j},form${f}]`,
            [[E, 1], [crossColumn, -a], [spanTerm, -(a * (spread + 2 * c.minLinkLatencyS)) - bigM]],
            -form.window - bigM, Infinity);
        }
      });
    }
  });
}

/** Groups stages that every layout places on the same site, so hosting can be decided per group. */
function stageClasses(c: ConfigCoefficients): number[][] {
  const byKey = new Map<string, number[]>();
  c.stages.forEach((_, j) => {
    const key = c.layouts.map((l) => l.layout.stageSite[j]).join(',');
    const list = byKey.get(key) ?? [];
    list.push(j);
    byKey.set(key, list);
  });
  return [...byKey.values()];
}
