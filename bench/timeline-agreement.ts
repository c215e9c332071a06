/**
 * Pipeline-time agreement: for every plan `plan` returns (the main plan and the baselines' plans)
 * on the fixtures that plan in seconds, the planner-scaling rows and seeded random scenarios, and
 * for deliberately unequal and cross-site plans, the closed-form pipeline phase (eq. 5.1-5.4), the
 * pipeline phase the cost model reports, and the op-by-op timeline of the same replica group.
 * Goal: the reported phase within 2% of the timeline on every returned plan. Output: docs/benchmarks.md.
 *
 *   npm run bench:timeline            (node dist/bench/timeline-agreement.js [random scenarios, default 30] [seed, default 20261201])
 */
import fc from 'fast-check';
import * as path from 'path';
import { readJsonFile } from '../src/io/files';
import { parseScenario, type Scenario } from '../src/model/scenario';
import type { PlanSpec } from '../src/model/plan-schema';
import { defaultBackends, defaultConcurrentBackends, plan } from '../src/solve/plan';
import { planAgreement, relativeDifference, type GroupAgreement } from './pipeline-agreement';
import { ROWS, scenarioFor } from './plan-scaling-scenarios';
import { smallScenarioArbitrary } from './random-scenarios';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures');
/** Scenario fixtures that plan within seconds (the infeasible ones have no plan to compare). */
export const QUICK_FIXTURES = [
  'llama3-405b-two-buildings', 'llama3-8b-one-site', 'llama3-70b-three-regions', 'deepseek-v3-moe-two-sites',
  'small/one-site', 'small/two-sites', 'small/three-heterogeneous', 'small/four-site-mesh', 'small/moe-two-sites',
  'published/llama3-405b-16k-h100', 'published/llama3-70b-fp8-64-h100',
];
/** Fixture plans chosen by hand, several with stages split across sites and GPU types. */
const PLAN_FIXTURES: [string, string][] = [
  ['llama3-405b-two-buildings', 'llama3-405b-two-buildings'], ['llama3-405b-two-buildings', 'llama3-405b-pp-across-no-recompute'],
  ['llama3-70b-three-regions', 'llama3-70b-three-regions'], ['deepseek-v3-moe-two-sites', 'deepseek-v3-moe-two-sites'],
  ['llama3-8b-one-site', 'llama3-8b-one-site'],
];

interface Row extends GroupAgreement { readonly source: string; readonly which: string; readonly timeS?: number }

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;

function printRow(row: Row): void {
  const where = row.crossings > 0 ? `${row.crossings} crossings` : 'one site';
  console.log(`| ${row.source} | ${row.which} | ${row.schedule} | ${row.p} | ${row.v} | ${row.m} | ${pct(row.stageSpread)} | ${where} | ${row.closedFormS.toFixed(4)} | ${row.floorS.toFixed(4)} | ${row.timelineS.toFixed(4)} | ${pct(relativeDifference(row.closedFormS, row.timelineS))} | ${row.reportedS.toFixed(4)} | ${pct(relativeDifference(row.reportedS, row.timelineS))} | ${row.timeS === undefined ? '' : row.timeS.toFixed(2)} |`);
}

/** Every plan one `plan` call returns: the main plan and the baselines'. */
async function returnedPlans(scenario: Scenario, options: Parameters<typeof plan>[1]): Promise<{ which: string; plan: PlanSpec; timeS: number }[]> {
  const started = Date.now();
  const result = await plan(scenario, options);
  const timeS = (Date.now() - started) / 1000;
  const plans = result.plan ? [{ which: 'plan', plan: result.plan, timeS }] : [];
  for (const b of result.baselines) if (b.plan) plans.push({ which: b.name, plan: b.plan, timeS });
  return plans;
}

