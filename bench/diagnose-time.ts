/**
 * Diagnosis time (issue 4 goal: under 10 s for a 2-5 site scenario): the infeasibility fixtures
 * and infeasible variants of the 2-, 3- and 5-site scenarios, plus the feasible two-building
 * example's tight-constraint analysis, each timed end to end with its re-solve count.
 * With `--markdown FILE`, the table also goes into the file's `diagnose-time` section
 * (bench/markdown-section.ts).
 * Run: npm run build && node dist/bench/diagnose-time.js [--markdown docs/benchmarks.md]
 */
import { readFileSync } from 'node:fs';
import { diagnose } from '../src/diagnose/diagnose';
import { parseScenario } from '../src/model/scenario';
import { DEFAULT_SEARCH, type ScenarioSpec } from '../src/model/scenario-schema';
import { defaultBackends } from '../src/solve/plan';
import { markdownOption, SectionOutput } from './markdown-section';
import { ROWS as PLAN_SCALING_ROWS, scenarioFor } from './plan-scaling-scenarios';

const load = (file: string): ScenarioSpec => JSON.parse(readFileSync(file, 'utf8')) as ScenarioSpec;

/** A variant whose batch no allowed microbatch size divides (a search-space and batch conflict). */
const oddBatch = (spec: ScenarioSpec): ScenarioSpec => ({ ...spec, training: { ...spec.training, globalBatchSeqs: spec.training.globalBatchSeqs + 1 }, search: { ...(spec.search ?? DEFAULT_SEARCH), microBatchSeqs: [2, 4] } });
/** A variant that must run 20% faster than the fastest plan found (a required iteration time). */
const deadline = (spec: ScenarioSpec, seconds: number): ScenarioSpec => ({ ...spec, training: { ...spec.training, maxIterationTimeS: seconds } });

const ROWS: { name: string; sites: number; spec: ScenarioSpec }[] = [
  { name: 'fixtures/infeasible/memory', sites: 1, spec: load('fixtures/infeasible/memory.json') },
  { name: 'fixtures/infeasible/gpu-count', sites: 1, spec: load('fixtures/infeasible/gpu-count.json') },
  { name: 'fixtures/infeasible/batch-divisibility', sites: 1, spec: load('fixtures/infeasible/batch-divisibility.json') },
  { name: 'fixtures/infeasible/search-space', sites: 1, spec: load('fixtures/infeasible/search-space.json') },
  { name: 'fixtures/infeasible/link-capacity', sites: 2, spec: load('fixtures/infeasible/link-capacity.json') },
  { name: 'fixtures/infeasible/memory-and-batch', sites: 1, spec: load('fixtures/infeasible/memory-and-batch.json') },
  { name: '405B two buildings, batch 2049, microbatch [2, 4]', sites: 2, spec: oddBatch(load('fixtures/llama3-405b-two-buildings.json')) },
  { name: '70B three regions, batch +1, microbatch [2, 4]', sites: 3, spec: oddBatch(load('fixtures/llama3-70b-three-regions.json')) },
  { name: '405B two buildings, required 4.5 s/iter', sites: 2, spec: deadline(load('fixtures/llama3-405b-two-buildings.json'), 4.5) },
  { name: '405B two buildings (feasible: tight constraints)', sites: 2, spec: load('fixtures/llama3-405b-two-buildings.json') },
  ...planScalingRows(),
];

/** The 4- and 5-site planner-bench scenarios (bench/plan-scaling-scenarios.ts), made infeasible two ways. */
function planScalingRows(): { name: string; sites: number; spec: ScenarioSpec }[] {
  const fourSites = scenarioFor(PLAN_SCALING_ROWS.find((r) => r.sites.length === 4 && r.model === '405B')!).spec;
  const fiveSites = scenarioFor(PLAN_SCALING_ROWS.find((r) => r.sites.length === 5)!).spec;
  return [
    { name: '405B four sites, required 5.0 s/iter', sites: 4, spec: deadline(fourSites, 5.0) },
    { name: '70B five sites (100k GPUs), batch +1, microbatch [2, 4]', sites: 5, spec: oddBatch(fiveSites) },
  ];
}

async function main(): Promise<void> {
  const backends = defaultBackends();
  const out = new SectionOutput('diagnose-time', markdownOption(process.argv.slice(2)).markdownFile);
  out.line('| scenario | sites | status | conflict sets (members) | re-solves | time s | under 10 s |');
  out.line('|---|---:|---|---|---:|---:|---|');
  try {
    for (const row of ROWS) {
      const started = Date.now();
      const d = await diagnose(parseScenario(row.spec), { backends });
      const timeS = (Date.now() - started) / 1000;
      const members = d.status === 'feasible' ? `${d.tight.filter((t) => t.tight).length} tight` : `${d.conflictSets ?? 1} (${d.conflicts.map((c) => c.constraint).join(', ')})`;
      out.line(`| ${row.name} | ${row.sites} | ${d.status} | ${members} | ${d.solver.reSolves} | ${timeS.toFixed(2)} | ${timeS < 10 ? 'yes' : 'no'} |`);
    }
  } finally {
    await Promise.all(backends.map((b) => b.close()));
  }
  out.finish();
}

void main();
