/**
 * The placement MIP's replica, capacity and pipeline rows (docs/formulation.md §3, F0-F6): the
 * (layout, microbatch count) choices and their columns (F0), the replica count (F1), the batch
 * (F2), each site's GPUs (F3), the used binaries (F4), each link's pipeline step (F5) and the
 * pipeline time of every used choice (F6). placement-mip.ts builds the MIP from these and the
 * gradient-sync families.
 */
import { roundTripFloorLineOf, roundTripFloorOf, type ConfigCoefficients, type LayoutCoefficients } from './coefficients';
import type { MipBuilder } from './mip';
import { fillLatencyOf, fillStepsOn, roundTripLinesOf, spanFloorOf, stageLinesOf } from './stage-floor-coefficients';
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

/** The MIP being built, as every row family sees it: the builder, the choices, T, E and the link steps (F5). */
export interface Columns {
  readonly b: MipBuilder;
  readonly choices: PlacementChoice[];
  readonly T: number;
  readonly E: number;
  readonly linkStep: Map<number, number>;
}

/**
 * A choice's time that depends on neither the link step nor E: bubble (with ZB-H1's short-pipeline
 * gaps when k < pp), fill/drain latencies, optimizer. For 1F1B and ZB-H1 the bubble and latencies
 * are eq. 5.9a's (docs/formulation.md §2), for the other schedules eq. 5.1-5.7's.
 */
const closedFormFixedS = (c: ConfigCoefficients, layout: LayoutCoefficients, k: number): number =>
  layout.bubbleS + Math.max(0, c.config.pp - k) * layout.shortPipelineGapS + fillLatencyOf(layout) + c.optimizerS;

/**
 * The same, raised to the round-trip floor of k microbatches (eq. 5.8, at zero link step) and, for
 * 1F1B and ZB-H1, to the largest stage line (eq. 5.9a, at zero link step) where that is more;
 * with `span`, also to the span floor (eq. 5.11, at zero link step).
 */
const choiceFixedS = (c: ConfigCoefficients, layout: LayoutCoefficients, k: number, span = true): number =>
  Math.max(closedFormFixedS(c, layout, k), Math.max(roundTripFloorOf(layout, k), stageLinesOf(layout, k), span ? spanFloorOf(layout, k) : 0) - k * layout.maxStepS + c.optimizerS);

/** The least time any replica running this choice takes: its pipeline at the slowest stage, bubble, fill latency and optimizer (F6 without E). */
export const choicePipelineS = (c: ConfigCoefficients, layout: LayoutCoefficients, k: number): number =>
  k * layout.maxStepS + choiceFixedS(c, layout, k);

/**
 * The same without the span floor: the exhaustive mode's per-choice bound, asked for every choice of
 * thousands of candidates, where simulating each would cost more than the pruning saves.
 */
export const choiceFloorsS = (c: ConfigCoefficients, layout: LayoutCoefficients, k: number): number =>
  k * layout.maxStepS + choiceFixedS(c, layout, k, false);

