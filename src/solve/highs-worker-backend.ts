/**
 * HiGHS in a worker thread: solves block the thread they run on, and a worker can be killed
 * mid-solve (worker.terminate()), which gives a hard time limit. `fresh` makes a new worker
 * (a new HiGHS instance) for every solve: the first fallback when an instance misbehaves.
 */
import { Worker } from 'worker_threads';
import type { Mip } from '../formulation/mip';
import { solveMipWithHighs } from './highs-solve';
import { BackendFault, type MipBackend, type MipSolution, type MipSolveOptions } from './mip-backend';

/** Seconds a worker may overrun its HiGHS time limit before it is killed. */
const HARD_LIMIT_GRACE_S = 3;

const workerSource = (highsPath: string): string => `
const { parentPort } = require('worker_threads');
const solveMipWithHighs = ${solveMipWithHighs.toString()};
const ready = require(${JSON.stringify(highsPath)})();
parentPort.on('message', async (message) => {
  try {
    const highs = await ready;
    const result = solveMipWithHighs(highs, message.request, (incumbent, bound) =>
      parentPort.postMessage({ type: 'progress', incumbent, bound }));
    parentPort.postMessage({ type: 'result', result });
  } catch (error) {
    parentPort.postMessage({ type: 'error', message: String((error && error.message) || error) });
  }
});`;

export class HighsWorkerBackend implements MipBackend {
  readonly name: string;
  private worker: Worker | undefined;

  constructor(private readonly fresh = false) {
    this.name = fresh ? 'highs (fresh instance)' : 'highs';
  }

  async solve(mip: Mip, options: MipSolveOptions): Promise<MipSolution> {
    const worker = this.fresh || !this.worker ? this.spawn() : this.worker;
    try {
      return await this.run(worker, mip, options);
    } finally {
      if (this.fresh) await worker.terminate();
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private spawn(): Worker {
    const worker = new Worker(workerSource(require.resolve('highs')), { eval: true });
    worker.unref();
    if (!this.fresh) this.worker = worker;
    return worker;
  }

  private run(worker: Worker, mip: Mip, options: MipSolveOptions): Promise<MipSolution> {
    return new Promise<MipSolution>((resolve, reject) => {
      const fail = (reason: string) => {
        cleanup();
        if (worker === this.worker) this.worker = undefined;
        void worker.terminate();
        reject(new BackendFault(this.name, reason));
      };
      const timer = setTimeout(() => fail(`no answer within ${options.timeLimitS + HARD_LIMIT_GRACE_S} s; worker killed`),
        (options.timeLimitS + HARD_LIMIT_GRACE_S) * 1000);
      const onMessage = (message: { type: string; result?: MipSolution; message?: string; incumbent?: number; bound?: number }) => {
        if (message.type === 'progress') { options.onProgress?.({ incumbent: message.incumbent!, bound: message.bound! }); return; }
        cleanup();
        if (message.type === 'result') resolve(message.result!);
        else fail(`solver error: ${message.message}`);
      };
      const onError = (error: Error) => fail(`worker died: ${error.message}`);
      const onExit = (code: number) => fail(`worker exited with code ${code}`);
      const cleanup = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ request: {
        mip, timeLimitS: options.timeLimitS, relativeGap: options.relativeGap, start: options.start, stopWhenBoundAtLeast: options.stopWhenBoundAtLeast,
      } });
    });
  }
}
