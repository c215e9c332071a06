/**
 * Which of V8's WebAssembly compilers runs HiGHS in this CLI process (docs/benchmarks.md,
 * planner scaling, and `npm run bench:wasm`). V8 first compiles HiGHS's 3.5 MB of WebAssembly with its baseline compiler
 * (Liftoff), then recompiles every function that gets hot with its optimising one (TurboFan) on
 * background threads. A process that plans one scenario ends before that pays off when it has no
 * spare core for the recompilation: on 2 cores, perf measured 3.2 s of CPU in TurboFan's
 * WebAssembly compiler during one `plan` of the 3-site bench row, against the HiGHS workers' own
 * 2.4 s, and the row's main search took medians of 3.33-3.87 s fresh with it against 1.71-1.90 s with
 * Liftoff only (bench/wasm-tiering.ts, two runs of 5 alternating processes each).
 * So the commands that plan one scenario run Liftoff only on machines with at most 2 cores. `batch`
 * keeps the optimising tier (its workers solve scenario after scenario, so the faster code pays
 * off), as does every process with more cores (the recompilation then has cores of its own; not
 * measured here: this machine has 2). SCALEACROSS_WASM_TIER_UP=1 keeps it anywhere.
 */
import { availableParallelism } from 'os';
import { setFlagsFromString } from 'v8';

/** Commands whose process plans (at most) one scenario. */
const ONE_SCENARIO_COMMANDS: ReadonlySet<string> = new Set(['plan', 'diagnose', 'report']);

/** Whether a CLI process started with `argv` (without node and script) should run WebAssembly on Liftoff only. */
export function liftoffOnly(argv: readonly string[], cores: number, env: NodeJS.ProcessEnv): boolean {
  if (env['SCALEACROSS_WASM_TIER_UP'] === '1') return false;
  return ONE_SCENARIO_COMMANDS.has(argv[0] ?? '') && cores <= 2;
}

/**
 * Sets V8's WebAssembly tiering for this process; must run before HiGHS's module is compiled
 * (V8 reads the flag when it compiles and tiers up).
 */
export function chooseWasmTiering(argv: readonly string[]): void {
  if (liftoffOnly(argv, availableParallelism(), process.env)) setFlagsFromString('--liftoff-only');
}
