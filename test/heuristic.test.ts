/**
 * The greedy heuristic (src/solve/heuristic.ts): its placements hold exactly dp replicas and the
 * whole batch, fit the sites' GPUs and memory, and share microbatches by speed on heterogeneous
 * sites.
 */
import { ROWS, scenarioFor } from '../bench/plan-scaling-scenarios';
import { planOfGroups, type ConfigCoefficients, type LayoutGroup } from '../src/formulation/coefficients';
import { FULL_SPACE } from '../src/formulation/search-space';
import { evaluateLayout } from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import { parseScenario, type Scenario } from '../src/model/scenario';
import { enumerateCandidates } from '../src/solve/candidates';
import { concentratedPlacement, greedyPlacement } from '../src/solve/heuristic';
import { clone, readFixture } from './helpers/fixtures';

const evaluateGroups = (scenario: Scenario, c: ConfigCoefficients, groups: readonly LayoutGroup[]) =>
  evaluateLayout(scenario, layOutPlan(scenario, planOfGroups(c, scenario, groups)));

describe('greedy placement', () => {
  it.each(['two-sites', 'three-heterogeneous', 'moe-two-sites'])('places dp replicas and the whole batch within the sites (%s)', (name) => {
    const scenario = parseScenario(readFixture(`small/${name}`), name);
    let placed = 0;
    for (const candidate of enumerateCandidates(scenario, FULL_SPACE)) {
      const c = candidate.coefficients();
      const groups = greedyPlacement(scenario, c);
      if (!groups) continue;
      placed++;
      expect(groups.reduce((sum, g) => sum + g.replicas, 0)).toBe(c.dp);
      expect(groups.reduce((sum, g) => sum + g.replicas * g.microbatches, 0)).toBe(c.totalMicrobatches);
      for (const g of groups) {
        expect(g.replicas).toBeGreaterThan(0);
        expect(g.layout.fittingMicrobatches).toContain(g.microbatches);
      }
      expect(evaluateGroups(scenario, c, groups).fitsResources).toBe(true);
    }
    expect(placed).toBeGreaterThan(0);
  });

  it('falls back to equal shares when steps down cannot hit the batch (fitting counts 1, 2, 4 of 8)', () => {
    // Shares by speed ask 2 B200 replicas x 4 + 2 H100 x 1 = 10 of 8; no fitting count is 3 or 0.
    const scenario = parseScenario(readFixture('small/three-heterogeneous'), 'three');
    const candidate = enumerateCandidates(scenario, FULL_SPACE).find((x) => x.config.pp === 1 && x.dp === 4 && x.config.recompute === 'none' && x.config.schedule === '1f1b')!;
    const groups = greedyPlacement(scenario, candidate.coefficients())!;
    expect(groups).toBeDefined();
    expect(groups.reduce((sum, g) => sum + g.replicas * g.microbatches, 0)).toBe(8);
  });

  it('gives faster GPUs more microbatches (3-site bench row: H100, A100, B200)', () => {
    const scenario = scenarioFor(ROWS.find((r) => r.sites.length === 3)!);
    const candidate = enumerateCandidates(scenario, FULL_SPACE).find((x) => x.config.pp === 1 && x.config.tp === 8 && x.dp === 640
      && x.config.recompute === 'none' && x.config.microBatchSeqs === 1)!;
    const c = candidate.coefficients();
    const groups = greedyPlacement(scenario, c)!;
    const byGpu = (type: string) => groups.filter((g) => scenario.sites[g.layout.layout.sites[0]!]!.gpu.name === type).map((g) => g.microbatches);
    // 1,024 microbatches over 640 replicas: equal shares are impossible; the B200s take the most.
    expect(Math.min(...byGpu('B200'))).toBeGreaterThanOrEqual(Math.max(...byGpu('H100-SXM')));
    expect(Math.min(...byGpu('H100-SXM'))).toBeGreaterThanOrEqual(Math.max(...byGpu('A100-80GB')));
    expect(Math.max(...byGpu('B200'))).toBeGreaterThan(Math.min(...byGpu('A100-80GB')));
  });
});

describe('concentrated placement', () => {
  it('puts whole replicas on the fewest, largest sites, holding dp replicas and the batch', () => {
    // Site b twice the size of a: candidates whose replicas fit in b's 16 GPUs go there alone.
    const spec = clone(readFixture('small/two-sites')) as { cluster: { sites: { gpus: number; gpusPerNode: number }[] } };
    spec.cluster.sites[1]!.gpus = 16;
    const scenario = parseScenario(spec, 'two-sites, b of 16');
    let oneSite = 0;
    for (const candidate of enumerateCandidates(scenario, FULL_SPACE)) {
      const c = candidate.coefficients();
      const groups = concentratedPlacement(scenario, c);
      if (!groups) continue;
      expect(groups.reduce((sum, g) => sum + g.replicas, 0)).toBe(c.dp);
      expect(groups.reduce((sum, g) => sum + g.replicas * g.microbatches, 0)).toBe(c.totalMicrobatches);
      expect(evaluateGroups(scenario, c, groups).fitsResources).toBe(true);
      const sites = new Set(groups.flatMap((g) => g.layout.layout.stageSite));
      const { tp, cp, pp } = c.config;
      if (c.dp * tp * cp * pp <= 16 && groups.every((g) => g.layout.crossings === 0)) {
        expect([...sites]).toEqual([1]);
        oneSite++;
      }
    }
    expect(oneSite).toBeGreaterThan(0);
  });
});
