/**
 * Why the plan leaves GPUs idle: the re-plan with search.allowIdleGpus false (every GPU used) and
 * the reason read off what it returns.
 */
import { explainIdleGpus } from '../src/diagnose/idle-gpus';
import { run } from './helpers/run-cli';
import { evaluate } from '../src/model/evaluate';
import { parseScenario } from '../src/model/scenario';
import { forbidIdleGpus } from '../src/model/scenario-edits';
import { plan } from '../src/solve/plan';
import { clone, fixturePath, loadFixture, readFixture, readPlanFixture } from './helpers/fixtures';

jest.setTimeout(90_000);

describe('idle GPUs', () => {
  it('on the three-region fixture: east\'s idle H100s come with their reason and the time of the best plan using them', async () => {
    const scenario = loadFixture('llama3-70b-three-regions');
    // The fixture's plan leaves 1,024 of east's 2,048 H100s idle (and GPUs at the other two sites).
    const current = evaluate(scenario, readPlanFixture('llama3-70b-three-regions'));
    const baseS = current.predicted.iterationTimeS;
    const explanation = (await explainIdleGpus(scenario, current, { timeLimitS: 4 }))!;
    const east = explanation.sites.find((s) => s.site === 'east')!;
    expect(east).toMatchObject({ idle: 1024, gpus: 2048 });
    expect(explanation.sites.map((s) => s.site)).toEqual(['east', 'central', 'west']);
    // The plan using every GPU is a real plan: it fits, leaves nothing idle and takes the time reported.
    const using = evaluate(parseScenario(forbidIdleGpus(scenario.spec)), explanation.planUsingThem);
    expect(using.fits).toBe(true);
    expect(using.predicted.gpusIdle).toBe(0);
    expect(using.predicted.iterationTimeS).toBeCloseTo(east.planUsingThemS!, 9);
    // The reason is read off the re-plan: slower (with both times, proven only by its bound), or not slower.
    if (east.planUsingThemS! > baseS) {
      expect(explanation.kind).toBe('slower');
      expect(east.reason).toContain(`using them is slower: ${east.planUsingThemS!.toFixed(3)} s vs ${baseS.toFixed(3)} s`);
      expect(explanation.proven).toBe(explanation.lowerBoundUsingThemS != null && explanation.lowerBoundUsingThemS >= baseS);
    } else {
      expect(explanation.kind).toBe('not-slower');
      expect(east.reason).toContain('not slower');
    }
  });

  it('plan says why in text and JSON whenever its plan leaves GPUs idle', async () => {
    const result = await run('plan', fixturePath('llama3-70b-three-regions.json'), '--json', '--time-limit', '4');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out);
    const idleSites = json.predicted.sites.filter((s: { gpusIdle: number }) => s.gpusIdle > 0);
    expect(json.idleGpus.map((s: { site: string; idle: number }) => [s.site, s.idle])).toEqual(idleSites.map((s: { site: string; gpusIdle: number }) => [s.site, s.gpusIdle]));
    for (const s of json.idleGpus) {
      expect(s.reason).toMatch(/\S/);
      if (s.planUsingThemS !== undefined) expect(s.reason).toContain(s.planUsingThemS.toFixed(3));
    }
    const text = await run('plan', fixturePath('llama3-70b-three-regions.json'), '--time-limit', '4');
    const idle = Number(/GPUs +\d+ used, (\d+) idle/.exec(text.out)![1]);
    if (idle > 0) expect(text.out).toMatch(/\n\nIdle GPUs \(re-planned with search\.allowIdleGpus: false: every GPU used\)\n {2}\w+: [\d,]+ of [\d,]+ GPUs idle: \S/);
    else expect(text.out).not.toContain('Idle GPUs');
  });

  it('when no plan can use every GPU, says why with the diagnosis (a batch of 2 on 16 GPUs, tp and pp fixed at 1)', async () => {
    const spec = clone(readFixture('small/one-site')) as { training: { globalBatchSeqs: number }; search: Record<string, unknown> };
    spec.training.globalBatchSeqs = 2;
    spec.search = { ...spec.search, tp: [1], pp: [1], microBatchSeqs: [1] };
    const scenario = parseScenario(spec);
    const best = await plan(scenario, { timeLimitS: 2, baselines: false });
    expect(best.evaluation!.predicted.gpusIdle).toBe(14);
    const explanation = (await explainIdleGpus(scenario, best.evaluation!, { timeLimitS: 2, diagnoseTimeLimitS: 1 }))!;
    expect(explanation.kind).toBe('no-plan');
    expect(explanation.sites).toEqual([{ site: 'dc', idle: 14, gpus: 16, reason: expect.stringMatching(/^no plan uses every GPU: /) }]);
    expect(explanation.reasons.length).toBeGreaterThan(0);
    expect(explanation.planUsingThem).toBeUndefined();
  });

  it('says nothing when no GPU is idle', async () => {
    const scenario = loadFixture('small/one-site');
    const forced = parseScenario(forbidIdleGpus(scenario.spec));
    const best = await plan(forced, { timeLimitS: 2, baselines: false });
    expect(best.evaluation!.predicted.gpusIdle).toBe(0);
    expect(await explainIdleGpus(forced, best.evaluation!)).toBeUndefined();
  });
});
