/**
 * Why a fresh `scaleacross plan` process is slower than a warm one: CPU seconds by thread during
 * the main search of a bench row, first in this fresh process, then again with new HiGHS workers
 * in the same process (V8's compiled JavaScript and WebAssembly are then warm). Threads: the main
 * thread, the HiGHS worker threads (started with the backends), and the rest, V8's platform
 * threads (background TurboFan compilation of JavaScript and of HiGHS's WebAssembly, GC).
 * Linux only (/proc/self/task). One row per process: the first search must be the process's first.
 * It runs with V8's default WebAssembly tiers; `node --liftoff-only dist/bench/fresh-process-cost.js`
 * measures what the CLI runs on a 2-core machine (src/cli/wasm-tiering.ts, bench/wasm-tiering.ts).
 * Run: npm run build && node dist/bench/fresh-process-cost.js [row index, default 1] [repeats of the warm run, default 2]
 */
import { readdirSync } from 'fs';
import { FULL_SPACE } from '../src/formulation/search-space';
import { defaultBackends, defaultConcurrentBackends } from '../src/solve/plan';
import { searchPlans } from '../src/solve/search';
import { ROWS, scenarioFor } from './plan-scaling-scenarios';
import { ownCpuS } from './proc-stat';

/** CPU seconds (user + system) of every live thread of this process, by thread id. */
function threadCpuS(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      cpu.set(Number(tid), ownCpuS(`/proc/self/task/${tid}/stat`));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return cpu;
}

async function measuredSearch(rowIndex: number, platformThreads: ReadonlySet<number>) {
  const scenario = scenarioFor(ROWS[rowIndex]!);
  const backends = defaultBackends();
  const concurrentBackends = defaultConcurrentBackends();
  const before = threadCpuS();
  const result = await searchPlans(scenario, { timeLimitS: 10, gap: 0.01, backends, concurrentBackends, restriction: FULL_SPACE });
  const after = threadCpuS();
  await Promise.all([...backends, ...concurrentBackends].map((b) => b.close()));
  const byClass = { main: 0, highs: 0, v8: 0 };
  for (const [tid, cpuS] of after) {
    const used = cpuS - (before.get(tid) ?? 0);
    if (tid === process.pid) byClass.main += used;
    else if (platformThreads.has(tid)) byClass.v8 += used;
    else byClass.highs += used;
  }
  return { searchS: result.solver.timeS, gap: result.bound.gap, ...byClass };
}

async function main(): Promise<void> {
  const rowIndex = Number(process.argv[2] ?? 1);
  const warmRepeats = Number(process.argv[3] ?? 2);
  // Threads alive before any HiGHS worker exists: the main thread, V8's platform threads, libuv's.
  const platformThreads = new Set([...threadCpuS().keys()].filter((tid) => tid !== process.pid));
  const row = ROWS[rowIndex]!;
  console.log(`| row | run | main search s | gap | CPU s: main thread | HiGHS workers | V8 background threads | total |`);
  console.log(`|---|---|---:|---:|---:|---:|---:|---:|`);
  const runs: { searchS: number; main: number; highs: number; v8: number }[] = [];
  for (let run = 0; run <= warmRepeats; run++) {
    const m = await measuredSearch(rowIndex, platformThreads);
    runs.push(m);
    const label = `${row.model}, ${row.sites.length} sites`;
    console.log(`| ${label} | ${run === 0 ? 'fresh process' : `warm, new workers (${run})`} | ${m.searchS.toFixed(2)} | ${(100 * m.gap).toFixed(2)}% | ${m.main.toFixed(2)} | ${m.highs.toFixed(2)} | ${m.v8.toFixed(2)} | ${(m.main + m.highs + m.v8).toFixed(2)} |`);
  }
  const warm = runs.slice(1);
  const mean = (f: (r: typeof runs[number]) => number) => warm.reduce((sum, r) => sum + f(r), 0) / Math.max(1, warm.length);
  const fresh = runs[0]!;
  console.log(`\nfresh / warm: main search ${(fresh.searchS / mean((r) => r.searchS)).toFixed(2)}x, V8 background CPU ${(fresh.v8 / mean((r) => r.v8)).toFixed(2)}x, HiGHS worker CPU ${(fresh.highs / mean((r) => r.highs)).toFixed(2)}x, main thread CPU ${(fresh.main / mean((r) => r.main)).toFixed(2)}x`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
