/**
 * Writes docs/images/report-cost-section.png: the cost section of the HTML report of the priced
 * two-building example (fixtures/llama3-405b-two-buildings-priced.json) with the plan
 * `plan --objective cost --max-training-days 120` chooses there, screenshotted in headless
 * Chromium.
 * Run with `npm run report:cost-screenshot`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { FULL_SPACE } from '../src/formulation/search-space';
import { loadScenario } from '../src/index';
import { htmlReport } from '../src/report/html-report';
import { reportFromPlanResult } from '../src/report/report-data';
import { minimiseCost } from '../src/solve/cost-objective';
import { defaultBackends, defaultConcurrentBackends } from '../src/solve/plan';
import { launchChromium } from './browser';

const TIME_LIMIT_S = 20;
/** The run must finish within this many days (plan --max-training-days). */
const MAX_TRAINING_DAYS = 120;

async function main(): Promise<void> {
  const root = path.join(__dirname, '..', '..');
  const scenario = loadScenario(path.join(root, 'fixtures', 'llama3-405b-two-buildings-priced.json'));
  const backends = defaultBackends();
  const concurrentBackends = defaultConcurrentBackends();
  let html: string;
  try {
    const cost = await minimiseCost(scenario, { maxTrainingDays: MAX_TRAINING_DAYS }, TIME_LIMIT_S, { gap: 0.01, backends, concurrentBackends, restriction: FULL_SPACE });
    // The page holds the report's head and its cost section only: this plan's timeline (64 stages
    // x 1,024 microbatches) is larger than the browser needs to load for one section.
    const full = htmlReport(reportFromPlanResult(scenario, cost.result));
    const section = full.match(/<section id="cost">[\s\S]*?<\/section>/)![0];
    html = `${full.slice(0, full.indexOf('<body>') + '<body>'.length)}\n${section}\n</body></html>\n`;
  } finally {
    await Promise.all([...backends, ...concurrentBackends].map((b) => b.close()));
  }
  const out = path.join(root, 'docs', 'images', 'report-cost-section.png');
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1180, height: 900 } });
    await page.setContent(html);
    await page.locator('#cost').screenshot({ path: out });
  } finally {
    await browser.close();
  }
  process.stdout.write(`wrote ${out} (${(fs.statSync(out).size / 1024).toFixed(0)} KiB)\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
