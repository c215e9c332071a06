/**
 * How far a placement walk (exhaustive-placements.ts) has come, for a caller that stops walks
 * which cannot end in time (docs/formulation.md §4, step 6).
 */

/**
 * Nodes visited, placements reached (leaves, each timed under its network settings) and the share
 * of the walk's tree behind it. A node passes its share on to the branches (replica counts of its
 * choice) that do not end at once by counting or a bound, each in proportion to the ways to spread
 * the replicas it leaves over the choices after it; a node with no such branch, and a leaf, count
 * their share as done. So the share grows from 0 to 1 with the parts of the tree left behind,
 * each weighed by its placements before the bounds prune them, not by the time it took.
 */
export interface WalkProgress { readonly visits: number; readonly leaves: number; readonly doneShare: number }

/** Called as the walk goes (every {@link CHECKPOINT_VISITS} visits and after each leaf): false stops it. */
export type WalkCheckpoint = (progress: WalkProgress) => boolean;

/** Visits between two checkpoints when no leaf comes between. */
export const CHECKPOINT_VISITS = 1024;

/**
 * The parts of a node's share that its branches 0..most take (most = live.length - 1): nothing
 * for a branch that is not live, and for the others in proportion to C(left - c + later - 1,
 * later - 1), the ways to spread the replicas branch c leaves over the `later` choices after the
 * node (with none after it, only the branch that places every replica left). All zero when no
 * branch is live: the node's share is then done.
 */
export function branchShares(share: number, live: readonly boolean[], replicasLeft: number, laterChoices: number): number[] {
  const most = live.length - 1;
  // log of ways(c) up to a constant: ways(c) / ways(c + 1) = (left - c + later - 1) / (left - c).
  const logWays = Array<number>(most + 1).fill(-Infinity);
  if (laterChoices === 0) {
    if (most >= replicasLeft) logWays[replicasLeft] = 0;
  } else {
    logWays[most] = 0;
    for (let c = most - 1; c >= 0; c--) logWays[c] = logWays[c + 1]! + Math.log((replicasLeft - c + laterChoices - 1) / (replicasLeft - c));
  }
  let top = -Infinity;
  for (let c = 0; c <= most; c++) if (live[c]) top = Math.max(top, logWays[c]!);
  // Live branches all without ways (cannot happen when liveness is exact): equal parts.
  const ways = live.map((l, c) => (!l ? 0 : top === -Infinity ? 1 : Math.exp(logWays[c]! - top)));
  const total = ways.reduce((a, b) => a + b, 0);
  return total === 0 ? ways : ways.map((w) => (share * w) / total);
}
