/**
 * Pipeline-time agreement: for every plan `plan` returns (the main plan and the baselines' plans)
 * on the fixtures that plan in seconds, the planner-scaling rows and seeded random scenarios, and
 * for deliberately unequal and cross-site plans, the closed-form pipeline phase (eq. 5.1-5.4), the
 * pipeline phase the cost model reports, and the op-by-op timeline of the same replica group.
 * Goal: the reported phase within 2% of the timeline on every returned plan. Prints every group,
 * then the summary and the critical groups above 2%; with `--markdown FILE` those two tables also go
 * into the file's `timeline-agreement` section (bench/markdown-section.ts).
 *
 *   npm run bench:timeline            (node dist/bench/timeline-agreement.js [random scenarios, default 30] [seed, default 20261201] [--markdown FILE])
 */
import fc from 'fast-check';
import * as path from 'path';
import { readJsonFile } from '../src/io/files';
import { parseScenario, type Scenario } from '../src/model/scenario';
import type { PlanSpec } from '../src/model/plan-schema';
import { defaultBackends, defaultConcurrentBackends, plan } from '../src/solve/plan';
import { markdownOption, SectionOutput } from './markdown-section';
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
const signedPct = (x: number): string => `${x > 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
const GROUPS_HEADER = [
  '| source | plan | schedule | p | v | m | stage spread | crossings | closed form s (5.4) | floor s (5.8) | timeline s | closed - timeline | reported s | reported - timeline | plan call s |',
  '|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
];

function groupLine(row: Row): string {
  const where = row.crossings > 0 ? `${row.crossings} crossings` : 'one site';
  return `| ${row.source} | ${row.which} | ${row.schedule} | ${row.p} | ${row.v} | ${row.m} | ${pct(row.stageSpread)} | ${where} | ${row.closedFormS.toFixed(4)} | ${row.floorS.toFixed(4)} | ${row.timelineS.toFixed(4)} | ${pct(relativeDifference(row.closedFormS, row.timelineS))} | ${row.reportedS.toFixed(4)} | ${pct(relativeDifference(row.reportedS, row.timelineS))} | ${row.timeS === undefined ? '' : row.timeS.toFixed(2)} |`;
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

/** One row of the summary table: how far `pick` of each group is from its op-by-op span. */
function summaryLine(label: string, rows: readonly Row[], pick: (r: Row) => number): string[] {
  const signed = rows.map((r) => relativeDifference(pick(r), r.timelineS));
  const diffs = signed.map(Math.abs).sort((a, b) => a - b);
  if (diffs.length === 0) return [];
  const over = diffs.filter((d) => d > 0.02).length;
  return [`| ${label} | ${diffs.length} | ${pct(diffs[Math.floor(diffs.length / 2)]!)} | ${signedPct(Math.min(...signed))} to ${signedPct(Math.max(...signed))} | ${over} |`];
}

async function main(): Promise<void> {
  const { markdownFile, args } = markdownOption(process.argv.slice(2));
  const randomCount = Number(args[0] ?? 30);
  const seed = Number(args[1] ?? 20261201);
  const backends = defaultBackends();
  const concurrentBackends = defaultConcurrentBackends();
  const options = { timeLimitS: 10, gap: 0.01, backends, concurrentBackends };
  const returned: Row[] = [];
  const deliberate: Row[] = [];
  for (const line of GROUPS_HEADER) console.log(line);
  const record = (rows: Row[], source: string, which: string, scenario: Scenario, spec: PlanSpec, timeS?: number) => {
    for (const g of planAgreement(scenario, spec)) {
      const row = { ...g, source, which: g.critical ? which : `${which} (group ${g.group})`, ...(timeS === undefined ? {} : { timeS }) };
      rows.push(row);
      console.log(groupLine(row));
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
  const out = new SectionOutput('timeline-agreement', markdownFile);
  out.line();
  out.line('| compared with the op-by-op span | groups | median abs. difference | range | above 2% |');
  out.line('|---|---:|---:|---:|---:|');
  for (const line of [
    ...summaryLine('closed form (5.4), all groups', returned, (r) => r.closedFormS),
    ...summaryLine('closed form (5.4), the critical group of each returned plan', critical, (r) => r.closedFormS),
    ...summaryLine('reported phase, all groups', returned, (r) => r.reportedS),
    ...summaryLine('reported phase, the critical group of each returned plan', critical, (r) => r.reportedS),
    ...summaryLine("reported phase, main plans' critical groups", critical.filter((r) => r.which === 'plan'), (r) => r.reportedS),
    ...summaryLine('hand-written fixture plans, closed form', deliberate, (r) => r.closedFormS),
    ...summaryLine('hand-written fixture plans, reported phase', deliberate, (r) => r.reportedS),
  ]) out.line(line);
  out.line();
  out.line('The critical groups whose reported phase is more than 2% from the op-by-op span:');
  out.line();
  for (const line of GROUPS_HEADER) out.line(line);
  for (const row of critical) if (Math.abs(relativeDifference(row.reportedS, row.timelineS)) > 0.02) out.line(groupLine(row));
  out.finish();
}

if (require.main === module) main().catch((error) => { console.error(error); process.exit(2); });
