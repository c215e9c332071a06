/**
 * One iteration's pipeline phase op by op: a discrete-event simulation of the GPipe, 1F1B,
 * interleaved 1F1B (Megatron's order), ZB-H1, ZBV, interleaved zero-bubble, DualPipeV and DualPipe
 * schedules (the V-shaped ones on their folded chain, DualPipe on its two chains, schedule-chain.ts). Each stage runs one op at a time in
 * its schedule's order (schedule-order.ts, the same order memory counts held microbatches by),
 * as soon as its input has arrived; a boundary between sites is a send that holds the link
 * direction for the link's per-microbatch step and then takes the route's latency
 * (docs/cost-model.md §4-5). Op times come from the cost model (`groupPipelines`), so the
 * simulated span checks the closed-form pipeline phase and draws the report's timeline. Pure.
 */
import { groupPipelines } from './critical-group';
import type { ChainHop, GroupPipeline } from './group-pipelines';
import { forwardPartS } from './pipeline';
import type { PlanLayout } from './placement';
import type { Schedule } from './plan-schema';
import type { Scenario } from './scenario';
import { endsChain, splitsBackward, startsChain, virtualStageOf } from './schedule-chain';
import { stageOrder, type PipelineOpKind, type ScheduledOp } from './schedule-order';

/** One op of one microbatch on one stage (model chunk `chunk` of the stage). */
export interface PipelineOp {
  readonly stage: number;
  readonly chunk: number;
  readonly microbatch: number;
  readonly kind: PipelineOpKind;
  readonly startS: number;
  readonly endS: number;
}

/** Activations (forward) or their gradients (backward) crossing a site boundary. */
export interface PipelineSend {
  /** Index into the timeline's `hops`. */
  readonly hop: number;
  readonly direction: 'forward' | 'backward';
  readonly microbatch: number;
  /** When the link starts carrying it, when it is done, and when it arrives (after the route latency). */
  readonly startS: number;
  readonly endS: number;
  readonly arriveS: number;
}

export interface ScheduleInputs {
  readonly schedule: Schedule;
  readonly virtualStages: number;
  readonly microbatches: number;
  /** Per stage, per microbatch over all its chunks: forward and backward (with recomputation) seconds. */
  readonly forwardS: readonly number[];
  readonly backwardS: readonly number[];
  /** Cross-site boundaries of the chain of virtual stages. */
  readonly hops: readonly Pick<ChainHop, 'virtualStage' | 'latencyS' | 'stepS'>[];
}

export interface PipelineTimeline {
  readonly schedule: Schedule;
  readonly stages: number;
  readonly virtualStages: number;
  readonly microbatches: number;
  readonly ops: readonly PipelineOp[];
  readonly sends: readonly PipelineSend[];
  /** From the first forward to the last op. */
  readonly spanS: number;
  /** Seconds each stage computes. */
  readonly busyS: readonly number[];
}

/** What both op-by-op timings start from: the shape of the chain, whether backward splits, each stage's op order. */
export interface ScheduleRun {
  readonly p: number;
  readonly v: number;
  readonly m: number;
  /** Virtual stages on the chain (p x v). */
  readonly chain: number;
  readonly splitWeight: boolean;
  readonly orders: readonly (readonly ScheduledOp[])[];
}

/** The shape and op orders of a run of `inputs`; throws unless the microbatch count is whole and positive. */
export function scheduleRun(inputs: ScheduleInputs): ScheduleRun {
  const p = inputs.forwardS.length;
  const v = inputs.virtualStages;
  const m = inputs.microbatches;
  if (!Number.isInteger(m) || m < 1) throw new Error(`the timeline needs a whole number of microbatches, got ${m}`);
  return { p, v, m, chain: p * v, splitWeight: splitsBackward(inputs.schedule), orders: Array.from({ length: p }, (_, j) => stageOrder(inputs.schedule, j, p, v, m)) };
}

