/**
 * The order in which candidates' placement MIPs start (phase 4 of the search): the small MIPs
 * (milliseconds each) first, for an early incumbent that shrinks the rest (F0), then in
 * refined-bound order (measured with two MIP lanes: MoE 4-site gap 27.7% -> 20.4% against bound
 * order alone, the others unchanged within noise). Each candidate's ring-pattern bound is taken
 * as it comes up, and may send it back in line.
 */
import type { ConfigCoefficients } from '../../formulation/coefficients';
import type { RingPattern } from '../../formulation/ring-pattern-bound';
import { liftByRingPattern, type Refined } from './refine';
import { threshold, type SearchState } from './state';

/** MIPs with at most this many (layout, microbatch) choices solve in milliseconds: they go first. */
const SMALL_MIP_CHOICES = 40;

/** A candidate whose MIP answered, for the second pass. */
export interface SolvedMip {
  readonly index: number;
  readonly coefficients: ConfigCoefficients;
}

/** A candidate whose MIP is being solved: a free lane may solve the same MIP with another seed. */
export interface InFlightMip {
  /** Its position in the queue's order. */
  readonly position: number;
  readonly coefficients: ConfigCoefficients;
  /** Aborted when the MIP is no longer needed: both copies stop. */
  readonly done: AbortController;
  /** A second copy has been started. */
  helped: boolean;
}

/** The MIP phase's own state, beside the search's (state.ts). */
export interface MipQueue {
  /** Refined candidates whose MIP has not started: index -> coefficients (removed as it starts). */
  readonly waiting: Map<number, ConfigCoefficients>;
  /** Whether candidate i's MIP has more than SMALL_MIP_CHOICES choices. */
  readonly isLarge: ReadonlyMap<number, boolean>;
  /** Candidates in the order their MIPs start; takeNextMip reorders the part from `next` on. */
  readonly order: number[];
  /** Position in `order` of the next MIP to start. */
  next: number;
  /** The ring-pattern bound of each candidate taken so far (each is lifted once). */
  readonly lifted: Map<number, RingPattern>;
  readonly inFlight: Map<number, InFlightMip>;
  /** Least-ring-pattern MIPs running (a heuristic each, before its candidate's MIP): candidate -> their stop. */
  readonly leastPatternSolves: Map<number, AbortController>;
  /** Candidates whose MIP answered, in the order they answered. */
  readonly solved: SolvedMip[];
  /** A lane has ended the MIP phase. */
  stopped: boolean;
}

/** Every solve of the queue still running, with its candidate: the candidates' MIPs and their least-pattern MIPs. */
export function* runningSolves(queue: MipQueue): Generator<readonly [number, AbortController]> {
  for (const [j, f] of queue.inFlight) yield [j, f.done];
  yield* queue.leastPatternSolves;
}

/** The queue of the refined candidates' MIPs: small first, then by bound, then by index. */
export function queueMips(state: SearchState, refined: Refined): MipQueue {
  const { bounds } = state;
  const waiting = refined.coefficients;
  const isLarge = new Map([...waiting].map(([i, c]) => [i, c.layouts.reduce((sum, l) => sum + l.fittingMicrobatches.length, 0) > SMALL_MIP_CHOICES]));
  const order = [...waiting.keys()].sort((a, b) => Number(isLarge.get(a)) - Number(isLarge.get(b)) || bounds[a]! - bounds[b]! || a - b);
  return { waiting, isLarge, order, next: 0, lifted: new Map(), inFlight: new Map(), leastPatternSolves: new Map(), solved: [], stopped: false };
}

/**
 * The position of the next MIP to solve, its ring-pattern bound taken first. A candidate the
 * bound lifts past the next one in order goes back in line by its new bound (each is lifted
 * once), so MIPs run in order of the bounds they will be solved with (MoE 4-site row: the
 * candidate whose greedy placement polishes to the best plan had been second, behind one lifted
 * from 1.559 to 1.872 s).
 */
export function takeNextMip(state: SearchState, queue: MipQueue): number {
  const { bounds } = state;
  const { order, isLarge, lifted, waiting } = queue;
  const key = (i: number) => [Number(isLarge.get(i)), bounds[i]!] as const;
  const before = (a: number, b: number) => key(a)[0] < key(b)[0] || (key(a)[0] === key(b)[0] && key(a)[1] < key(b)[1]);
  for (;;) {
    const i = order[queue.next]!;
    // Past the deadline the MIP phase stops at this candidate (solveCandidateMip): no more lifting.
    if (lifted.has(i) || bounds[i]! >= threshold(state) || !waiting.has(i) || Date.now() >= state.deadlineMs) return queue.next++;
    lifted.set(i, liftByRingPattern(state, i, waiting.get(i)!));
    let to = queue.next;
    while (to + 1 < order.length && before(order[to + 1]!, i)) to++;
    if (to === queue.next) return queue.next++;
    order.splice(queue.next, 1);
    order.splice(to, 0, i);
  }
}
