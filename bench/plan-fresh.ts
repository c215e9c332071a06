/**
 * `scaleacross plan` in a fresh process, as a user runs it, for the robustness benchmarks
 * (bench/plan-robustness.ts, bench/robustness-misses.ts): the scenario written to a scratch file,
 * `plan --json --quiet --no-explain-idle` with the given time limit, the JSON parsed.
 */
import { spawnSync } from 'child_process';
import { mkdtempSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import type { BoundHolder } from '../src/solve/plan-result';

const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.js');
let scratch: string | undefined;

export interface FreshPlan {
  readonly status: string;
  /** The main search's own time, s (solver.timeS). */
  readonly searchS?: number;
  readonly gap?: number;
  readonly boundS?: number;
  /** The plan's predicted iteration time, s. */
  readonly timeS?: number;
  readonly wallS: number;
  readonly exit: number | null;
  readonly plan?: { readonly tp: number; readonly cp: number; readonly ep: number; readonly pp: number; readonly dp: number; readonly microBatchSeqs: number; readonly schedule: string };
  readonly boundHolder?: BoundHolder;
  readonly mipsSolved?: number;
  readonly candidates?: number;
}

/** Plans `spec` in a fresh process with `--time-limit timeLimitS`; `name` names the scratch file. */
export function planFresh(spec: unknown, name: string, timeLimitS = 10): FreshPlan {
  scratch ??= mkdtempSync(path.join(tmpdir(), 'plan-fresh-'));
  const file = path.join(scratch, `${name}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [CLI, 'plan', file, '--json', '--quiet', '--no-explain-idle', '--time-limit', String(timeLimitS)],
    { encoding: 'utf8', maxBuffer: 1 << 27, timeout: Math.max(120, 3 * timeLimitS) * 1000 });
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  try {
    const result = JSON.parse(run.stdout) as { status: string; plan?: FreshPlan['plan']; solver?: { timeS: number; boundHolder?: BoundHolder; mipsSolved: number; candidates: number }; bound?: { gap: number; lowerBoundS: number }; predicted?: { iterationTimeS: number } };
    return { status: result.status, searchS: result.solver?.timeS, gap: result.bound?.gap, boundS: result.bound?.lowerBoundS, timeS: result.predicted?.iterationTimeS, wallS, exit: run.status,
      plan: result.plan, boundHolder: result.solver?.boundHolder, mipsSolved: result.solver?.mipsSolved, candidates: result.solver?.candidates };
  } catch {
    return { status: run.signal ? `killed (${run.signal})` : `exit ${run.status}: ${String(run.stderr).split('\n')[0]}`, wallS, exit: run.status };
  }
}
