/**
 * Bound validity over a wide random sample: draws scenarios from bench/random-scenarios.ts (catalog
 * and custom GPUs, pods, links of every speed, every schedule) with a seed, audits each one that is
 * a valid spec and small enough for exhaustive search (bench/bound-audit.ts), and counts.
 * Goal: no violation. Exits 1 on any, printing the spec to replay.
 *
 *   node dist/bench/bound-validity.js [audited scenarios, default 1000] [seed, default 20261201] [shard i/n] [--markdown FILE]
 *
 * With `--markdown FILE`, the table also goes into the file's `bound-validity` section
 * (bench/markdown-section.ts): run it without shards for that, since a shard's table counts only its share.
 *
 * With a shard `i/n`, only every n-th drawn scenario from the i-th (1-based) is audited, so n
 * processes side by side cover the same sample as one; the counts add up.
 */
import fc from 'fast-check';
import { scaleOutTier, scaleUpTier } from '../src/model/network';
import { integerFeasibilityOnThisThread } from '../src/solve/highs-integer-feasibility';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import { defaultBackends } from '../src/solve/plan';
import { auditScenarioBounds } from './bound-audit';
import { markdownOption, SectionOutput } from './markdown-section';
import { smallScenarioArbitrary } from './random-scenarios';

async function main(): Promise<void> {
  const { markdownFile, args } = markdownOption(process.argv.slice(2));
  const target = Number(args[0] ?? 1000);
  const seed = Number(args[1] ?? 20261201);
  const [shard, shards] = (args[2] ?? '1/1').split('/').map(Number) as [number, number];
  const want = Math.ceil((target - (shard - 1)) / shards);
  const highs = new HighsWorkerBackend();
  const backends = defaultBackends();
  const integerFeasibility = await integerFeasibilityOnThisThread();
  const tally = { drawn: 0, invalid: 0, tooLarge: 0, audited: 0, withCustomGpu: 0, fastNic: 0, withPlan: 0, candidates: 0, mips: 0, violations: 0 };
  const started = Date.now();
  let index = 0;
  // Draws in batches of 100, batch b from seed + b: the same seed gives the same scenarios.
  let batch: unknown[] = [];
  while (tally.audited < want) {
    if (index % 100 === 0) batch = fc.sample(smallScenarioArbitrary, { seed: seed + index / 100, numRuns: 100 });
    const spec = batch[index % 100];
    if (index++ % shards !== shard - 1) continue;
    tally.drawn++;
    const audit = await auditScenarioBounds(spec, { highs, backends, exhaustiveCapS: 2, mipsPerScenario: 4, gap: 0.01, integerFeasibility });
    if (audit.outcome === 'invalid') { tally.invalid++; continue; }
    if (audit.outcome === 'too-large') { tally.tooLarge++; continue; }
    tally.audited++;
    const sites = audit.scenario!.sites;
    if (sites.some((site) => site.gpu.name.startsWith('custom'))) tally.withCustomGpu++;
    if (sites.some((site) => scaleOutTier(site, false).bytesPerS > scaleUpTier(site).bytesPerS)) tally.fastNic++;
    if (audit.withPlan) tally.withPlan++;
    tally.candidates += audit.candidates;
    tally.mips += audit.mips;
    if (audit.violations.length > 0) {
      tally.violations++;
      console.log(`VIOLATION in drawn scenario ${index - 1}: ${audit.violations.join('; ')}\n${JSON.stringify(spec)}`);
    }
    if (tally.audited % 50 === 0) console.log(`${tally.audited} audited, ${tally.violations} with a violation, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  await Promise.all([highs, ...backends].map((b) => b.close()));
  console.log(`seed ${seed}, shard ${shard}/${shards}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const out = new SectionOutput('bound-validity', markdownFile);
  out.line('| drawn | invalid spec | too large | audited | with a custom GPU | with a NIC faster than scale-up | with a plan | candidates | MIPs | scenarios with a violation |');
  out.line('|---|---|---|---|---|---|---|---|---|---|');
  out.line(`| ${tally.drawn} | ${tally.invalid} | ${tally.tooLarge} | ${tally.audited} | ${tally.withCustomGpu} | ${tally.fastNic} | ${tally.withPlan} | ${tally.candidates} | ${tally.mips} | ${tally.violations} |`);
  out.finish();
  process.exitCode = tally.violations > 0 ? 1 : 0;
}

main().catch((error) => { console.error(error); process.exit(2); });
