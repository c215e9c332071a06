/**
 * The pipeline schedules' op order per stage (GPipe, 1F1B, Megatron's interleaved 1F1B, ZB-H1)
 * and the microbatches whose activations a stage holds at its peak under that order. One
 * definition for both the op-by-op simulation (pipeline-timeline.ts) and memory (memory.ts):
 * the closed form {@link microbatchesHeld} equals the walk of {@link stageOrder} by
 * {@link peakMicrobatchesHeld} (test/schedule-order.test.ts; docs/cost-model.md §5-6). Pure.
 */
import { interleavedGroupSize } from './pipeline';
import type { Schedule } from './plan-schema';

export type PipelineOpKind = 'forward' | 'backward' | 'weight';

/** One op of one microbatch in a stage's order: model chunk `chunk` of the stage. */
export interface ScheduledOp { readonly kind: PipelineOpKind; readonly chunk: number; readonly microbatch: number }

/**
 * The order in which stage `j` of `p` runs its ops for `m` microbatches (`v` chunks per stage
 * for the interleaved schedule). Throws for the interleaved schedule with m < p, which
 * Megatron-LM refuses to run.
 */
export function stageOrder(schedule: Schedule, j: number, p: number, v: number, m: number): ScheduledOp[] {
  const F = (microbatch: number, chunk = 0): ScheduledOp => ({ kind: 'forward', chunk, microbatch });
  const B = (microbatch: number, chunk = 0): ScheduledOp => ({ kind: 'backward', chunk, microbatch });
  const W = (microbatch: number): ScheduledOp => ({ kind: 'weight', chunk: 0, microbatch });
  const ops: ScheduledOp[] = [];
  switch (schedule) {
    case 'gpipe':
      for (let i = 0; i < m; i++) ops.push(F(i));
      for (let i = 0; i < m; i++) ops.push(B(i));
      return ops;
    case '1f1b':
    case 'zb-h1': {
      // 1F1B: p - j - 1 warm-up forwards, then one forward and one backward in turn. ZB-H1 (Qi et
      // al. 2024, §2.1) splits each backward into input-gradient (B) and weight-gradient (W)
      // passes and starts stage j's Ws j microbatches late, so that every stage holds p
      // microbatches at its peak (p - j - 1 warm-up, the one in its forward, j awaiting their W);
      // the deferred Ws fill the drain.
      const warmup = Math.min(m, p - j - 1);
      const deferred = j;
      let f = 0;
      let b = 0;
      let w = 0;
      const backward = () => {
        ops.push(B(b++));
        if (schedule === 'zb-h1' && b - w > deferred) ops.push(W(w++));
      };
      for (; f < warmup; f++) ops.push(F(f));
      while (f < m) { ops.push(F(f++)); backward(); }
      while (b < m) backward();
      if (schedule === 'zb-h1') while (w < m) ops.push(W(w++));
      return ops;
    }
    case 'interleaved': {
      // Megatron-LM's interleaved 1F1B (schedules.py, get_schedule_table): microbatches in groups
      // of N (interleavedGroupSize), each group through chunk 0..v-1 forward and v-1..0 backward;
      // warm-up (p - j - 1) * 2 + (v - 1) * N forwards, then one forward and one backward in turn.
      const n = interleavedGroupSize(m, p);
      if (n === undefined) throw new Error(`the interleaved schedule needs at least p = ${p} microbatches, got ${m}`);
      const forwards: ScheduledOp[] = [];
      const backwards: ScheduledOp[] = [];
      for (let start = 0; start < m; start += n) {
        const end = start + n >= m ? m : start + n;
        for (let c = 0; c < v; c++) for (let i = start; i < end; i++) forwards.push(F(i, c));
        for (let c = v - 1; c >= 0; c--) for (let i = start; i < end; i++) backwards.push(B(i, c));
        if (end === m) break;
      }
      const totalOps = forwards.length;
      const warmup = Math.min(totalOps, (p - j - 1) * 2 + (v - 1) * n);
      let f = 0;
      let b = 0;
      for (; f < warmup; f++) ops.push(forwards[f]!);
      while (f < totalOps) { ops.push(forwards[f++]!); ops.push(backwards[b++]!); }
      while (b < totalOps) ops.push(backwards[b++]!);
      return ops;
    }
  }
}

/**
 * Walks a stage's order: the most microbatches whose activations it holds at once. A forward of
 * one chunk stores 1/v of a microbatch's activations; they are freed by the chunk's backward, or
 * by its weight-gradient pass W where the order splits the backward (ZB-H1: W multiplies the
 * stored layer inputs by the output gradients B computed, so they stay until W).
 */
export function peakMicrobatchesHeld(order: readonly ScheduledOp[], v: number): number {
  const freedBy: PipelineOpKind = order.some((op) => op.kind === 'weight') ? 'weight' : 'backward';
  let held = 0;
  let peak = 0;
  for (const op of order) {
    if (op.kind === 'forward') peak = Math.max(peak, ++held);
    else if (op.kind === freedBy) held--;
  }
  return peak / v;
}

/**
 * Microbatches whose activations stage `j` of `p` holds at its peak with `m` (whole) microbatches:
 * {@link peakMicrobatchesHeld} of {@link stageOrder} in closed form. GPipe m; 1F1B min(m, p - j);
 * ZB-H1 min(m, p) on every stage; interleaved min(m, (2(p-j-1) + (v-1)N + 1) / v), Megatron's
 * warm-up plus one, N its microbatch group size. For the interleaved schedule with m < p, which
 * cannot run, N is taken as p (the plan is a violation; its memory is still reported).
 */
export function microbatchesHeld(schedule: Schedule, j: number, p: number, v: number, m: number): number {
  switch (schedule) {
    case 'gpipe': return m;
    case '1f1b': return Math.min(m, p - j);
    case 'zb-h1': return Math.min(m, p);
    case 'interleaved': return Math.min(m, (2 * (p - j - 1) + (v - 1) * (interleavedGroupSize(m, p) ?? p) + 1) / v);
  }
}
