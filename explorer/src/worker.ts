/**
 * The explorer's planning worker: validates a scenario spec, plans it with the library and HiGHS
 * on this thread, and posts progress and what the page shows. The page cancels a solve by
 * terminating the worker, so each worker serves one request.
 */
import highsLoader from 'highs';
import { parseSpecPath, setAtPath } from '../../src/batch/spec-path';
import { applyCalibrationProfile } from '../../src/calibration/apply-profile';
import type { CalibrationProfile } from '../../src/model/calibration-profile-schema';
import { diagnose } from '../../src/diagnose/diagnose';
import { modelFromHfConfig } from '../../src/model/hf-config';
import { parseScenario, type Scenario } from '../../src/model/scenario';
import { ScenarioValidationError } from '../../src/model/validation-error';
import type { IntegerFeasibility } from '../../src/formulation/hosting-integrality';
import { integerFeasibilityWith } from '../../src/solve/highs-integer-feasibility';
import { LpSolverBackend } from '../../src/solve/lp-solver-backend';
import type { MipBackend } from '../../src/solve/mip-backend';
import { plan } from '../../src/solve/plan';
import { HighsThreadBackend } from './highs-thread-backend';
import { diagnosisView, planShape, planView } from './plan-view';
import type { FromWorker, ImportModelRequest, PlanRequest, SweepRequest, ToWorker } from './protocol';

const scope = self as unknown as { postMessage(message: FromWorker): void; onmessage: ((event: MessageEvent<ToWorker>) => void) | null };
const post = (message: FromWorker) => scope.postMessage(message);

/**
 * HiGHS instantiated from the page's compiled module (compiled once, shared by every worker): the
 * MIP backends, and the ring-pattern bound's whole-replica checks on the same instance.
 */
async function backendsFor(module: WebAssembly.Module): Promise<{ backends: MipBackend[]; concurrentBackends: MipBackend[]; integerFeasibility: IntegerFeasibility }> {
  const highs = await highsLoader({
    instantiateWasm: (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) => {
      void WebAssembly.instantiate(module, imports).then(receive);
      return {};
    },
  } as unknown as Parameters<typeof highsLoader>[0]);
  return { backends: [new HighsThreadBackend(highs), new LpSolverBackend()], concurrentBackends: [], integerFeasibility: integerFeasibilityWith(highs) };
}

/** The scenario, or undefined after posting its validation issues. */
function validate(spec: unknown): Scenario | undefined {
  try {
    return parseScenario(spec);
  } catch (error) {
    if (!(error instanceof ScenarioValidationError)) throw error;
    post({ type: 'invalid', issues: error.issues });
    return undefined;
  }
}

async function planRequest(request: PlanRequest): Promise<void> {
  const scenario = validate(request.spec);
  if (!scenario) return;
  const solvers = await backendsFor(request.highsModule);
  const backends = solvers.backends;
  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;
  const result = await plan(scenario, {
    timeLimitS: request.timeLimitS, gap: request.gap, ...solvers,
    onProgress: (p) => post({ type: 'progress', ...p }),
  });
  if (result.plan) {
    post({ type: 'result', plan: planView(scenario, result, elapsedS()) });
    return;
  }
  if (result.status !== 'infeasible') {
    post({ type: 'result', diagnosis: { status: result.status, conflicts: [], conflictSets: 0, reasons: result.reasons, elapsedS: elapsedS() } });
    return;
  }
  post({ type: 'diagnosing', reasons: result.reasons });
  const diagnosis = await diagnose(scenario, { reSolveTimeLimitS: Math.min(3, request.timeLimitS / 3), backends });
  post({ type: 'result', diagnosis: diagnosisView(scenario, diagnosis, elapsedS()) });
}

async function sweepRequest(request: SweepRequest): Promise<void> {
  const segments = parseSpecPath(request.path);
  if (!segments) throw new Error(`not a scenario path: ${request.path}`);
  const solvers = await backendsFor(request.highsModule);
  for (let i = 0; i < request.values.length; i++) {
    const value = request.values[i]!;
    const done = i === request.values.length - 1;
    const spec = structuredClone(request.spec);
    const problem = setAtPath(spec, segments, value);
    let scenario: Scenario | undefined;
    try {
      scenario = problem === undefined ? parseScenario(spec) : undefined;
    } catch (error) {
      if (!(error instanceof ScenarioValidationError)) throw error;
      post({ type: 'sweep-point', point: { value, issue: error.issues.map((x) => `${x.path}: ${x.message}`).join('; ') }, done });
      continue;
    }
    if (!scenario) {
      post({ type: 'sweep-point', point: { value, issue: problem }, done });
      continue;
    }
    const result = await plan(scenario, { timeLimitS: request.timeLimitS, ...solvers, baselines: false });
    const p = result.plan;
    const shape = p ? planShape(p) : undefined;
    post({ type: 'sweep-point', point: { value, iterationTimeS: result.evaluation?.predicted.iterationTimeS, shape, issue: p ? undefined : result.reasons[0] ?? result.status }, done });
  }
}

async function importModel(request: ImportModelRequest): Promise<void> {
  try {
    post({ type: 'model', model: modelFromHfConfig(request.config, request.name, request.source) });
  } catch (error) {
    if (!(error instanceof ScenarioValidationError)) throw error;
    post({ type: 'invalid', issues: error.issues });
  }
}

scope.onmessage = (event) => {
  const request = event.data;
  // Each worker serves one request: the profile stays applied until the page terminates it.
  if (request.type !== 'import-model' && request.calibrationProfile !== undefined) applyCalibrationProfile(request.calibrationProfile as CalibrationProfile);
  const run = request.type === 'plan' ? planRequest(request) : request.type === 'sweep' ? sweepRequest(request) : importModel(request);
  run.catch((error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }));
};
