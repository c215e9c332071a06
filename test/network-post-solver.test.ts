/**
 * The network-layer post-solver (docs/formulation.md §5) tries only the most flows per GPU pair in
 * its descent, on the grounds that a link's bandwidth never falls with more flows. Checked here:
 * that monotonicity of the network model itself (property-based), and, on one-link scenarios
 * (where the descent visits every setting of the one link), that the post-solver's time equals the
 * least time over every one of the link's settings, evaluated one by one.
 */
import fc from 'fast-check';
import { evaluate } from '../src/model/evaluate';
import { linkBytesPerS } from '../src/model/network';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario, type Link } from '../src/model/scenario';
import { chooseNetworkSettings, FLOWS_PER_GPU_PAIR, linkSettingOptions } from '../src/solve/network-post-solver';
import { clone, readFixture, readPlanFixture } from './helpers/fixtures';

type Json = any; // scenario JSON mutated below

describe('link bandwidth and flows', () => {
  it('never falls as flows per GPU pair rise, for either transport', () => {
    const link = fc.record({
      bandwidthBytesPerS: fc.double({ min: 1e8, max: 1e13, noNaN: true }),
      rttS: fc.double({ min: 1e-6, max: 0.3, noNaN: true }),
      lossRate: fc.constantFrom(0, 1e-7, 1e-5, 1e-3, 0.01, 0.5),
    });
    fc.assert(fc.property(link, fc.constantFrom('roce' as const, 'tcp' as const), fc.integer({ min: 0, max: 4096 }), (l, transport, gpuPairs) => {
      const bandwidths = FLOWS_PER_GPU_PAIR.map((flowsPerGpuPair) =>
        linkBytesPerS({ index: 0, siteA: 0, siteB: 1, label: 'a<->b', ...l } as Link, { transport, flowsPerGpuPair, collectives: 'hierarchical', gradientCompression: 'none' }, gpuPairs));
      bandwidths.slice(1).forEach((b, i) => expect(b).toBeGreaterThanOrEqual(bandwidths[i]! * (1 - 1e-12)));
    }), { numRuns: 500, seed: 20261130 });
  });
});

/** One-link fixtures with their plans, and variants where loss and distance make the settings matter. */
function oneLinkCases(): [string, Json, PlanSpec][] {
  const cases: [string, Json, PlanSpec][] = [];
  for (const name of ['llama3-405b-two-buildings', 'deepseek-v3-moe-two-sites'] as const) {
    const base = readFixture(name) as Json;
    const plan = readPlanFixture(name) as unknown as PlanSpec;
    cases.push([name, base, plan]);
    for (const [lossRate, rttMs] of [[1e-4, 10], [1e-3, 40], [1e-6, 80]] as const) {
      const variant = clone(base);
      variant.cluster.links[0].lossRate = lossRate;
      variant.cluster.links[0].rttMs = rttMs;
      delete variant.cluster.links[0].distanceKm;
      cases.push([`${name}, loss ${lossRate}, RTT ${rttMs} ms`, variant, plan]);
      const compressed = clone(variant);
      compressed.search = { ...(compressed.search ?? {}), allowGradientCompression: true };
      cases.push([`${name}, loss ${lossRate}, RTT ${rttMs} ms, compression allowed`, compressed, plan]);
    }
  }
  return cases;
}

describe.each(oneLinkCases())('post-solver on one link: %s', (name, spec, plan) => {
  it('reaches the least time over every setting of the link', () => {
    const scenario = parseScenario(spec, name);
    expect(scenario.links.length).toBe(1);
    const { network: _ignored, ...bare } = plan as PlanSpec & { network?: unknown };
    const chosen = chooseNetworkSettings(scenario, bare as PlanSpec);
    const [a, b] = [scenario.sites[scenario.links[0]!.siteA]!.name, scenario.sites[scenario.links[0]!.siteB]!.name];
    const times = linkSettingOptions(scenario, [a, b]).map((setting) => evaluate(scenario, { ...bare, network: [setting] }).predicted.iterationTimeS);
    const least = Math.min(...times);
    expect(chosen.evaluation.predicted.iterationTimeS).toBeCloseTo(least, 12);
    // And with the fewest flows per GPU pair that reach it.
    const setting = chosen.plan.network?.[0];
    expect(setting).toBeDefined();
    for (const flowsPerGpuPair of FLOWS_PER_GPU_PAIR.filter((f) => f < setting!.flowsPerGpuPair)) {
      expect(evaluate(scenario, { ...bare, network: [{ ...setting!, flowsPerGpuPair }] }).predicted.iterationTimeS).toBeGreaterThan(least * (1 + 1e-12));
    }
  });
});
