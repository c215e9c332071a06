/**
 * The solver report's bound holder (solver.boundHolder, src/solve/search/finish.ts): the
 * candidate whose bound is the global bound, the family that gave it, and the candidates left
 * under the pruning threshold.
 */
import { parseScenario } from '../src/model/scenario';
import { defaultBackends, plan } from '../src/solve/plan';
import type { MipBackend } from '../src/solve/mip-backend';
import { readFixture } from './helpers/fixtures';

const FAMILIES = ['quick', 'span-floor', 'outer', 'capacity', 'forced-spanning', 'zero3-gathers', 'layout-capacity', 'ring-pattern', 'pipeline-caps', 'mip', 'threshold', 'enumerated'];

let backends: MipBackend[];
beforeAll(() => { backends = defaultBackends(); });
afterAll(async () => { await Promise.all(backends.map((b) => b.close())); });

describe('bound holder', () => {
  it.each(['two-sites', 'three-heterogeneous', 'moe-two-sites'])('holds the printed bound, names its family, and leaves nothing open once the gap is closed: %s', async (name) => {
    const scenario = parseScenario(readFixture(`small/${name}`), name);
    const result = await plan(scenario, { timeLimitS: 30, gap: 0.01, baselines: false, backends });
    const holder = result.solver.boundHolder;
    expect(holder).toBeDefined();
    expect(FAMILIES).toContain(holder!.source);
    expect(holder!.config).toMatch(/^tp \d+ cp \d+ ep \d+ pp \d+ /);
    expect(holder!.dp).toBeGreaterThanOrEqual(1);
    // The printed bound is the holder's, capped at the plan's time.
    expect(result.bound.lowerBoundS).toBeCloseTo(Math.min(holder!.boundS, result.evaluation!.predicted.iterationTimeS), 12);
    if (result.status === 'optimal' && !result.solver.timedOut) expect(holder!.open).toBe(0);
  }, 120_000);
});
