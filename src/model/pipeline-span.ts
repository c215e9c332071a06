/**
 * The span of one replica's pipeline phase op by op, without the timeline: the same op orders
 * (schedule-order.ts), op times, readiness and link queues as `simulateSchedule`
 * (pipeline-timeline.ts), which `evaluate` needs on every call. Each stage runs its order as far
 * as its inputs have arrived, sweep after sweep; every op starts at the later of its stage's
 * previous op and its input, and each link direction is fed by one stage in that stage's order,
 * so the start times are those of the time-ordered simulation (test/timeline-agreement.test.ts
 * checks equality on every schedule). Pure.
 */
import { scheduleRun, type ScheduleInputs } from './pipeline-timeline';
import { endsChain, startsChain, virtualStageOf } from './schedule-chain';
import type { ScheduledOp } from './schedule-order';

/** The simulated span of `inputs` (seconds); throws if the op orders cannot complete (a bug). */
export function pipelineSpanS(inputs: ScheduleInputs): number {
  const { p, v, m, chain, splitWeight, orders } = scheduleRun(inputs);
  const hopAt = new Int32Array(chain).fill(-1);
  inputs.hops.forEach((hop, i) => { hopAt[hop.virtualStage] = i; });
  const linkFree = { forward: new Float64Array(inputs.hops.length), backward: new Float64Array(inputs.hops.length) };
  const cell = () => new Float64Array(chain * m).fill(NaN);
  const doneForward = cell();
  const doneBackward = cell();
  const arriveForward = cell();
  const arriveBackward = cell();
  const next = new Int32Array(p);
  const free = new Float64Array(p);

  const readyAt = (q: number, op: ScheduledOp): number => {
    const at = q * m + op.microbatch;
    if (op.kind === 'forward') return startsChain(inputs.schedule, q, p) ? 0 : arriveForward[at - m]!;
    if (op.kind === 'weight') return doneBackward[at]!;
    return endsChain(inputs.schedule, q, p, chain) ? doneForward[at]! : arriveBackward[at + m]!;
  };
  const send = (boundary: number, direction: 'forward' | 'backward', readyS: number): number => {
    const hop = hopAt[boundary]!;
    if (hop < 0) return readyS;
    const spec = inputs.hops[hop]!;
    const endS = Math.max(readyS, linkFree[direction][hop]!) + spec.stepS;
    linkFree[direction][hop] = endS;
    return endS + spec.latencyS;
  };

  let left = orders.reduce((sum, order) => sum + order.length, 0);
  let spanS = 0;
  while (left > 0) {
    let progressed = false;
    for (let j = 0; j < p; j++) {
      const order = orders[j]!;
      for (let op = order[next[j]!]; op; op = order[next[j]!]) {
        const q = virtualStageOf(inputs.schedule, j, op.chunk, p);
        const ready = readyAt(q, op);
        if (Number.isNaN(ready)) break;
        const duration = op.kind === 'forward' ? inputs.forwardS[j]! / v : (splitWeight ? inputs.backwardS[j]! / v / 2 : inputs.backwardS[j]! / v);
        const endS = Math.max(free[j]!, ready) + duration;
        free[j] = endS;
        next[j]! += 1;
        left--;
        progressed = true;
        spanS = Math.max(spanS, endS);
        const at = q * m + op.microbatch;
        if (op.kind === 'forward') {
          doneForward[at] = endS;
          if (!endsChain(inputs.schedule, q, p, chain)) arriveForward[at] = send(q, 'forward', endS);
        } else if (op.kind === 'backward') {
          doneBackward[at] = endS;
          if (!startsChain(inputs.schedule, q, p)) arriveBackward[at] = send(q - 1, 'backward', endS);
        }
      }
    }
    if (!progressed) throw new Error(`pipeline schedule ${inputs.schedule} deadlocked (p=${p}, v=${v}, m=${m})`);
  }
  return spanS;
}
