/**
 * HiGHS in a worker thread: solves block the thread they run on, and a worker can be killed
 * mid-solve (worker.terminate()), which gives a hard time limit. `fresh` makes a new worker
 * (a new HiGHS instance) for every solve: the first fallback when an instance misbehaves.
 */
import { readFile } from 'fs/promises';
import { dirname, join } from 'path';
import { Worker } from 'worker_threads';
import { MipBuilder, type Mip } from '../formulation/mip';
import { arrayBuffersOf, solveMipWithHighs, toHighsArrays } from './highs-solve';
import { BackendFault, type MipBackend, type MipSolution, type MipSolveOptions } from './mip-backend';

/** Seconds a worker may overrun its HiGHS time limit before it is killed. */
const HARD_LIMIT_GRACE_S = 3;

const workerSource = (highsPath: string): string => `
const { parentPort, workerData } = require('worker_threads');
const solveMipWithHighs = ${solveMipWithHighs.toString()};
// HiGHS from the process's shared compiled module when the planner sends one (compiled and
// tiered up once for every worker), else compiled here.
let ready;
// Set to 1 by the planner to stop the solve in progress (read in HiGHS's interrupt callback).
const stopFlag = new Int32Array(workerData.stop);
parentPort.on('message', async (message) => {
  if (message.type === 'module') {
    // The loader takes a compiled module through Emscripten's instantiateWasm hook.
    ready = ready || require(${JSON.stringify(highsPath)})({
      instantiateWasm: (imports, receive) => { WebAssembly.instantiate(message.module, imports).then((instance) => receive(instance)); return {}; },
    });
    return;
  }
  try {
    ready = ready || require(${JSON.stringify(highsPath)})();
    const highs = await ready;
    const result = solveMipWithHighs(highs, message.request, (incumbent, bound) =>
      message.warmUp || parentPort.postMessage({ type: 'progress', incumbent, bound }), () => Atomics.load(stopFlag, 0) === 1);
    parentPort.postMessage({ type: 'result', result, warmUp: message.warmUp });
  } catch (error) {
    parentPort.postMessage({ type: 'error', message: String((error && error.message) || error), warmUp: message.warmUp });
  }
});`;

/**
 * HiGHS's WebAssembly compiled once per process, held here and instantiated by every worker:
 * V8 shares a module's compiled code, optimising tier-up included, with every thread that
 * instantiates it. Workers alive at the same time shared it before too (V8 caches a module by its
 * bytes while some thread holds it); what the held module adds is a worker started after the others
 * were terminated: the fresh-instance fallback, which starts a worker per solve, or a planner
 * process that closes its workers and later makes new ones. Measured on one 83-column MIP of the
 * 3-site bench row, six solves per worker, three workers one after another, each closed before the
 * next: first solve 0.7-1.2 s for the first worker, 0.19-0.26 s for the later ones (0.9-0.95 s each
 * without the held module).
 */
let sharedModule: Promise<CompiledWasm | undefined> | undefined;
/** A WebAssembly.Module (the project's TypeScript lib has no WebAssembly declarations). */
type CompiledWasm = object;
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledWasm> } }).WebAssembly;
export function sharedHighsModule(): Promise<CompiledWasm | undefined> {
  sharedModule ??= readFile(join(dirname(require.resolve('highs')), 'highs.wasm'))
    .then((bytes) => wasm.compile(bytes))
    .catch(() => undefined); // each worker then compiles its own
  return sharedModule;
}

export class HighsWorkerBackend implements MipBackend {
  readonly name: string;
  private worker: Worker | undefined;

  constructor(private readonly fresh = false) {
    this.name = fresh ? 'highs (fresh instance)' : 'highs';
  }

