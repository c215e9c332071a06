/**
 * The README's report screenshot (docs/images/report-two-buildings.png) shows the plan recorded
 * beside it by `npm run report:screenshot`. When the planner's plan for the two-building example
 * changes (a cost-model or search change), this test fails until the screenshot is regenerated.
 */
import * as fs from 'fs';
import * as path from 'path';
import { loadScenario } from '../src/index';
import { plan } from '../src/solve/plan';

const root = path.join(__dirname, '..');
const recorded = JSON.parse(fs.readFileSync(path.join(root, 'docs', 'images', 'report-two-buildings.plan.json'), 'utf8')) as {
  scenario: string; timeLimitS: number; iterationTimeS: number; plan: unknown;
};

it('the two-building example still plans what the README screenshot shows (else: npm run report:screenshot)', async () => {
  const result = await plan(loadScenario(path.join(root, recorded.scenario)), { timeLimitS: recorded.timeLimitS });
  expect(result.plan).toEqual(recorded.plan);
  expect(result.evaluation?.predicted.iterationTimeS).toBeCloseTo(recorded.iterationTimeS, 9);
}, 120_000);
