/**
 * The pipeline schedules' op order per stage (GPipe, 1F1B, Megatron's interleaved 1F1B, ZB-H1,
 * torch's interleaved zero-bubble, ZBV, DualPipeV and the bidirectional DualPipe)
 * and the microbatches whose activations a stage holds at its peak under that order. One
 * definition for both the op-by-op simulation (pipeline-timeline.ts) and memory (memory.ts):
 * the closed form {@link microbatchesHeld} equals the walk of {@link stageOrder} by
 * {@link peakMicrobatchesHeld} (test/schedule-order.test.ts; docs/cost-model.md §5-6). Pure.
 */
import { interleavedGroupSize, zeroBubbleRoundSize } from './pipeline-schedule-rules';
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
  const W = (microbatch: number, chunk = 0): ScheduledOp => ({ kind: 'weight', chunk, microbatch });
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
    case 'interleaved-zb': return interleavedZeroBubbleOrder(j, p, v, m);
    case 'zbv': return zbvOrder(j, p, m);
    case 'dualpipev': return dualPipeVOrder(j, p, m);
    case 'dualpipe': return dualPipeOrder(j, p, m);
  }
}

/**
 * torchtitan's InterleavedZeroBubble (torch.distributed.pipelining ScheduleInterleavedZeroBubble,
 * the ZB1P schedule of Qi et al. 2024 on v chunks): rounds of N = zeroBubbleRoundSize(m, p)
 * microbatches through chunk 0..v-1 forward and v-1..0 backward, as Megatron's interleaving;
 * warm-up (v - 1)N + p - j - 1 forwards (one per hop, not two: the weight-gradient passes fill
 * the rest), then one forward and one input-gradient pass B in turn, each B after stage j's first
 * j followed by the oldest pending weight-gradient pass W; the last j Ws close the stage.
 * Throws when the rounds do not divide m, which torch refuses.
 */
function interleavedZeroBubbleOrder(j: number, p: number, v: number, m: number): ScheduledOp[] {
  const n = zeroBubbleRoundSize(m, p);
  if (n === undefined) throw new Error(`the interleaved zero-bubble schedule needs m divisible by its max(1, floor(m / p)) rounds, got m = ${m}, p = ${p}`);
  const total = v * m;
  const warmup = Math.min(total, (v - 1) * n + p - j - 1);
  const forwardChunk = (step: number) => Math.floor(step / n) % v;
  const backwardChunk = (k: number) => v - 1 - (Math.floor(k / n) % v);
  const nextForward = new Array<number>(v).fill(0);
  const nextBackward = new Array<number>(v).fill(0);
  const ops: ScheduledOp[] = [];
  const pending: ScheduledOp[] = [];
  const forward = (step: number) => { const c = forwardChunk(step); ops.push({ kind: 'forward', chunk: c, microbatch: nextForward[c]!++ }); };
  const backward = (k: number) => {
    const c = backwardChunk(k);
    const microbatch = nextBackward[c]!++;
    ops.push({ kind: 'backward', chunk: c, microbatch });
    pending.push({ kind: 'weight', chunk: c, microbatch });
    if (k >= j) ops.push(pending.shift()!);
  };
  for (let step = 0; step < warmup; step++) forward(step);
  for (let k = 0; k < total; k++) {
    if (warmup + k < total) forward(warmup + k);
    backward(k);
  }
  ops.push(...pending);
  return ops;
}

/**
 * torchtitan's ZBVZeroBubble (torch.distributed.pipelining ScheduleZBVZeroBubble; Qi et al. 2024,
 * ZB-V): chunk 0 of GPU j is virtual stage j, chunk 1 virtual stage 2p - 1 - j. Warm-up 2(p - j) - 1
 * forwards of chunk 0, j pairs (chunk 1, chunk 0), p - j rounds of chunk 1's F B W; steady state
 * F0 B0 W0 F1 B1 W1; cool-down j pairs B0 B1, p - j pairs B0 W0, then the remaining Ws of chunk 1
 * and chunk 0. torch plans it for max(m, 2p - 1) microbatches and drops the ops of those past m.
 */
function zbvOrder(j: number, p: number, m: number): ScheduledOp[] {
  const n = Math.max(m, 2 * p - 1);
  const ops: ScheduledOp[] = [];
  const count = { f0: 0, f1: 0, b0: 0, b1: 0, w0: 0, w1: 0 };
  const F = (chunk: 0 | 1) => ops.push({ kind: 'forward', chunk, microbatch: chunk === 0 ? count.f0++ : count.f1++ });
  const B = (chunk: 0 | 1) => ops.push({ kind: 'backward', chunk, microbatch: chunk === 0 ? count.b0++ : count.b1++ });
  const W = (chunk: 0 | 1) => ops.push({ kind: 'weight', chunk, microbatch: chunk === 0 ? count.w0++ : count.w1++ });
  for (let i = 0; i < 2 * (p - j) - 1; i++) F(0);
  for (let i = 0; i < j; i++) { F(1); F(0); }
  for (let i = 0; i < p - j; i++) { F(1); B(1); W(1); }
  while (count.f1 < count.f0 || count.f0 < n) {
    if (count.f0 < n) F(0);
    B(0); W(0);
    F(1); B(1); W(1);
  }
  for (let i = 0; i < j; i++) { B(0); B(1); }
  for (let i = 0; i < p - j; i++) { B(0); W(0); }
  while (count.w1 < count.b1) W(1);
  while (count.w0 < count.b0) W(0);
  return ops.filter((op) => op.microbatch < m);
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
    case 'zbv': return Math.min(m, p);
    case 'dualpipev': return Math.min(m, p + 0.5);
    case 'dualpipe': return Math.min(m, (p + 1) / 2);
    case 'interleaved-zb': return Math.min(m, ((v - 1) * (zeroBubbleRoundSize(m, p) ?? p) + p) / v);
  }
}

