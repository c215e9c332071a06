/**
 * The placement MIP for one outer configuration and data-parallel degree
 * (docs/formulation.md §3): how many replicas run each layout with each microbatch count, so
 * that the iteration time bound T is least. One function per constraint family, named for what
 * it bounds; each cites its equation (F0-F14b) in docs/formulation.md. The families, by file:
 * - placement-mip-replicas.ts: replica columns, count, batch, GPUs, usage, link steps and
 *   pipeline time (F0-F6);
 * - placement-mip-hosting.ts: hosting, spanning, ring membership and the cross-site phase
 *   (F7-F10e);
 * - placement-mip-in-site.ts: pods, replica-count thresholds and in-site rings (F12-F14b);
 * - placement-mip-exposure.ts: the exposed sync E and each window class's own tail (F11, F11b);
 * - gpu-budget.ts: at most a number of GPUs or an hourly price (F15), with a budget.
 */
import type { ConfigCoefficients } from './coefficients';
import { addGpuBudgetRows, type GpuBudget } from './gpu-budget';
import { MipBuilder, type Mip } from './mip';
import { addExposureRows, addWindowClassExposureRows } from './placement-mip-exposure';
import { addCrossSiteLatencyRows, addCrossSiteSyncRows, addHostingRows } from './placement-mip-hosting';
import { addIntraSiteSyncRows, addPodRows, RING_CHORD_TOLERANCE } from './placement-mip-in-site';
import {
  addBatchCoverageRow, addLinkStepRows, addPipelineTimeRows, addReplicaColumns, addReplicaCountRow, addSiteGpuCapacityRows, addUsageRows,
  type Columns, type PlacementChoice,
} from './placement-mip-replicas';
import { stageClasses } from './stage-classes';
import type { Scenario } from '../model/scenario';

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
 * The objective at or above which no placement of this MIP can be faster than `fasterThanS` (the
 * search's pruning threshold, the incumbent less the gap): a placement's T is at most its
 * cost-model time (the MIP is a relaxation), and its objective adds at most the tie-break
 * allowance; twice the solver's tolerance on top. So when a solver given this cutoff finds
 * nothing, every placement of the MIP takes at least `fasterThanS`.
 */
export function objectiveCutoff(placement: PlacementMip, fasterThanS: number): number {
  return fasterThanS + placement.tieBreakAllowanceS + 2 * SOLVER_TOLERANCE_S * Math.max(1, Math.abs(fasterThanS));
}

/**
 * Builds the MIP, or returns undefined when no (layout, microbatch) choice fits at all (or, with
 * `onlyFasterThanS`, none can take less than it). With `onlyFasterThanS`, choices whose pipeline
 * alone takes that long are left out (F0): the MIP then describes only placements faster than it,
 * so its answers bound this candidate by min(dual bound, onlyFasterThanS).
 */
export function buildPlacementMip(scenario: Scenario, c: ConfigCoefficients, lowerBoundS = 0, onlyFasterThanS = Infinity, budget?: GpuBudget): PlacementMip | undefined {
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
  addGpuBudgetRows(cols, budget);
  addUsageRows(cols);
  addLinkStepRows(cols, c);
  addPipelineTimeRows(cols, c);
  addGradientSyncRows(cols, scenario, c, lowerBoundS);
  return { mip: b.build(), choices, iterationColumn: T, linkStepColumns: cols.linkStep, tieBreakAllowanceS: tieBreakS * choices.length };
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
