/**
 * Fresh `scaleacross plan` processes with V8's WebAssembly tiers as the CLI chooses them (Liftoff
 * only on a machine with at most 2 cores; src/cli/wasm-tiering.ts) against the optimising tier kept
 * (SCALEACROSS_WASM_TIER_UP=1), alternating run by run in one process so that both see the same
 * load. Per bench row: main search s (from the JSON), the whole process's wall time and CPU
 * seconds (user + system, all threads), medians and ranges, and the ratios.
 * Run: npm run build && node dist/bench/wasm-tiering.js [runs per variant, default 5] [row indexes, default the 2-5-site rows]
 */
import { spawnSync } from 'child_process';
import { mkdtempSync } from 'fs';
import { availableParallelism, tmpdir } from 'os';
import * as path from 'path';
import { median } from '../src/calibration/calibration-table';
import { writeTextFile } from '../src/io/files';
import { ROWS, scenarioFor } from './plan-scaling-scenarios';
import { childrenCpuS } from './proc-stat';

const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.js');
const runs = Number(process.argv[2] ?? 5);
const rowIndexes = process.argv[3] ? process.argv[3].split(',').map(Number) : ROWS.map((row, i) => ({ row, i })).filter(({ row }) => row.sites.length <= 5).map(({ i }) => i);
const scratch = mkdtempSync(path.join(tmpdir(), 'wasm-tiering-'));

interface Run { mainS: number; wallS: number; cpuS: number; gap: number; planS: number }

function freshPlan(file: string, tierUp: boolean): Run {
  const env = { ...process.env };
  if (tierUp) env['SCALEACROSS_WASM_TIER_UP'] = '1';
  else delete env['SCALEACROSS_WASM_TIER_UP'];
  const cpuBefore = childrenCpuS();
  const started = Date.now();
  const child = spawnSync(process.execPath, [CLI, 'plan', file, '--json', '--quiet', '--time-limit', '10', '--gap', '0.01'], { encoding: 'utf8', env, maxBuffer: 1 << 26 });
  const wallS = (Date.now() - started) / 1000;
  const result = JSON.parse(child.stdout) as { solver: { timeS: number }; bound: { gap: number }; predicted: { iterationTimeS: number } };
  return { mainS: result.solver.timeS, wallS, cpuS: childrenCpuS() - cpuBefore, gap: result.bound.gap, planS: result.predicted.iterationTimeS };
}

const spread = (xs: readonly number[]) => `${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}]`;

function main(): void {
  console.log(`${availableParallelism()} cores; ${runs} fresh runs per variant, alternating; median [range]\n`);
  console.log('| row | tiers | main search s | process wall s | process CPU s | gaps | plans s/iter | main search: Liftoff / tier-up | CPU: Liftoff / tier-up |');
  console.log('|---|---|---:|---:|---:|---|---|---:|---:|');
  for (const index of rowIndexes) {
    const row = ROWS[index]!;
    const file = path.join(scratch, `row-${index}.json`);
    writeTextFile(file, JSON.stringify(scenarioFor(row).spec));
    const byVariant = { cli: [] as Run[], tierUp: [] as Run[] };
    for (let r = 0; r < runs; r++) {
      byVariant.cli.push(freshPlan(file, false));
      byVariant.tierUp.push(freshPlan(file, true));
    }
    const label = `${row.model}, ${row.sites.length} sites`;
    const cliTiers = availableParallelism() <= 2 ? 'Liftoff only (the CLI here)' : 'tier-up (the CLI here)';
    const line = (name: string, rs: Run[], ratios: string) => console.log(`| ${label} | ${name} | ${spread(rs.map((r) => r.mainS))} | ${spread(rs.map((r) => r.wallS))} | ${spread(rs.map((r) => r.cpuS))} | ${[...new Set(rs.map((r) => `${(100 * r.gap).toFixed(2)}%`))].join(', ')} | ${[...new Set(rs.map((r) => r.planS.toFixed(4)))].join(', ')} | ${ratios} |`);
    line(cliTiers, byVariant.cli, `${(median(byVariant.cli.map((r) => r.mainS)) / median(byVariant.tierUp.map((r) => r.mainS))).toFixed(2)} | ${(median(byVariant.cli.map((r) => r.cpuS)) / median(byVariant.tierUp.map((r) => r.cpuS))).toFixed(2)}`);
    line('tier-up (SCALEACROSS_WASM_TIER_UP=1)', byVariant.tierUp, ' | ');
  }
}

main();
