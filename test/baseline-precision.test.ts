/**
 * A baseline's search proves the share of time our plan saves against its space to within the
 * target gap, not its own time (docs/formulation.md §4, step 8), and `plan` prints what it proved:
 * the space's bound and the least speedup it implies, never above the speedup it prints.
 */
import * as fs from 'fs';
import * as path from 'path';
import { planResultJson, formatPlanResult } from '../src/cli/format-plan';
import { parseScenario } from '../src/model/scenario';
import { defaultBackends, plan } from '../src/solve/plan';
import { threshold, type SearchState } from '../src/solve/search/state';
import type { MipBackend } from '../src/solve/mip-backend';

type Json = any; // a scenario document being edited

const stateWith = (incumbentS: number, gap: number, comparedWithS?: number, requiredS = Infinity): SearchState =>
  ({ requiredS, options: { gap, comparedWithS }, incumbent: { evaluation: { predicted: { iterationTimeS: incumbentS } } } }) as unknown as SearchState;

describe('baseline stopping rule', () => {
  it('prunes at the incumbent less the gap, or where the saved share is proven to the gap, whichever is less', () => {
    expect(threshold(stateWith(0.1, 0.01))).toBeCloseTo(0.099, 15);
    // Ours 5x faster: the saved share 1 - 0.02 / best is known to 1 point once best >= 0.1 / 1.05.
    expect(threshold(stateWith(0.1, 0.01, 0.02))).toBeCloseTo(0.1 / 1.05, 15);
    const atL = threshold(stateWith(0.1, 0.01, 0.02));
    expect(0.02 / atL - 0.02 / 0.1).toBeCloseTo(0.01, 12);
    // A baseline as fast as ours (or faster) keeps the target gap on its own time.
    expect(threshold(stateWith(0.1, 0.01, 0.1))).toBeCloseTo(0.099, 15);
    expect(threshold(stateWith(0.1, 0.01, 0.2))).toBeCloseTo(0.099, 15);
    expect(threshold(stateWith(0.1, 0.01, 0.02, 0.05))).toBe(0.05);
    // Without an incumbent only the required time prunes.
    expect(threshold({ requiredS: 3, options: { gap: 0.01, comparedWithS: 0.02 }, incumbent: undefined } as unknown as SearchState)).toBe(3);
  });
});

describe('plan prints what each baseline proved', () => {
  let backends: MipBackend[];
  beforeAll(() => { backends = defaultBackends(); });
  afterAll(async () => { await Promise.all(backends.map((b) => b.close())); });

  it('on the 50 Gb/s, 60 ms two-site sweep point: pp-across bound, least speedup and the saved share to the gap', async () => {
    const spec: Json = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'small', 'two-sites.json'), 'utf8'));
    delete spec.search;
    Object.assign(spec.cluster.links[0], { bandwidthGbps: 50, rttMs: 60 });
    const scenario = parseScenario(spec);
    const result = await plan(scenario, { timeLimitS: 20, gap: 0.01, backends });
    const oursS = result.evaluation!.predicted.iterationTimeS;
    const ppAcross = result.baselines.find((b) => b.name === 'pp-across')!;
    expect(ppAcross.iterationTimeS).toBeDefined();
    const boundS = ppAcross.bound!.lowerBoundS;
    expect(ppAcross.speedupAtLeast).toBeCloseTo(boundS / oursS, 12);
    expect(ppAcross.speedupAtLeast!).toBeLessThanOrEqual(ppAcross.speedup!);
    expect(ppAcross.speedupAtLeast!).toBeGreaterThan(1);
    // Proven to the gap: on its own time, or on the share of time ours saves (ours / bound - ours / time).
    const savedShareWidth = oursS / boundS - oursS / ppAcross.iterationTimeS!;
    expect(Math.min(ppAcross.bound!.gap, savedShareWidth)).toBeLessThanOrEqual(0.01 * (1 + 1e-9));
    const json = planResultJson(result, scenario);
    expect(json.baselines.find((b) => b.name === 'pp-across')).toMatchObject({ speedupAtLeast: ppAcross.speedupAtLeast, bound: { lowerBoundS: boundS } });
    const line = formatPlanResult(scenario, result).split('\n').find((l) => l.trimStart().startsWith('pp-across'))!;
    expect(line).toContain(`proven: no plan of this space under ${boundS.toFixed(3)} s, ours at least ${ppAcross.speedupAtLeast!.toFixed(2)}x`);
  }, 120_000);
});