/**
 * DualPipeV (DeepSeek's DualPipe repository, `dualpipev.py`; torch.distributed.pipelining
 * ScheduleDualPipeV; torchtitan `DualPipeV`): DualPipe cut in half, ZBV's V fed from one end, in
 * eight steps. 1: 2(p - j - 1) F0; 2: j + 1 pairs F0 F1; 3: p - j - 1 rounds B1 (input gradient
 * only), the oldest queued W, F1; 4 (main): m - 2p + j + 1 rounds F0 with a full B1, F1 with a
 * full B0 (the pairs DualPipe overlaps, here one after the other); 5: p - j - 1 rounds full B1, F1
 * with full B0; 6: j + 1 pairs B1 B0, from the middle pair on input-gradient only (their Ws
 * queued; the switch point depends on j's parity); 7: p - j - 1 rounds W, B0 (input gradient);
 * 8: the j + 1 queued Ws. A full backward is B followed at once by its W. Needs m >= 2p (torch
 * refuses fewer microbatches than virtual stages); throws otherwise.
 */
function dualPipeVOrder(j: number, p: number, m: number): ScheduledOp[] {
  if (m < 2 * p) throw new Error(`DualPipeV needs at least 2p = ${2 * p} microbatches, got ${m}`);
  const ops: ScheduledOp[] = [];
  const forwards = [0, 0];
  const backwards = [0, 0];
  const queued: ScheduledOp[] = [];
  const F = (chunk: 0 | 1) => ops.push({ kind: 'forward', chunk, microbatch: forwards[chunk]!++ });
  const B = (chunk: 0 | 1, deferWeight: boolean) => {
    const microbatch = backwards[chunk]!++;
    ops.push({ kind: 'backward', chunk, microbatch });
    const weight: ScheduledOp = { kind: 'weight', chunk, microbatch };
    if (deferWeight) queued.push(weight); else ops.push(weight);
  };
  const W = () => { const weight = queued.shift(); if (weight) ops.push(weight); };
  for (let i = 0; i < 2 * (p - j - 1); i++) F(0);
  for (let i = 0; i <= j; i++) { F(0); F(1); }
  for (let i = 0; i < p - j - 1; i++) { B(1, true); W(); F(1); }
  for (let i = 0; i < m - 2 * p + j + 1; i++) { F(0); B(1, false); F(1); B(0, false); }
  for (let i = 0; i < p - j - 1; i++) { B(1, false); F(1); B(0, false); }
  let defer = false;
  const middle = Math.floor((j + 1) / 2);
  for (let i = 0; i <= j; i++) {
    if (i === middle && j % 2 === 1) defer = true;
    B(1, defer);
    if (i === middle && j % 2 === 0) defer = true;
    B(0, defer);
  }
  for (let i = 0; i < p - j - 1; i++) { W(); B(0, true); }
  for (let i = 0; i <= j; i++) W();
  return ops;
}

/**
 * The bidirectional DualPipe (deepseek-ai/DualPipe `dualpipe.py`, `DualPipe.step`; DeepSeek-V3
 * report §3.2.1): p even, m even and at least 2p (its asserts), m / 2 microbatches entering at
 * each end. GPU j's "phase 0" is the direction it is nearer the start of (direction 0 on the first
 * half of the GPUs, direction 1 on the second) and its eight steps are DualPipeV's with
 * `half_rank` h = min(j, p - 1 - j) for the stage, p / 2 for the stages and m / 2 microbatches
 * (step 1: 2(p/2 - h - 1) F0; step 4: m/2 - p + h + 1 rounds; ...), so the order is
 * {@link dualPipeVOrder}'s with its chunks read as phases; chunk c here is direction c
 * (schedule-chain.ts), so the second half of the GPUs swaps them. Throws for an odd p, an odd m
 * or m < 2p, which `dualpipe.py` refuses.
 */
function dualPipeOrder(j: number, p: number, m: number): ScheduledOp[] {
  if (p % 2 !== 0) throw new Error(`DualPipe needs an even number of stages, got ${p}`);
  if (m % 2 !== 0 || m < 2 * p) throw new Error(`DualPipe needs an even number of microbatches, at least 2p = ${2 * p}, got ${m}`);
  const half = Math.min(j, p - 1 - j);
  const order = dualPipeVOrder(half, p / 2, m / 2);
  return j < p / 2 ? order : order.map((op) => ({ ...op, chunk: 1 - op.chunk }));
}
