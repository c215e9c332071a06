/**
 * A fixed number of `worker_threads` running one task each at a time. A task's outcome is
 * its result, or `crashed` when its worker threw outside the task or exited, or `timedOut`
 * when it ran past its budget; in both failure cases the worker is terminated and a fresh one
 * takes its place for the next task. `cancelAll` ends every running task (SIGINT).
 */
import { Worker } from 'worker_threads';

export type TaskOutcome<R> =
  | { readonly kind: 'done'; readonly value: R }
  | { readonly kind: 'crashed'; readonly message: string }
  | { readonly kind: 'timedOut'; readonly budgetS: number }
  | { readonly kind: 'cancelled' };

interface Slot {
  worker: Worker | undefined;
  cancel: (() => void) | undefined;
}

export interface WorkerPoolOptions {
  readonly size: number;
  /** Compiled JavaScript file run by each worker. */
  readonly workerFile: string;
  /** Seconds a task may run before its worker is terminated. */
  readonly budgetS: number;
}

export class WorkerPool<T, R> {
  private readonly slots: Slot[];
  private readonly idle: Slot[];
  private readonly waiting: ((slot: Slot) => void)[] = [];
  private nextTaskId = 0;
  private closed = false;
  /** Workers replaced after a crash or a timeout. */
  replacements = 0;

  constructor(private readonly options: WorkerPoolOptions) {
    this.slots = Array.from({ length: Math.max(1, options.size) }, () => ({ worker: undefined, cancel: undefined }));
    this.idle = [...this.slots];
  }

  get size(): number {
    return this.slots.length;
  }

  /** Runs one task on the next free worker. */
  async run(task: T): Promise<TaskOutcome<R>> {
    if (this.closed) return { kind: 'cancelled' };
    const slot = this.idle.pop() ?? (await new Promise<Slot>((resolve) => this.waiting.push(resolve)));
    try {
      if (this.closed) return { kind: 'cancelled' };
      return await this.execute(slot, task);
    } finally {
      const next = this.waiting.shift();
      if (next) next(slot);
      else this.idle.push(slot);
    }
  }

  /** Ends every running task (`cancelled`) and refuses new ones; then close(). */
  cancelAll(): void {
    this.closed = true;
    for (const slot of this.slots) slot.cancel?.();
    for (const resolve of this.waiting.splice(0)) resolve({ worker: undefined, cancel: undefined });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map(async (slot) => {
      const worker = slot.worker;
      slot.worker = undefined;
      if (worker) await worker.terminate();
    }));
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(this.options.workerFile);
    // Permanent listeners: an idle worker that dies is dropped, and an 'error' never goes unhandled.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (slot.worker === worker) slot.worker = undefined;
    });
    slot.worker = worker;
    return worker;
  }

  private execute(slot: Slot, task: T): Promise<TaskOutcome<R>> {
    const worker = slot.worker ?? this.spawn(slot);
    const taskId = this.nextTaskId++;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: TaskOutcome<R>, replaceWorker: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        slot.cancel = undefined;
        if (replaceWorker) {
          if (slot.worker === worker) slot.worker = undefined;
          if (outcome.kind !== 'cancelled') this.replacements++;
          void worker.terminate();
        }
        resolve(outcome);
      };
      const onMessage = (message: { taskId: number; value: R }): void => {
        if (message.taskId === taskId) finish({ kind: 'done', value: message.value }, false);
      };
      const onError = (error: Error): void => finish({ kind: 'crashed', message: `worker crashed: ${error.message}` }, true);
      const onExit = (code: number): void => finish({ kind: 'crashed', message: `worker exited with code ${code} during the solve` }, true);
      const timer = setTimeout(() => finish({ kind: 'timedOut', budgetS: this.options.budgetS }, true), this.options.budgetS * 1000);
      slot.cancel = () => finish({ kind: 'cancelled' }, true);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ taskId, task });
    });
  }
}
