/**
 * An independent reference for pipeline timing: a discrete-event simulation of the GPipe and
 * 1F1B schedules op by op (each stage runs one op at a time, in its schedule's order, as soon
 * as its input has arrived). Backward takes `backwardS[j]`, forward `forwardS[j]`.
 */
export function simulatePipeline(forwardS: readonly number[], backwardS: readonly number[], microbatches: number, schedule: 'gpipe' | '1f1b'): number {
  const p = forwardS.length;
  const m = microbatches;
  // Per stage: the order of ops, ('F' | 'B', microbatch).
  const orders = forwardS.map((_, j) => {
    const ops: { kind: 'F' | 'B'; mb: number }[] = [];
    if (schedule === 'gpipe') {
      for (let i = 0; i < m; i++) ops.push({ kind: 'F', mb: i });
      for (let i = 0; i < m; i++) ops.push({ kind: 'B', mb: i });
      return ops;
    }
    const warmup = Math.min(m, p - j - 1);
    let f = 0;
    let b = 0;
    for (; f < warmup; f++) ops.push({ kind: 'F', mb: f });
    while (f < m) { ops.push({ kind: 'F', mb: f++ }); ops.push({ kind: 'B', mb: b++ }); }
    while (b < m) ops.push({ kind: 'B', mb: b++ });
    return ops;
  });
  const fDone = forwardS.map(() => new Array<number>(m).fill(NaN));
  const bDone = forwardS.map(() => new Array<number>(m).fill(NaN));
  const next = forwardS.map(() => 0);
  const free = forwardS.map(() => 0);
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (let j = 0; j < p; j++) {
      while (next[j]! < orders[j]!.length) {
        const op = orders[j]![next[j]!]!;
        const ready = op.kind === 'F'
          ? (j === 0 ? 0 : fDone[j - 1]![op.mb]!)
          : (j === p - 1 ? fDone[j]![op.mb]! : bDone[j + 1]![op.mb]!);
        if (Number.isNaN(ready)) break;
        const start = Math.max(free[j]!, ready);
        const end = start + (op.kind === 'F' ? forwardS[j]! : backwardS[j]!);
        (op.kind === 'F' ? fDone : bDone)[j]![op.mb] = end;
        free[j] = end;
        next[j]! += 1;
        progressed = true;
      }
    }
  }
  return Math.max(...bDone[0]!);
}
