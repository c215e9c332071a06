/**
 * Planner scaling: for scenarios from 2 to 8 sites and up to ~100,000 GPUs (dense 8B-405B and a
 * DeepSeek-V3-sized MoE), the plan's iteration time, proven gap and solve time, beside the
 * exhaustive mode's time on the same space (capped) in the same run. With `--markdown FILE`, the
 * table also goes into the file's `plan-scaling` section (bench/markdown-section.ts).
 * Run: npm run build && node dist/bench/plan-scaling.js [exhaustive cap seconds, default 60] [--markdown docs/benchmarks.md]
 */
import { execFileSync } from 'child_process';
import { mkdtempSync } from 'fs';
import { availableParallelism, loadavg, tmpdir } from 'os';
import * as path from 'path';
import { FULL_SPACE } from '../src/formulation/search-space';
import { readJsonFile, writeTextFile } from '../src/io/files';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { defaultBackends, defaultConcurrentBackends, plan } from '../src/solve/plan';
import { markdownOption, SectionOutput } from './markdown-section';
import { ROWS, scenarioFor } from './plan-scaling-scenarios';

const { markdownFile, args } = markdownOption(process.argv.slice(2));
const exhaustiveCapS = Number(args[0] ?? 60);
const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.js');
const scratch = mkdtempSync(path.join(tmpdir(), 'plan-scaling-'));

/**
 * The same plan from a fresh `scaleacross plan` process, as a user runs it: HiGHS loaded and its
 * WebAssembly compiled from scratch (the in-process rows share warm workers across rows).
 */
function coldCliRun(scenario: Scenario, index: number): { mainS: number; gap: number } {
  const file = path.join(scratch, `row-${index}.json`);
  writeTextFile(file, JSON.stringify(scenario.spec));
  let out: string;
  try {
    out = execFileSync(process.execPath, [CLI, 'plan', file, '--json', '--quiet', '--time-limit', '10', '--gap', '0.01'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  } catch (error) {
    // Exit 0 with a plan; anything else still prints its JSON on stdout.
    out = String((error as { stdout?: string }).stdout ?? '');
  }
  const result = JSON.parse(out) as { solver: { timeS: number }; bound: { gap: number } };
  return { mainS: result.solver.timeS, gap: result.bound.gap };
}

/**
 * The machine's 1-minute load average over its cores: every column is a wall time, so a run beside
 * another job reads slower on every row (a rerun at about twice the quiet times, every row and the
 * exhaustive plan counts alike, had been taken for a regression of the 3-site row).
 */
const loadPerCore = (): string => `${loadavg()[0]!.toFixed(2)} on ${availableParallelism()} cores`;

async function main(): Promise<void> {
  const loadBefore = loadPerCore();
  const backends = defaultBackends();
  // As `scaleacross plan` runs: a second HiGHS worker when there is a second core.
  const concurrentBackends = defaultConcurrentBackends();
  // The in-process column stands for a long-lived caller (batch, a service): its HiGHS workers and
  // JavaScript are warm. One untimed plan of other scenarios first (the fixtures, not bench rows),
  // so the first row with MIPs does not carry the process's WebAssembly tier-up alone.
  for (const fixture of ['llama3-70b-three-regions', 'deepseek-v3-moe-two-sites']) {
    const file = path.join(__dirname, '..', '..', 'fixtures', `${fixture}.json`);
    await plan(parseScenario(readJsonFile(file)), { timeLimitS: 5, gap: 0.01, backends, concurrentBackends });
  }
  const out = new SectionOutput('plan-scaling', markdownFile);
  out.line(`| model | sites | GPUs | link Gb/s, km | plan s/iter | proven gap | status | main search s | with baselines s | vs production | fresh CLI process: main search s, median [range] of 3 (gap) | exhaustive (cap ${exhaustiveCapS} s) | exhaustive / plan time |`);
  out.line('|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---|---:|');
  try {
    for (const [index, row] of ROWS.entries()) {
      const scenario = scenarioFor(row);
      const gpus = row.sites.reduce((sum, s) => sum + s.gpus, 0);
      const started = Date.now();
      const result = await plan(scenario, { timeLimitS: 10, gap: 0.01, backends, concurrentBackends });
      const totalS = (Date.now() - started) / 1000;
      // Fresh processes vary with the machine's load (the same row 3.2-6.9 s within an hour): the median of three, and their range.
      const colds = [0, 1, 2].map(() => coldCliRun(scenario, index)).sort((a, b) => a.mainS - b.mainS);
      const cold = colds[1]!;
      const exhaustive = exhaustiveSearch(scenario, FULL_SPACE, exhaustiveCapS);
      const production = result.baselines.find((b) => b.name === 'production');
      const time = result.evaluation?.predicted.iterationTimeS;
      const exhaustiveCell = exhaustive.complete
        ? `${exhaustive.timeS.toFixed(1)} s, optimum ${exhaustive.evaluation?.predicted.iterationTimeS.toFixed(3) ?? 'none'}`
        : `> ${exhaustiveCapS} s (stopped after ${exhaustive.plansEvaluated} plans)`;
      const ratio = exhaustive.complete ? (exhaustive.timeS / result.solver.timeS).toFixed(1) : `> ${(exhaustiveCapS / result.solver.timeS).toFixed(0)}`;
      out.line(`| ${row.model} | ${row.sites.length} | ${gpus} | ${row.gbps}, ${row.km} | ${time?.toFixed(3) ?? 'none'} | ${(100 * result.bound.gap).toFixed(2)}% | ${result.status} | ${result.solver.timeS.toFixed(2)} | ${totalS.toFixed(2)} | ${production?.speedup ? `${production.speedup.toFixed(2)}x` : '-'} | ${cold.mainS.toFixed(2)} [${colds[0]!.mainS.toFixed(2)}-${colds[2]!.mainS.toFixed(2)}] (${(100 * cold.gap).toFixed(2)}%) | ${exhaustiveCell} | ${ratio} |`);
    }
  } finally {
    await Promise.all([...backends, ...concurrentBackends].map((b) => b.close()));
  }
  out.line('');
  out.line(`Load average (1 min) before the rows: ${loadBefore}; after: ${loadPerCore()} (the bench's own processes included).`);
  out.finish();
}

void main();
