/**
 * Every bound is a real bound on scenarios nobody wrote by hand: random small scenarios
 * (bench/random-scenarios.ts: catalog and custom GPUs with either network tier the faster, pods,
 * links from 10 Gb/s to 25.6 Tb/s, every schedule, bf16 and fp8), each solved by exhaustive
 * search, candidate by candidate (bench/bound-audit.ts): every closed-form bound, the ring-pattern
 * bound with its pipeline caps and the placement MIP's proven optimum must be at most the
 * candidate's least time, and `plan` must agree with the
 * exhaustive optimum. `npm run bench:bounds` runs the same audit over 1,000 scenarios.
 *
 * FUZZ_RUNS and FUZZ_SEED widen or move the sample (e.g. FUZZ_RUNS=200 npx jest bounds-random);
 * FUZZ_SEED with FUZZ_PATH replays the case a failure printed.
 */
import fc from 'fast-check';
import type { IntegerFeasibility } from '../src/formulation/hosting-integrality';
import { integerFeasibilityOnThisThread } from '../src/solve/highs-integer-feasibility';
import { HighsWorkerBackend } from '../src/solve/highs-worker-backend';
import type { MipBackend } from '../src/solve/mip-backend';
import { defaultBackends } from '../src/solve/plan';
import { auditScenarioBounds } from '../bench/bound-audit';
import { smallScenarioArbitrary } from '../bench/random-scenarios';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 14);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261201);
/** Replays one failing case: the `path` fast-check printed with its seed. */
const PATH = process.env['FUZZ_PATH'];

let backends: MipBackend[];
let highs: HighsWorkerBackend;
let integerFeasibility: IntegerFeasibility | undefined;
beforeAll(async () => { backends = defaultBackends(); highs = new HighsWorkerBackend(); integerFeasibility = await integerFeasibilityOnThisThread(); });
afterAll(async () => { await Promise.all([...backends, highs].map((b) => b.close())); });

describe('bounds and plans on random small scenarios, against exhaustive search', () => {
  const tally = { audited: 0, invalid: 0, tooLarge: 0, customGpus: 0, candidates: 0, mips: 0, withPlan: 0 };

  it('no bound exceeds a candidate\'s exhaustive optimum, and plan agrees with it', async () => {
    await fc.assert(fc.asyncProperty(smallScenarioArbitrary, async (spec) => {
      // With the planner's integer solver the audit also checks the ring-pattern bound's pipeline caps.
      const audit = await auditScenarioBounds(spec, { highs, backends, exhaustiveCapS: 2, mipsPerScenario: 8, gap: 0.01, integerFeasibility });
      if (audit.outcome === 'invalid') tally.invalid++;
      if (audit.outcome === 'too-large') tally.tooLarge++;
      fc.pre(audit.outcome === 'audited');
      tally.audited++;
      if (audit.scenario!.sites.some((site) => site.gpu.name.startsWith('custom'))) tally.customGpus++;
      tally.candidates += audit.candidates;
      tally.mips += audit.mips;
      if (audit.withPlan) tally.withPlan++;
      expect(audit.violations).toEqual([]);
    }), { numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: true });
    if (process.env['FUZZ_VERBOSE']) console.log(JSON.stringify(tally));
    // The sample must really exercise the bounds: enough solvable scenarios, candidates and custom GPUs.
    if (PATH === undefined) expect(tally.audited).toBe(RUNS); // fast-check counts only runs past fc.pre
    expect(tally.withPlan).toBeGreaterThan(0);
    expect(tally.candidates).toBeGreaterThan(RUNS);
    if (PATH === undefined) expect(tally.customGpus).toBeGreaterThan(0);
  }, Math.max(600_000, RUNS * 60_000));
});