/** Simulates one replica's pipeline phase. Throws if the schedule's op orders cannot complete (a bug). */
export function simulateSchedule(inputs: ScheduleInputs): PipelineTimeline {
  const { p, v, m, chain, splitWeight, orders } = scheduleRun(inputs);
  const virtualStage = (j: number, chunk: number) => virtualStageOf(inputs.schedule, j, chunk, p);
  const duration = (op: ScheduledOp, j: number): number => {
    if (op.kind === 'forward') return inputs.forwardS[j]! / v;
    const backward = inputs.backwardS[j]! / v;
    return splitWeight ? backward / 2 : backward;
  };
  const hopAt = new Map(inputs.hops.map((hop, i) => [hop.virtualStage, i]));
  const linkFree = inputs.hops.map(() => ({ forward: 0, backward: 0 }));
  // Completion times by virtual stage and microbatch; arrival of each boundary's outputs.
  const done = { forward: grid(chain, m), backward: grid(chain, m), weight: grid(chain, m) };
  const arrive = { forward: grid(chain, m), backward: grid(chain, m) };
  const next = new Array<number>(p).fill(0);
  const free = new Array<number>(p).fill(0);
  const busy = new Array<number>(p).fill(0);
  const ops: PipelineOp[] = [];
  const sends: PipelineSend[] = [];

  const readyAt = (j: number, op: ScheduledOp): number => {
    const q = virtualStage(j, op.chunk);
    if (op.kind === 'forward') return startsChain(inputs.schedule, q, p) ? 0 : arrive.forward[q - 1]![op.microbatch]!;
    if (op.kind === 'weight') return done.backward[q]![op.microbatch]!;
    return endsChain(inputs.schedule, q, p, chain) ? done.forward[q]![op.microbatch]! : arrive.backward[q + 1]![op.microbatch]!;
  };
  const send = (boundary: number, direction: 'forward' | 'backward', microbatch: number, readyS: number): number => {
    const hop = hopAt.get(boundary);
    if (hop === undefined) return readyS;
    const spec = inputs.hops[hop]!;
    const startS = Math.max(readyS, linkFree[hop]![direction]);
    const endS = startS + spec.stepS;
    linkFree[hop]![direction] = endS;
    const arriveS = endS + spec.latencyS;
    sends.push({ hop, direction, microbatch, startS, endS, arriveS });
    return arriveS;
  };

  const total = orders.reduce((sum, order) => sum + order.length, 0);
  while (ops.length < total) {
    // Run the op that can start earliest, so that link queues see sends in time order.
    let pick = -1;
    let pickOp: ScheduledOp | undefined;
    let pickStart = Infinity;
    for (let j = 0; j < p; j++) {
      const op = orders[j]![next[j]!];
      if (!op) continue;
      const ready = readyAt(j, op);
      if (Number.isNaN(ready)) continue;
      const start = Math.max(free[j]!, ready);
      if (start < pickStart) { pickStart = start; pick = j; pickOp = op; }
    }
    if (pick < 0 || !pickOp) throw new Error(`pipeline schedule ${inputs.schedule} deadlocked (p=${p}, v=${v}, m=${m})`);
    const op = pickOp;
    const endS = pickStart + duration(op, pick);
    const q = virtualStage(pick, op.chunk);
    ops.push({ stage: pick, chunk: op.chunk, microbatch: op.microbatch, kind: op.kind, startS: pickStart, endS });
    busy[pick]! += endS - pickStart;
    free[pick] = endS;
    next[pick]! += 1;
    done[op.kind][q]![op.microbatch] = endS;
    if (op.kind === 'forward' && !endsChain(inputs.schedule, q, p, chain)) arrive.forward[q]![op.microbatch] = send(q, 'forward', op.microbatch, endS);
    if (op.kind === 'backward' && !startsChain(inputs.schedule, q, p)) arrive.backward[q]![op.microbatch] = send(q - 1, 'backward', op.microbatch, endS);
  }
  const spanS = ops.reduce((max, op) => Math.max(max, op.endS), 0);
  return { schedule: inputs.schedule, stages: p, virtualStages: v, microbatches: m, ops, sends, spanS, busyS: busy };
}

function grid(rows: number, columns: number): number[][] {
  return Array.from({ length: rows }, () => new Array<number>(columns).fill(NaN));
}

/** Simulation inputs from the cost model for replica group `group` (default: the critical group). */
export function scheduleInputsForGroup(layout: PlanLayout, pipeline: GroupPipeline): ScheduleInputs {
  const { plan } = layout;
  // Each stage's step (compute plus exposed communication) split in the ratio of forward to backward work.
  const forwardS = pipeline.stepS.map((step, j) => forwardPartS(step, pipeline.stageTimes[j]!));
  return {
    schedule: plan.schedule,
    virtualStages: plan.virtualStages,
    microbatches: Math.round(pipeline.microbatches),
    forwardS,
    backwardS: pipeline.stepS.map((step, j) => step - forwardS[j]!),
    hops: pipeline.hops,
  };
}

export interface GroupTimeline {
  readonly group: number;
  readonly pipeline: GroupPipeline;
  readonly timeline: PipelineTimeline;
  readonly hops: readonly ChainHop[];
}

/** The simulated timeline of one replica of a group (default: the critical group, the one that sets the iteration time). */
export function groupTimeline(scenario: Scenario, layout: PlanLayout, group?: number): GroupTimeline {
  const { pipelines, criticalGroup } = groupPipelines(scenario, layout);
  const index = group ?? criticalGroup;
  const pipeline = pipelines[index];
  if (!pipeline) throw new Error(`no replica group ${index}`);
  return { group: index, pipeline, timeline: simulateSchedule(scheduleInputsForGroup(layout, pipeline)), hops: pipeline.hops };
}
