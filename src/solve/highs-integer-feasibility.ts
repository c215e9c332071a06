/**
 * The ring-pattern bound's integer feasibility questions (formulation/hosting-integrality.ts)
 * answered by HiGHS on the calling thread: the search asks them inside its synchronous branch and
 * bound, and HiGHS's solves are synchronous and stop at their time limit (the planner's MIPs run in
 * worker threads instead, hosted by highs-worker-backend.ts).
 */
import type { IntegerFeasibility } from '../formulation/hosting-integrality';
import { maxViolation } from '../formulation/mip';
import { sharedHighsModule } from './highs-worker-backend';
import { solveMipWithHighs, toHighsArrays } from './highs-solve';

/**
 * Feasibility by a loaded HiGHS instance: 'infeasible' only on HiGHS's proof, 'feasible' only for a
 * solution that satisfies every row of the program, 'unknown' otherwise (time limit reached, or any
 * failure of the instance, after which it is not asked again). The linear relaxation first: an
 * infeasible relaxation is a proof, and it settles most of the ring-pattern bound's questions in a
 * tenth of the time of the integer program (measured on the 4-site 405B planner-scaling row's 268:
 * 252 of its 262 infeasible ones, 90 ms for all 268 against 970-1,420 ms as integer programs).
 */
/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- the HiGHS instance is untyped. */
export function integerFeasibilityWith(highs: any, onFailure?: () => void): IntegerFeasibility {
  let broken = false;
  return (mip, timeLimitS) => {
    if (broken) return 'unknown';
    try {
      const endMs = Date.now() + timeLimitS * 1000;
      const model = toHighsArrays(mip);
      for (const asked of [{ ...model, integrality: new Int32Array(model.numCols) }, model]) {
        const leftS = (endMs - Date.now()) / 1000;
        if (leftS <= 0) return 'unknown';
        const answer = solveMipWithHighs(highs, { model: asked, timeLimitS: leftS, relativeGap: 1 });
        if (answer.status === 'infeasible') return 'infeasible';
        if (answer.values && maxViolation(mip, answer.values) <= 1e-6) return 'feasible';
      }
      return 'unknown';
    } catch {
      broken = true; // an aborted WebAssembly instance stays unusable
      onFailure?.();
      return 'unknown';
    }
  };
}

let onThisThread: Promise<IntegerFeasibility | undefined> | undefined;

/**
 * A HiGHS instance on this thread (Node), instantiated from the module the worker backends compile
 * and kept for the process; undefined when it cannot be loaded (the whole-replica test is then off
 * for that call). An instance that failed, or a load that did not succeed, is not kept: the next
 * caller loads a fresh one.
 */
export function integerFeasibilityOnThisThread(): Promise<IntegerFeasibility | undefined> {
  const forget = () => { onThisThread = undefined; };
  onThisThread ??= (async () => {
    try {
      const compiled = await sharedHighsModule();
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const loader = require('highs') as (settings?: object) => Promise<unknown>;
      const highs = await loader(compiled === undefined ? undefined : {
        instantiateWasm: (imports: object, receive: (instance: unknown) => void) => {
          const wasm = (globalThis as unknown as { WebAssembly: { instantiate(module: object, imports: object): Promise<unknown> } }).WebAssembly;
          void wasm.instantiate(compiled, imports).then(receive);
          return {};
        },
      });
      return integerFeasibilityWith(highs, forget);
    } catch {
      forget();
      return undefined;
    }
  })();
  return onThisThread;
}
