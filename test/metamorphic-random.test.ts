/**
 * Metamorphic relations of the exact optimum on random small scenarios
 * (bench/random-scenarios.ts), each side solved by exhaustive search: reversing the order
 * in which sites are listed or renaming them changes nothing; doubling every link's bandwidth,
 * or adding a node to a site (idle GPUs allowed), never makes the best plan slower.
 * test/planner.test.ts checks the same relations for `plan` on the fixtures.
 *
 * FUZZ_RUNS and FUZZ_SEED widen or move the sample.
 */
import fc from 'fast-check';
import { FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { exhaustiveSearch } from '../src/solve/exhaustive';
import { smallScenarioArbitrary } from '../bench/random-scenarios';

type Json = any; // scenario JSON, transformed below

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 6);
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261130);
const EXHAUSTIVE_CAP_S = 2;

/** The least iteration time over the whole space (Infinity when nothing fits), or undefined if invalid or too large to enumerate. */
function optimumS(spec: Json): number | undefined {
  let scenario;
  try {
    scenario = parseScenario(spec, 'random');
  } catch (error) {
    if (error instanceof ScenarioValidationError) return undefined;
    throw error;
  }
  const result = exhaustiveSearch(scenario, FULL_SPACE, EXHAUSTIVE_CAP_S);
  if (!result.complete) return undefined;
  return result.evaluation?.predicted.iterationTimeS ?? Infinity;
}

const reversedSites = (spec: Json): Json => {
  const copy = structuredClone(spec);
  copy.cluster.sites.reverse();
  return copy;
};
const renamedSites = (spec: Json): Json => {
  const copy = structuredClone(spec);
  const rename = (name: string) => `dc-${name}-renamed`;
  for (const site of copy.cluster.sites) site.name = rename(site.name);
  for (const link of copy.cluster.links) link.between = link.between.map(rename);
  return copy;
};
const doubledBandwidth = (spec: Json): Json => {
  const copy = structuredClone(spec);
  for (const link of copy.cluster.links) link.bandwidthGbps *= 2;
  return copy;
};
/** One more node at the first site (a site without pods: its fabric stays the same). */
const oneMoreNode = (spec: Json): Json => {
  const copy = structuredClone(spec);
  copy.cluster.sites[0].gpus += copy.cluster.sites[0].gpusPerNode;
  return copy;
};

describe('metamorphic relations of the exhaustive optimum on random small scenarios', () => {
  it('site order and names change nothing; more bandwidth or GPUs never slow the best plan', () => {
    let compared = 0;
    fc.assert(fc.property(smallScenarioArbitrary, (spec) => {
      const base = optimumS(spec);
      fc.pre(base !== undefined);
      for (const [name, transform] of [['reversed sites', reversedSites], ['renamed sites', renamedSites]] as const) {
        const other = optimumS(transform(spec));
        if (other === undefined) continue; // an enumeration cut short by the cap
        if (Number.isFinite(base!)) expect({ name, other: other / base! }).toEqual({ name, other: expect.closeTo(1, 9) });
        else expect({ name, other }).toEqual({ name, other: Infinity });
        compared++;
      }
      const faster: [string, Json][] = [['doubled bandwidth', doubledBandwidth(spec)]];
      // With idle GPUs forbidden, one more node can leave no plan that uses them all.
      if (spec.search.allowIdleGpus !== false && spec.cluster.sites[0].podGpus === undefined) faster.push(['one more node', oneMoreNode(spec)]);
      for (const [name, changed] of faster) {
        const other = optimumS(changed);
        if (other === undefined) continue;
        if (other > base! * (1 + 1e-9)) throw new Error(`${name}: best plan ${other} s, slower than ${base} s`);
        compared++;
      }
    }), { numRuns: RUNS, seed: SEED, endOnFailure: true });
    expect(compared).toBeGreaterThanOrEqual(RUNS);
  }, Math.max(300_000, RUNS * 60_000));
});