/** F0: replica columns per (layout, microbatch count), leaving out choices that cannot beat `onlyFasterThanS`. */
export function addReplicaColumns(b: MipBuilder, scenario: Scenario, c: ConfigCoefficients, tieBreakS: number, onlyFasterThanS: number): PlacementChoice[] {
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
export function addReplicaCountRow({ b, choices }: Columns, c: ConfigCoefficients): void {
  b.addRow('replicas_total', choices.map((ch) => [ch.replicasColumn, 1] as const), c.dp, c.dp);
}

/** F2: replicas x microbatches x microbatch size cover the global batch exactly. */
export function addBatchCoverageRow({ b, choices }: Columns, c: ConfigCoefficients): void {
  b.addRow('batch_coverage', choices.map((ch) => [ch.replicasColumn, ch.microbatches] as const), c.totalMicrobatches, c.totalMicrobatches);
}

/** F3: GPUs used at each site fit the site. */
export function addSiteGpuCapacityRows({ b, choices }: Columns, scenario: Scenario): void {
  for (const site of scenario.sites) {
    const terms = choices.filter((ch) => ch.layout.gpusPerSite.has(site.index))
      .map((ch) => [ch.replicasColumn, ch.layout.gpusPerSite.get(site.index)!] as const);
    if (terms.length > 0) b.addRow(`gpus[${site.name}]`, terms, -Infinity, site.gpus);
  }
}

/** F4: a choice with replicas is marked used. */
export function addUsageRows({ b, choices }: Columns): void {
  for (const ch of choices) {
    const upper = b.columnUpper(ch.replicasColumn);
    b.addRow(`usage[${ch.layout.layout.id},m${ch.microbatches}]`, [[ch.replicasColumn, 1], [ch.usedColumn, -upper]], -Infinity, 0);
  }
}

/** F5: a link's pipeline step is the bytes all crossing replicas send per microbatch over its capacity. */
export function addLinkStepRows(cols: Columns, c: ConfigCoefficients): void {
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
 * fill/drain crossings) plus the exposed gradient sync E and the optimizer step. For 1F1B and
 * ZB-H1 (layouts with eq. 5.9 terms) the stage-bound row charges only the crossings before the
 * slowest stage (eq. 5.9a), a second row the round-trip floor with every crossing once (eq. 5.8),
 * and the link-bound row is eq. 5.9b: (k + 1) link steps plus the chain and every latency twice.
 */
export function addPipelineTimeRows(cols: Columns, c: ConfigCoefficients): void {
  const { b, choices, T, E, linkStep } = cols;
  for (const ch of choices) {
    const k = ch.microbatches;
    const name = `${ch.layout.layout.id},m${k}`;
    const fixed = choiceFixedS(c, ch.layout, k);
    const links = [...ch.layout.crossingsPerLink.keys()];
    if (links.length === 0) {
      b.addRow(`pipeline_time[${name}]`, [[T, 1], [E, -1], [ch.usedColumn, -(k * ch.layout.maxStepS + fixed)]], 0, Infinity);
      continue;
    }
    const stageFloor = ch.layout.stageFloor;
    // 1F1B and ZB-H1: every stage line (eq. 5.9a) at zero link step, once per choice.
    if (stageFloor) b.addRow(`pipeline_time_lines[${name}]`, [[T, 1], [E, -1], [ch.usedColumn, -(k * ch.layout.maxStepS + fixed)]], 0, Infinity);
    for (const link of links) {
      const step = linkStep.get(link)!;
      // A used choice that crosses the link waits at least the link's step surplus more per step (eq. 2.1).
      const surplus = c.linkStepSurplusS[link] ?? 0;
      const upper = b.columnUpper(step) + surplus;
      // Only the crossings routed over this link take at least its step (a hop takes its route's slowest link).
      const crossings = ch.layout.crossingsPerLink.get(link)!;
      // Steady state at the link: eq. 5.4's terms, or eq. 5.9b.
      const linkSteps = stageFloor ? k + 1 : k + 2 * crossings;
      const linkFixed = stageFloor ? stageFloor.linkRowFixedS + c.optimizerS : closedFormFixedS(c, ch.layout, k);
      const stageSteps = stageFloor ? fillStepsOn(ch.layout, link) : 2 * crossings;
      const stageFixed = stageFloor ? closedFormFixedS(c, ch.layout, k) : fixed;
      const floorS = roundTripFloorOf(ch.layout, k) + c.optimizerS;
      // Eq. 5.9a's form C passes every crossing twice.
      const roundTripLineS = roundTripLinesOf(ch.layout, k) + c.optimizerS;
      const bigM = stageFloor
        ? Math.max(linkSteps * upper + linkFixed, stageSteps * upper + k * ch.layout.maxStepS + stageFixed, crossings * upper + floorS, 2 * crossings * upper + roundTripLineS)
        : (k + 2 * crossings) * upper + k * ch.layout.maxStepS + fixed;
      // Steady state at the slowest GPU stage; fill and drain cross the link (eq. 5.4: 2 x crossings times; eq. 5.9a: before the slowest stage).
      b.addRow(`pipeline_time_stage_bound[${name},link${link}]`,
        [[T, 1], [E, -1], [step, -stageSteps], [ch.usedColumn, -(k * ch.layout.maxStepS + stageFixed + stageSteps * surplus) - bigM]], -bigM, Infinity);
      // Eq. 5.8 as lines in the link's step (each chain waits out every crossing at least once:
      // its first backward's round trip passes those before the stage once and those after it twice).
      if (stageFloor && floorS > c.optimizerS) addFloorTangentRows(cols, c, ch, link, surplus, upper, bigM);
      if (stageFloor && roundTripLineS > c.optimizerS) {
        b.addRow(`pipeline_time_round_trip_line[${name},link${link}]`,
          [[T, 1], [E, -1], [step, -2 * crossings], [ch.usedColumn, -(roundTripLineS + 2 * crossings * surplus) - bigM]], -bigM, Infinity);
      }
      b.addRow(`pipeline_time_link_bound[${name},link${link}]`,
        [[T, 1], [E, -1], [step, -linkSteps], [ch.usedColumn, -(linkFixed + linkSteps * surplus) - bigM]], -bigM, Infinity);
    }
  }
}

/** Link steps (the chain's, surplus included) at which F6's tangent rows take eq. 5.8: the least, the middle and the most the MIP allows. */
const TANGENT_POINTS = [0, 0.5, 1] as const;

/**
 * F6's tangent rows of eq. 5.8 (1F1B and ZB-H1 choices that cross `link`): the chain attaining the
 * floor where the link's step is P is a line in the step whose slope is the link steps it waits out
 * (roundTripFloorLine), at most the floor, hence the phase, at every step; at the real step, at least
 * the MIP's step plus the surplus (eq. 2.1): T >= E + opt + y (line(P) - slope P + slope x surplus)
 * + slope x step. The round-trip row above charges each crossing once; a chain whose window spans a
 * crossing waits out two of its steps per window, and on a shared link (every replica's sends in
 * one step) that is most of the phase: a pp-across pipeline of 16 microbatches on 8 replicas waits
 * out 16 steps, the round-trip row one (docs/formulation.md §3).
 */
function addFloorTangentRows(cols: Columns, c: ConfigCoefficients, ch: PlacementChoice, link: number, surplus: number, upper: number, bigM: number): void {
  const { b, T, E, linkStep } = cols;
  const step = linkStep.get(link)!;
  const k = ch.microbatches;
  let previousSlope = -1;
  for (const [i, share] of TANGENT_POINTS.entries()) {
    const atS = surplus + share * (upper - surplus);
    const line = roundTripFloorLineOf(ch.layout, k, link, atS);
    // The same chain as the point before: the same row.
    if (line.linkSteps === previousSlope) continue;
    previousSlope = line.linkSteps;
    const fixedS = line.valueS - line.linkSteps * atS + line.linkSteps * surplus + c.optimizerS;
    const rowM = Math.max(bigM, line.linkSteps * upper + fixedS);
    b.addRow(`pipeline_time_floor_tangent[${ch.layout.layout.id},m${k},link${link},${i}]`,
      [[T, 1], [E, -1], [step, -line.linkSteps], [ch.usedColumn, -fixedS - rowM]], -rowM, Infinity);
  }
}

/** The most replicas of a stage class `site` can hold through the given choices (at most dp): the big-M of F7 and F13. */
export const replicasSiteCanHold = (c: ConfigCoefficients, placing: readonly PlacementChoice[], site: Scenario['sites'][number]): number =>
  placing.length === 0 ? 0 : Math.min(c.dp, Math.floor(site.gpus / Math.min(...placing.map((ch) => ch.layout.gpusPerSite.get(site.index)!))));

/** Columns x of the choices that place stage class `cls` on `site`. */
export const choicesPlacing = (choices: readonly PlacementChoice[], cls: readonly number[], site: number) =>
  choices.filter((ch) => ch.layout.layout.stageSite[cls[0]!] === site);
