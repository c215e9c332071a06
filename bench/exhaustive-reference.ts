/**
 * The exhaustive reference on scenarios of two and three sites of up to 64 GPUs each
 * (bench/exhaustive-reference-scenarios.ts): its time and coverage in reduced mode (site symmetry,
 * bound pruning; docs/formulation.md §9), the naive enumeration's progress within a cap on the
 * same scenario, and `plan` (MIP search) against the exhaustive optimum. With `--markdown FILE`,
 * the table also goes into the file's `exhaustive-reference` section (bench/markdown-section.ts).
 * Run: npm run build && node dist/bench/exhaustive-reference.js [naive cap seconds, default 30] [--markdown docs/benchmarks.md]
 */
import { FULL_SPACE } from '../src/formulation/search-space';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { defaultBackends, plan } from '../src/solve/plan';
import { REFERENCE_ROWS, referenceScenario } from './exhaustive-reference-scenarios';
import { markdownOption, SectionOutput } from './markdown-section';

const { markdownFile, args } = markdownOption(process.argv.slice(2));
const naiveCapS = Number(args[0] ?? 30);
const count = (n: number): string => n.toLocaleString('en-US');

async function main(): Promise<void> {
  const backends = defaultBackends();
  const out = new SectionOutput('exhaustive-reference', markdownFile);
  out.line(`| scenario | GPUs | candidates (pruned by bound) | site symmetries | plans covered | representative placements / placements covered | plans timed | exhaustive s | without candidate bounds s | optimum s/iter | naive, cap ${naiveCapS} s | plan s/iter, gap | plan within gap of the optimum |`);
  out.line('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|---|');
  try {
    for (const row of REFERENCE_ROWS) {
      const scenario = referenceScenario(row);
      const gpus = row.sites.reduce((sum, s) => sum + s.gpus, 0);
      const reduced = exhaustiveSearch(scenario, FULL_SPACE, 600);
      const c = reduced.coverage;
      const choiceOnly = exhaustiveSearch(scenario, FULL_SPACE, 60, undefined, { candidateBounds: false });
      const choiceOnlyText = choiceOnly.complete ? choiceOnly.timeS.toFixed(2) : `> 60 (${choiceOnly.coverage.candidatesEnumerated} of ${count(choiceOnly.coverage.candidates)} candidates)`;
      const naive = exhaustiveSearch(scenario, FULL_SPACE, naiveCapS, undefined, { mode: 'naive' });
      const naiveText = naive.complete ? `${naive.timeS.toFixed(1)} s, ${count(naive.plansEvaluated)} plans` : `stopped: ${count(naive.plansEvaluated)} plans, ${naive.coverage.candidatesEnumerated} of ${naive.coverage.candidates} candidates`;
      const result = await plan(scenario, { timeLimitS: 10, gap: 0.01, backends, baselines: false });
      const optimumS = reduced.evaluation?.predicted.iterationTimeS ?? Infinity;
      const planS = result.evaluation?.predicted.iterationTimeS ?? Infinity;
      const within = reduced.complete && planS <= optimumS / (1 - result.bound.gap) * (1 + 1e-9) && result.bound.lowerBoundS <= optimumS * (1 + 1e-9);
      out.line(`| ${row.name} | ${gpus} | ${count(c.candidates)} (${count(c.candidatesPrunedByBound)}) | ${c.siteSymmetries} | ${count(c.plansCovered)} | ${count(c.placementsEvaluated)} / ${count(c.placementsCovered)} | ${count(c.plansEvaluated)} | ${reduced.timeS.toFixed(2)}${reduced.complete ? '' : ' (stopped)'} | ${choiceOnlyText} | ${optimumS.toFixed(4)} | ${naiveText} | ${planS.toFixed(4)}, ${(100 * result.bound.gap).toFixed(2)}% | ${within ? 'yes' : 'NO'} (${(100 * (planS / optimumS - 1)).toFixed(2)}% above) |`);
    }
  } finally {
    for (const backend of backends) await backend.close?.();
  }
  out.finish();
}

main().catch((error) => { console.error(error); process.exit(1); });
