/**
 * Writes docs/images/report-what-if.png: the report sections "Against your plan", "Why GPUs sit
 * idle" and "What if" of the three-region fixture (`report --what-if --baseline-plan` with its
 * plan in fixtures/plans/, a 10 s search and 10 s per re-plan), screenshotted in headless Chromium.
 * Run with `npm run build && node dist/scripts/report-extras-screenshot.js`.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../src/cli/run';
import { launchChromium } from './browser';

async function main(): Promise<void> {
  const root = path.join(__dirname, '..', '..');
  const html = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-shot-')), 'report.html');
  // Paths relative to the repository, as the report prints them.
  process.chdir(root);
  const code = await runCli(['report', 'fixtures/llama3-70b-three-regions.json', '--html', html, '--what-if',
    '--baseline-plan', 'fixtures/plans/llama3-70b-three-regions.plan.json']);
  if (code !== 0) throw new Error(`report exited ${code}`);
  const out = path.join(root, 'docs', 'images', 'report-what-if.png');
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1180, height: 900 } });
    await page.setContent(fs.readFileSync(html, 'utf8'));
    const first = await page.locator('#baseline-plan').boundingBox();
    const last = await page.locator('#what-if').boundingBox();
    if (!first || !last) throw new Error('the report has no what-if sections');
    const clip = { x: 0, y: first.y - 8, width: 1180, height: last.y + last.height - first.y + 16 };
    await page.screenshot({ path: out, fullPage: true, clip });
  } finally {
    await browser.close();
  }
  process.stdout.write(`wrote ${out} (${(fs.statSync(out).size / 1024).toFixed(0)} KiB)\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