  /**
   * Starts the worker and runs a throw-away MIP, so that loading HiGHS and V8's optimising
   * compilation of its WebAssembly (about 1 s on the first real solve, measured) overlap with
   * the planner's own set-up instead of the first solve.
   */
  warmUp(): void {
    if (this.fresh || this.worker) return;
    const worker = this.spawn();
    const model = toHighsArrays(warmUpMip());
    this.postAfterModule(worker, { request: { model, timeLimitS: 2, relativeGap: 0 }, warmUp: true }, arrayBuffersOf(model));
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

  /** Each worker's stop flag, shared with its thread. */
  private readonly stopFlags = new WeakMap<Worker, Int32Array>();

  /** Workers whose module message has not gone yet: their requests wait for it. */
  private readonly modulePending = new WeakMap<Worker, Promise<void>>();

  /**
   * Posts to `worker` after its module message: synchronously once that has gone, so that a
   * caller's synchronous work after `solve()` overlaps the solve (the planner polishes placements
   * on the main thread meanwhile).
   */
  private postAfterModule(worker: Worker, message: unknown, transfer: ArrayBuffer[]): void {
    const pending = this.modulePending.get(worker);
    if (pending) void pending.then(() => worker.postMessage(message, transfer));
    else worker.postMessage(message, transfer);
  }

  private spawn(): Worker {
    const stop = new SharedArrayBuffer(4);
    const worker = new Worker(workerSource(require.resolve('highs')), { eval: true, workerData: { stop } });
    this.stopFlags.set(worker, new Int32Array(stop));
    this.modulePending.set(worker, sharedHighsModule().then((module) => {
      if (module) worker.postMessage({ type: 'module', module });
      this.modulePending.delete(worker);
    }));
    worker.unref();
    if (!this.fresh) this.worker = worker;
    return worker;
  }

  private run(worker: Worker, mip: Mip, options: MipSolveOptions): Promise<MipSolution> {
    const stopFlag = this.stopFlags.get(worker)!;
    Atomics.store(stopFlag, 0, 0);
    const stop = () => Atomics.store(stopFlag, 0, 1);
    return new Promise<MipSolution>((resolve, reject) => {
      const fail = (reason: string) => {
        cleanup();
        if (worker === this.worker) this.worker = undefined;
        void worker.terminate();
        reject(new BackendFault(this.name, reason));
      };
      const timer = setTimeout(() => fail(`no answer within ${options.timeLimitS + HARD_LIMIT_GRACE_S} s; worker killed`),
        (options.timeLimitS + HARD_LIMIT_GRACE_S) * 1000);
      const onMessage = (message: { type: string; result?: MipSolution; message?: string; incumbent?: number; bound?: number; warmUp?: boolean }) => {
        if (message.warmUp) return;
        if (message.type === 'progress') { options.onProgress?.({ incumbent: message.incumbent!, bound: message.bound! }); return; }
        cleanup();
        if (message.type === 'result') resolve(message.result!);
        else fail(`solver error: ${message.message}`);
      };
      const onError = (error: Error) => fail(`worker died: ${error.message}`);
      const onExit = (code: number) => fail(`worker exited with code ${code}`);
      const cleanup = () => {
        options.abort?.removeEventListener('abort', stop);
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      if (options.abort?.aborted) stop();
      else options.abort?.addEventListener('abort', stop);
      // Transferred, not cloned: the arrays are built for this message alone.
      const model = toHighsArrays(mip);
      const request = { model, timeLimitS: options.timeLimitS, relativeGap: options.relativeGap, stopWhenBoundAtLeast: options.stopWhenBoundAtLeast, randomSeed: options.randomSeed, objectiveCutoff: options.objectiveCutoff, objectiveTarget: options.objectiveTarget };
      this.postAfterModule(worker, { request }, arrayBuffersOf(model));
    });
  }
}

/** A small generalised assignment MIP (60 binaries) that exercises HiGHS's MIP machinery. */
function warmUpMip(): Mip {
  const b = new MipBuilder();
  const jobs = 12;
  const machines = 5;
  const x: number[][] = [];
  for (let j = 0; j < jobs; j++) {
    x.push(Array.from({ length: machines }, (_, m) => b.addColumn(`x${j}_${m}`, 0, 1, { integer: true, cost: ((j * 7 + m * 11) % 13) + 1 })));
    b.addRow(`assign${j}`, x[j]!.map((c) => [c, 1] as const), 1, 1);
  }
  for (let m = 0; m < machines; m++) {
    b.addRow(`capacity${m}`, x.map((row, j) => [row[m]!, ((j * 5 + m * 3) % 7) + 2] as const), -Infinity, 14);
  }
  return b.build();
}
