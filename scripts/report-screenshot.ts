/**
 * Writes docs/images/report-two-buildings.png: the HTML report of the built-in two-building
 * example (a 10 s search, with bound and baselines), screenshotted in headless Chromium, and
 * beside it the plan it shows (report-two-buildings.plan.json), which
 * test/report-screenshot-plan.test.ts compares with the plan the planner returns today.
 * Run with `npm run report:screenshot`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { loadScenario } from '../src/index';
import { htmlReport } from '../src/report/html-report';
import { reportFromPlanResult } from '../src/report/report-data';
import { plan } from '../src/solve/plan';
import { launchChromium } from './browser';

/** The search's time limit for the screenshot (the CLI's default). */
const SCREENSHOT_TIME_LIMIT_S = 10;

async function main(): Promise<void> {
  const root = path.join(__dirname, '..', '..');
  const scenario = loadScenario(path.join(root, 'fixtures', 'llama3-405b-two-buildings.json'));
  const result = await plan(scenario, { timeLimitS: SCREENSHOT_TIME_LIMIT_S });
  const html = htmlReport(reportFromPlanResult(scenario, result));
  const out = path.join(root, 'docs', 'images', 'report-two-buildings.png');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1180, height: 900 } });
    await page.setContent(html);
    await page.screenshot({ path: out, fullPage: true });
  } finally {
    await browser.close();
  }
  const recorded = path.join(root, 'docs', 'images', 'report-two-buildings.plan.json');
  const shown = { scenario: 'fixtures/llama3-405b-two-buildings.json', timeLimitS: SCREENSHOT_TIME_LIMIT_S, iterationTimeS: result.evaluation?.predicted.iterationTimeS, plan: result.plan };
  fs.writeFileSync(recorded, `${JSON.stringify(shown, null, 2)}\n`);
  process.stdout.write(`wrote ${out} (${(fs.statSync(out).size / 1024).toFixed(0)} KiB) and ${recorded}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
