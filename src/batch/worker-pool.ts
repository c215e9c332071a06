/**
 * A fixed number of `worker_threads`, started once and kept for the whole batch, each running one
 * chunk of tasks at a time: a chunk goes to its worker in one message (tiny scenarios cost a
 * message each otherwise) and the worker answers each task as soon as it is done, so every result
 * is handed on as it finishes. A task's outcome is its result, or `crashed` when its worker threw
 * outside the task or exited, or `timedOut` when it ran past its budget (each task of a chunk has
 * its own budget); in both failure cases the worker is terminated, a fresh one takes its place
 * for the next chunk, and the tasks of the chunk after the failed one are handed back unrun.
 * `cancelAll` ends every running chunk (SIGINT, SIGTERM).
 */
import { Worker } from 'worker_threads';

export type TaskOutcome<R> =
  | { readonly kind: 'done'; readonly value: R }
  | { readonly kind: 'crashed'; readonly message: string }
  | { readonly kind: 'timedOut'; readonly budgetS: number }
  | { readonly kind: 'cancelled' };

/** What a worker receives: the tasks of one chunk. */
export interface ChunkMessage<T> {
  readonly taskId: number;
  readonly tasks: readonly T[];
}

/** What a worker answers, once per task of a chunk, in order. */
export interface TaskAnswer<R> {
  readonly taskId: number;
  readonly index: number;
  readonly value: R;
}

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
  /** Workers started (the first of each slot and every replacement). */
  started = 0;

  constructor(private readonly options: WorkerPoolOptions) {
    this.slots = Array.from({ length: Math.max(1, options.size) }, () => ({ worker: undefined, cancel: undefined }));
    this.idle = [...this.slots];
  }

  get size(): number {
    return this.slots.length;
  }

  /** Runs one task on the next free worker. */
  async run(task: T): Promise<TaskOutcome<R>> {
    let outcome: TaskOutcome<R> = { kind: 'cancelled' };
    await this.runChunk([task], (_, o) => { outcome = o; });
    return outcome;
  }

  /**
   * Runs `tasks` in order on the next free worker, calling `onOutcome` for each as it ends.
   * Resolves with how many tasks got an outcome other than `cancelled`: after a crash or a
   * timeout at task k (reported as its outcome), tasks k+1.. were not run; after cancelAll, the
   * tasks not done get no call.
   */
  async runChunk(tasks: readonly T[], onOutcome: (index: number, outcome: TaskOutcome<R>) => void): Promise<number> {
    if (this.closed || tasks.length === 0) return 0;
    const slot = this.idle.pop() ?? (await new Promise<Slot>((resolve) => this.waiting.push(resolve)));
    try {
      if (this.closed) return 0;
      return await this.execute(slot, tasks, onOutcome);
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

  /** Terminates every worker; resolves once all of them have exited. */
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
    this.started++;
    // Permanent listeners: an idle worker that dies is dropped, and an 'error' never goes unhandled.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (slot.worker === worker) slot.worker = undefined;
    });
    slot.worker = worker;
    return worker;
  }

  private execute(slot: Slot, tasks: readonly T[], onOutcome: (index: number, outcome: TaskOutcome<R>) => void): Promise<number> {
    const worker = slot.worker ?? this.spawn(slot);
    const taskId = this.nextTaskId++;
    const budgetMs = this.options.budgetS * 1000;
    return new Promise((resolve) => {
      let settled = false;
      let answered = 0;
      let timer: NodeJS.Timeout | undefined;
      const finish = (replaceWorker: boolean, cancelled: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        slot.cancel = undefined;
        if (replaceWorker) {
          if (slot.worker === worker) slot.worker = undefined;
          if (!cancelled) this.replacements++;
          void worker.terminate();
        }
        resolve(answered);
      };
      /** The task in progress fails with `outcome`; the worker goes. */
      const fail = (outcome: TaskOutcome<R>): void => {
        if (settled) return;
        onOutcome(answered, outcome);
        answered++;
        finish(true, false);
      };
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => fail({ kind: 'timedOut', budgetS: this.options.budgetS }), budgetMs);
      };
      const onMessage = (message: TaskAnswer<R>): void => {
        if (settled || message.taskId !== taskId || message.index !== answered) return;
        answered++;
        onOutcome(message.index, { kind: 'done', value: message.value });
        if (answered === tasks.length) finish(false, false);
        else arm();
      };
      const onError = (error: Error): void => fail({ kind: 'crashed', message: `worker crashed: ${error.message}` });
      const onExit = (code: number): void => fail({ kind: 'crashed', message: `worker exited with code ${code} during the solve` });
      slot.cancel = () => finish(true, true);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      arm();
      const message: ChunkMessage<T> = { taskId, tasks };
      worker.postMessage(message);
    });
  }
}
