/**
 * Enumeration speed: the planner's per-scenario fixed cost (candidate enumeration with quick
 * bounds, then the refined bounds of the best candidates, as the refine phase computes them)
 * with the frozen reference (bench/reference: the code before the perf work) and the current
 * code, in one run, alternating, on the fixtures and the plan-scaling scenarios. Prints a
 * docs/benchmarks.md table with old ms, new ms and old / new side by side, and checks on the
 * way that both give the same candidates and bounds. With `--markdown FILE`, the table also goes
 * into the file's `enumeration-speed` section (bench/markdown-section.ts).
 * Run: npm run bench:enumeration  (or: npm run build && node dist/bench/enumeration-speed.js [repeats, default 5] [refined candidates, default 200] [row name filter] [--markdown docs/benchmarks.md])
 */
import * as os from 'os';
import { median } from '../src/calibration/calibration-table';
import { FULL_SPACE } from '../src/formulation/search-space';
import type { Scenario } from '../src/model/scenario';
import {
  batchSweepScenarios, enumerationDifferences, fixtureEnumerationCases, planScalingCases, runEnumeration, type EnumerationResult, type Implementation,
} from './enumeration-cases';
import { markdownOption, SectionOutput } from './markdown-section';

const { markdownFile, args } = markdownOption(process.argv.slice(2));
const repeats = Number(args[0] ?? 5);
const refinedCount = Number(args[1] ?? 200);
/** Only rows whose name contains this (optional). */
const only = args[2];

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const ratio = (old: number, now: number) => `${(old / now).toFixed(1)}x`;

/** The refine phase's order: the best candidates first (those with a finite quick bound). */
const bestFirst = (count: number) => Array.from({ length: Math.min(count, refinedCount) }, (_, i) => i);

/** A row: one scenario, or a set whose times add up (the batch sweep). */
interface Row { readonly name: string; readonly scenarios: readonly Scenario[] }
const rows: Row[] = [
  ...[...fixtureEnumerationCases(), ...planScalingCases()].map((c) => ({ name: c.name, scenarios: [c.scenario] })),
  { name: 'batch-scaling sweep (240 one-site scenarios, summed)', scenarios: batchSweepScenarios() },
].filter((row) => !only || row.name.includes(only));

/** One pass over a row's scenarios: summed times, and whether every result matched the other implementation's. */
function runRow(impl: Implementation, row: Row): { enumerateMs: number; refineMs: number; candidates: number; results: EnumerationResult[] } {
  const results = row.scenarios.map((scenario) => runEnumeration(impl, scenario, FULL_SPACE, bestFirst));
  return {
    enumerateMs: results.reduce((sum, r) => sum + r.enumerateMs, 0),
    refineMs: results.reduce((sum, r) => sum + r.refineMs, 0),
    candidates: results.reduce((sum, r) => sum + r.candidates.length, 0),
    results,
  };
}

const out = new SectionOutput('enumeration-speed', markdownFile);
out.line(`enumeration speed: ${rows.length} rows, ${repeats} repeats (old and new alternating; medians), refined bounds of the best ${refinedCount} candidates; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)}`);
out.line();
out.line('| scenario | candidates | enumerate old ms | new ms | old / new | refine old ms | new ms | old / new | total old ms | new ms | old / new |');
out.line('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const totals = { old: 0, now: 0 };
let mismatches = 0;
for (const row of rows) {
  const runs: Record<Implementation, ReturnType<typeof runRow>[]> = { reference: [], current: [] };
  // One warm-up each, then alternate the order so that drifting load favours neither side.
  for (let r = 0; r <= repeats; r++) {
    const order: Implementation[] = r % 2 === 0 ? ['reference', 'current'] : ['current', 'reference'];
    for (const impl of order) {
      const result = runRow(impl, row);
      if (r > 0) runs[impl].push(result);
    }
  }
  runs.reference[0]!.results.forEach((expected, i) => {
    const differences = enumerationDifferences(expected, runs.current[0]!.results[i]!);
    if (differences.length > 0) { mismatches++; console.error(`${row.scenarios[i]!.name}: results differ: ${differences.join('; ')}`); }
  });
  const med = (impl: Implementation, key: 'enumerateMs' | 'refineMs') => median(runs[impl].map((x) => x[key]));
  const old = { e: med('reference', 'enumerateMs'), r: med('reference', 'refineMs') };
  const now = { e: med('current', 'enumerateMs'), r: med('current', 'refineMs') };
  totals.old += old.e + old.r;
  totals.now += now.e + now.r;
  out.line(`| ${row.name} | ${runs.current[0]!.candidates} | ${ms(old.e)} | ${ms(now.e)} | ${ratio(old.e, now.e)} | ${ms(old.r)} | ${ms(now.r)} | ${ratio(old.r, now.r)} | ${ms(old.e + old.r)} | ${ms(now.e + now.r)} | ${ratio(old.e + old.r, now.e + now.r)} |`);
}
out.line(`| all rows (sum of medians) | | | | | | | | ${ms(totals.old)} | ${ms(totals.now)} | ${ratio(totals.old, totals.now)} |`);
out.line();
out.line(mismatches === 0 ? 'results: identical candidates and refined bounds on every scenario' : `results: ${mismatches} scenario(s) DIFFER`);
if (mismatches > 0) process.exitCode = 1;
out.finish();
