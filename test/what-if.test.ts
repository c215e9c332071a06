/**
 * `plan --what-if`: each site and link removed, re-planned. What is provable in this model: a plan
 * of the changed scenario whose sites keep their routes is timed the same in the base scenario
 * (src/model/route-changes.ts), so when it also lies in the base search space its time is at least
 * the base's proven lower bound: removing a site or a link never makes the plan faster beyond the
 * gaps. Routes that change (fewest hops, test/scenario-edits.test.ts) are reported, not assumed.
 */
import { editChange, removalChanges, whatIf } from '../src/diagnose/what-if';
import { parseSpecEdit, type SpecEdit } from '../src/model/scenario-edits';
import { maxReplicas, wholeReplicas } from '../src/formulation/coefficients';
import { dataParallelDegrees, type ParallelConfig } from '../src/formulation/search-space';
import { evaluate } from '../src/model/evaluate';
import type { PlanSpec } from '../src/model/plan-schema';
import { plan } from '../src/solve/plan';
import { run } from './helpers/run-cli';
import { fixturePath, loadFixture } from './helpers/fixtures';

jest.setTimeout(60_000);

/** Whether the base search enumerates (configuration, dp) of `p` (its dp list depends on the scenario's GPUs). */
const dpInBaseSpace = (base: ReturnType<typeof loadFixture>, p: PlanSpec): boolean =>
  dataParallelDegrees(base.training.globalBatchSeqs / p.microBatchSeqs, maxReplicas(base, p as unknown as ParallelConfig), wholeReplicas(base, p as unknown as ParallelConfig)).includes(p.dp);

describe('plan --what-if', () => {
  it('removing a site or a link never makes the plan faster than the base bound (three heterogeneous sites)', async () => {
    const base = loadFixture('small/three-heterogeneous');
    const best = await plan(base, { timeLimitS: 3, baselines: false });
    expect(best.bound.proven).toBe(true);
    const baseS = best.evaluation!.predicted.iterationTimeS;
    const changes = removalChanges(base);
    expect(changes.map((c) => c.change)).toEqual(['remove site h100', 'remove site a100', 'remove site b200', 'remove link h100<->a100', 'remove link a100<->b200']);
    const outcomes = await whatIf(base, baseS, changes, { timeLimitS: 2 });
    let checked = 0;
    for (const o of outcomes) {
      expect(o.plan).not.toBeNull();
      expect(o.slowdown!).toBeCloseTo(o.iterationTimeS! / baseS, 12);
      if (o.lowerBoundS !== null) expect(o.lowerBoundS).toBeLessThanOrEqual(o.iterationTimeS! * (1 + 1e-9));
      if (o.reroutes.length > 0) continue;
      // The same plan, evaluated on the base scenario: it fits and takes the same time.
      const again = evaluate(base, o.plan);
      expect(again.fits).toBe(true);
      expect(again.predicted.iterationTimeS).toBeCloseTo(o.iterationTimeS!, 9);
      if (!dpInBaseSpace(base, o.plan!)) continue;
      expect(o.iterationTimeS!).toBeGreaterThanOrEqual(best.bound.lowerBoundS * (1 - 1e-9));
      checked++;
    }
    expect(checked).toBe(outcomes.length);
    // Removing the site the plan runs on costs; a cut chain leaves the job in one part.
    const noB200 = outcomes.find((o) => o.change === 'remove site b200')!;
    expect(noB200.slowdown!).toBeGreaterThan(1);
    expect(outcomes.find((o) => o.change === 'remove site a100')!.groups).toEqual([['h100'], ['b200']]);
  });

  it('a change no plan fits says why, with the diagnosis', async () => {
    const base = loadFixture('small/one-site');
    const change = editChange(base, parseSpecEdit('training.maxIterationTimeS=0.0001') as SpecEdit);
    const [outcome] = await whatIf(base, undefined, [change], { timeLimitS: 2, diagnoseTimeLimitS: 1 });
    expect(outcome).toMatchObject({ change: 'training.maxIterationTimeS=0.0001', status: 'infeasible', iterationTimeS: null, plan: null, slowdown: null });
    expect(outcome!.reasons.length).toBeGreaterThan(0);
    expect(outcome!.reasons.join('\n')).toMatch(/^the required iteration time: /m);
  });

  it('prints the table and the whatIf JSON, and rejects a bad edit in one line naming the option (exit 2)', async () => {
    const scenario = fixturePath('small/three-heterogeneous.json');
    const bad = await run('plan', scenario, '--what-if', 'cluster.links[0].bandwidthGbps=*-1', '--time-limit', '1');
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe("scaleacross: --what-if 'cluster.links[0].bandwidthGbps=*-1': cluster.links[0].bandwidthGbps: must be a positive number (see scaleacross --help)");
    const unreadable = await run('plan', scenario, '--what-if', 'links[0]bandwidth', '--time-limit', '1');
    expect(unreadable.code).toBe(2);
    expect(unreadable.err.trim().split('\n')).toHaveLength(1);
    expect(unreadable.err).toContain("--what-if 'links[0]bandwidth'");
    const result = await run('plan', scenario, '--json', '--no-explain-idle', '--time-limit', '1', '--what-if', 'cluster.links[1].bandwidthGbps=*0.01', '--what-if', 'cluster.sites[b200].gpus=8');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out);
    expect(json.whatIf.map((w: { change: string }) => w.change)).toEqual(['cluster.links[1].bandwidthGbps=*0.01', 'cluster.sites[b200].gpus=8']);
    for (const w of json.whatIf) {
      expect(Object.keys(w)).toEqual(expect.arrayContaining(['change', 'status', 'iterationTimeS', 'lowerBoundS', 'slowdown', 'plan']));
      if (w.plan) expect(w.slowdown).toBeCloseTo(w.iterationTimeS / json.predicted.iterationTimeS, 12);
    }
    const text = await run('plan', scenario, '--no-explain-idle', '--time-limit', '1', '--what-if', 'cluster.sites[b200].gpus=8');
    expect(text.out).toMatch(/What if \(each change re-planned[^\n]*\n\s+change\s+time\s+bound\s+slowdown\s+status\n\s+cluster\.sites\[b200\]\.gpus=8\s+\d/);
  });
});