function summarize(label: string, rows: readonly Row[], pick: (r: Row) => number): void {
  const signed = rows.map((r) => relativeDifference(pick(r), r.timelineS));
  const diffs = signed.map(Math.abs).sort((a, b) => a - b);
  if (diffs.length === 0) return;
  const over = diffs.filter((d) => d > 0.02).length;
  console.log(`${label}: ${diffs.length} groups, median |difference| ${pct(diffs[Math.floor(diffs.length / 2)]!)}, largest ${pct(diffs[diffs.length - 1]!)} (from ${pct(Math.min(...signed))} to ${pct(Math.max(...signed))}), ${over} above 2%`);
}

async function main(): Promise<void> {
  const randomCount = Number(process.argv[2] ?? 30);
  const seed = Number(process.argv[3] ?? 20261201);
  const backends = defaultBackends();
  const concurrentBackends = defaultConcurrentBackends();
  const options = { timeLimitS: 10, gap: 0.01, backends, concurrentBackends };
  const returned: Row[] = [];
  const deliberate: Row[] = [];
  console.log('| source | plan | schedule | p | v | m | stage spread | crossings | closed form s (5.4) | floor s (5.8) | timeline s | closed - timeline | reported s | reported - timeline | plan call s |');
  console.log('|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  const record = (rows: Row[], source: string, which: string, scenario: Scenario, spec: PlanSpec, timeS?: number) => {
    for (const g of planAgreement(scenario, spec)) {
      const row = { ...g, source, which: g.critical ? which : `${which} (group ${g.group})`, ...(timeS === undefined ? {} : { timeS }) };
      rows.push(row);
      printRow(row);
    }
  };
  try {
    for (const name of QUICK_FIXTURES) {
      const scenario = parseScenario(readJsonFile(path.join(FIXTURES, `${name}.json`)), name);
      for (const r of await returnedPlans(scenario, options)) record(returned, name, r.which, scenario, r.plan, r.timeS);
    }
    for (const [i, row] of ROWS.entries()) {
      const scenario = scenarioFor(row);
      for (const r of await returnedPlans(scenario, options)) record(returned, `row ${i + 1} (${row.model}, ${row.sites.length} sites)`, r.which, scenario, r.plan, r.timeS);
    }
    let drawn = 0;
    for (let batch = 0; drawn < randomCount; batch++) {
      for (const spec of fc.sample(smallScenarioArbitrary, { seed: seed + batch, numRuns: 100 })) {
        if (drawn >= randomCount) break;
        let scenario: Scenario;
        try { scenario = parseScenario(spec, 'random'); } catch { continue; }
        drawn++;
        for (const r of await returnedPlans(scenario, { ...options, timeLimitS: 5 })) record(returned, `random ${seed}+${batch} #${drawn}`, r.which, scenario, r.plan, r.timeS);
      }
    }
    for (const [scenarioName, planName] of PLAN_FIXTURES) {
      const scenario = parseScenario(readJsonFile(path.join(FIXTURES, `${scenarioName}.json`)), scenarioName);
      record(deliberate, `fixture plan ${planName}`, 'given', scenario, readJsonFile(path.join(FIXTURES, 'plans', `${planName}.plan.json`)) as PlanSpec);
    }
  } finally {
    await Promise.all([...backends, ...concurrentBackends].map((b) => b.close()));
  }
  const critical = returned.filter((r) => r.critical);
  summarize('returned plans, closed form vs timeline (critical groups)', critical, (r) => r.closedFormS);
  summarize('returned plans, closed form vs timeline (all groups)', returned, (r) => r.closedFormS);
  summarize('returned plans, reported vs timeline (critical groups)', critical, (r) => r.reportedS);
  summarize('returned plans, reported vs timeline (all groups)', returned, (r) => r.reportedS);
  summarize('main plans only, reported vs timeline (critical groups)', critical.filter((r) => r.which === 'plan'), (r) => r.reportedS);
  summarize('hand-written plans, closed form vs timeline', deliberate, (r) => r.closedFormS);
  summarize('hand-written plans, reported vs timeline', deliberate, (r) => r.reportedS);
}

if (require.main === module) main().catch((error) => { console.error(error); process.exit(2); });
