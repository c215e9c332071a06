/**
 * How fast the cost model evaluates plans: 10,000 plans of the two-building example in one
 * call (the `evaluate --plan` array path), and per-plan cost on each fixture. Prints a table;
 * with `--markdown FILE` also writes it into the file's `evaluate-throughput` section
 * (bench/markdown-section.ts).
 * Run: npm run build && node dist/bench/evaluate-throughput.js [--markdown docs/benchmarks.md]
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import { evaluatePlans, loadScenario, readJsonFile } from '../src/index';
import { markdownOption, SectionOutput } from './markdown-section';

const root = path.join(__dirname, '..', '..');
const out = new SectionOutput('evaluate-throughput', markdownOption(process.argv.slice(2)).markdownFile);
const fixtures = ['llama3-405b-two-buildings', 'llama3-8b-one-site', 'llama3-70b-three-regions', 'deepseek-v3-moe-two-sites'];

/** Plans that vary the fields a search would vary, all valid for the scenario. */
function variants(base: Record<string, unknown>, count: number): unknown[] {
  const recompute = ['none', 'selective', 'full'];
  const zero = [0, 1, 2, 3];
  return Array.from({ length: count }, (_, i) => ({ ...base, recompute: recompute[i % 3], zero: zero[(i >> 2) % 4] }));
}

function timeIt(run: () => void, repeats: number): number {
  const samples: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

out.line('| scenario | plans in one call | median wall time (ms) | plans per second |');
out.line('|---|---:|---:|---:|');
for (const name of fixtures) {
  const scenario = loadScenario(path.join(root, 'fixtures', `${name}.json`));
  const base = readJsonFile(path.join(root, 'fixtures', 'plans', `${name}.plan.json`)) as Record<string, unknown>;
  const plans = variants(base, 10_000);
  evaluatePlans(scenario, plans.slice(0, 200)); // warm up the JIT
  const ms = timeIt(() => evaluatePlans(scenario, plans), 5);
  out.line(`| ${name} | ${plans.length} | ${ms.toFixed(0)} | ${Math.round(plans.length / (ms / 1000))} |`);
}

// End to end: the CLI reading a 10,000-plan file and printing JSON, against the 10 s goal.
const name = fixtures[0]!;
const planFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-bench-')), 'plans.json');
const base = readJsonFile(path.join(root, 'fixtures', 'plans', `${name}.plan.json`)) as Record<string, unknown>;
fs.writeFileSync(planFile, JSON.stringify(variants(base, 10_000)));
const cli = path.join(root, 'dist', 'src', 'cli', 'main.js');
const cliMs = timeIt(() => {
  const run = spawnSync(process.execPath, [cli, 'evaluate', path.join(root, 'fixtures', `${name}.json`), '--plan', planFile, '--json'], { maxBuffer: 1 << 30 });
  if (run.status !== 0) throw new Error(`CLI exited ${run.status}: ${run.stderr}`);
}, 3);
out.line();
out.line('| end to end | plans | median wall time (s) | goal (s) | time / goal |');
out.line('|---|---:|---:|---:|---:|');
out.line(`| scaleacross evaluate ${name} --plan <10,000 plans> --json | 10000 | ${(cliMs / 1000).toFixed(2)} | 10 | ${(cliMs / 10_000).toFixed(3)} |`);
out.finish();
