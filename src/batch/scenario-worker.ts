/**
 * Entry point of a batch worker thread: solves the scenarios it is sent (a chunk of neighbouring
 * sweep points per message), one at a time, answering each as soon as it is done, with one chain
 * of MIP backends kept for the worker's life (HiGHS loaded and compiled once, not once per
 * scenario), and the plans of the last scenario as seeds for the next when they are sweep
 * neighbours (neighbour-seeds.ts). Anything a solve throws becomes an `invalid` or `error` outcome; a crash
 * that escapes (or the test hook below) ends the thread, and the pool records it and replaces it.
 */
import { parentPort } from 'worker_threads';
import { applyFactorValues } from '../calibration/apply-profile';
import { setActiveIntervalModel } from '../model/prediction-interval';
import { parseScenario } from '../model/scenario';
import { ScenarioValidationError } from '../model/validation-error';
import type { MipBackend } from '../solve/mip-backend';
import { defaultBackends, plan } from '../solve/plan';
import { baselinePlanOutcome } from './baseline-plan-outcome';
import { NeighbourSeeds } from './neighbour-seeds';
import { failedOutcome, outcomeFromPlanResult, type SolveOutcome } from './record';
import type { ChunkMessage, TaskAnswer } from './worker-pool';
import { TEST_CRASH_ENV, TEST_CRASH_MARKER, type SolveTask } from './solve-task';

let backends: MipBackend[] | undefined;
const neighbours = new NeighbourSeeds();

async function solve(task: SolveTask): Promise<SolveOutcome> {
  let scenario;
  try {
    scenario = parseScenario(task.spec);
  } catch (error) {
    if (error instanceof ScenarioValidationError) return failedOutcome('invalid', error.message.split('\n').join('; '));
    throw error;
  }
  injectTestCrash(scenario.name);
  backends ??= defaultBackends();
  try {
    // A profile's factors are set for this solve only (the worker solves one scenario at a time).
    const restore = task.calibration ? applyFactorValues(task.calibration) : undefined;
    const restoreInterval = task.intervalModel ? setActiveIntervalModel(task.intervalModel) : undefined;
    try {
      const seeds = neighbours.for(task.spec);
      const result = await plan(scenario, { timeLimitS: task.timeLimitS, gap: task.gap, baselines: task.baselines, backends, ...(seeds ? { seeds } : {}) });
      neighbours.remember(task.spec, result);
      const outcome = outcomeFromPlanResult(result);
      return task.baselinePlan ? { ...outcome, baselinePlan: baselinePlanOutcome(scenario, task.baselinePlan, result) } : outcome;
    } finally {
      restoreInterval?.();
      restore?.();
    }
  } catch (error) {
    neighbours.forget();
    // A backend left in a bad state is not reused.
    const old = backends;
    backends = undefined;
    await Promise.allSettled(old.map((b) => b.close()));
    return failedOutcome('error', error instanceof Error ? error.message : String(error));
  }
}

/**
 * Test-only hook: when the environment variable SCALEACROSS_TEST_CRASH is set and the scenario
 * name contains "[test-crash]", the worker fails the way the variable says: `exit` ends the
 * thread with process.exit, `throw` throws outside the solve, `hang` spins forever (a timeout).
 * Without the variable the marker does nothing.
 */
function injectTestCrash(name: string): void {
  const mode = process.env[TEST_CRASH_ENV];
  if (!mode || !name.includes(TEST_CRASH_MARKER)) return;
  if (mode === 'exit') process.exit(70);
  if (mode === 'hang') for (;;) { /* spin until terminated */ }
  setImmediate(() => {
    throw new Error(`injected crash (${TEST_CRASH_ENV}=${mode})`);
  });
  // Never settles: the uncaught throw above ends the worker first.
  throw new HangUntilCrash();
}

class HangUntilCrash extends Error {}

/** Solves a chunk's tasks in order, answering each as soon as it is done. */
async function solveChunk(message: ChunkMessage<SolveTask>): Promise<void> {
  for (let index = 0; index < message.tasks.length; index++) {
    let value: SolveOutcome;
    try {
      value = await solve(message.tasks[index]!);
    } catch (error) {
      if (error instanceof HangUntilCrash) return;
      value = failedOutcome('error', error instanceof Error ? error.message : String(error));
    }
    const answer: TaskAnswer<SolveOutcome> = { taskId: message.taskId, index, value };
    parentPort!.postMessage(answer);
  }
}

parentPort?.on('message', (message: ChunkMessage<SolveTask>) => {
  void solveChunk(message);
});
