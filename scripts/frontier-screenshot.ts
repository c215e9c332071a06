/**
 * Writes docs/images/report-frontier-what-if.png: the report sections "GPU-budget frontier" and
 * "What if" of the priced two-building example (`report
 * fixtures/llama3-405b-two-buildings-priced.json --pareto --what-if --what-if
 * 'cluster.links[0].bandwidthGbps=*0.5'`, default time limits), screenshotted in headless Chromium.
 * Run with `npm run report:frontier-screenshot`.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../src/cli/run';
import { launchChromium } from './browser';

const WIDTH_PX = 1180;

async function main(): Promise<void> {
  const root = path.join(__dirname, '..', '..');
  const html = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-shot-')), 'report.html');
  process.chdir(root);
  const code = await runCli(['report', 'fixtures/llama3-405b-two-buildings-priced.json', '--html', html, '--pareto', '--what-if', '--what-if', 'cluster.links[0].bandwidthGbps=*0.5']);
  if (code !== 0) throw new Error(`report exited ${code}`);
  // The page holds the report's head and the two sections only: the plan's timeline (32 stages x
  // 32 microbatches x 64 replicas' worth of ops) is more than the browser needs for them.
  const full = fs.readFileSync(html, 'utf8');
  const sections = ['frontier', 'what-if'].map((id) => full.match(new RegExp(`<section id="${id}">[\\s\\S]*?</section>`))?.[0]);
  if (sections.some((s) => s === undefined)) throw new Error('the report has no frontier or what-if section');
  const page = `${full.slice(0, full.indexOf('<body>') + '<body>'.length)}\n${sections.join('\n')}\n</body></html>\n`;
  const out = path.join(root, 'docs', 'images', 'report-frontier-what-if.png');
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage({ viewport: { width: WIDTH_PX, height: 900 } });
    await tab.setContent(page);
    const first = await tab.locator('#frontier').boundingBox();
    const last = await tab.locator('#what-if').boundingBox();
    if (!first || !last) throw new Error('the sections did not render');
    await tab.screenshot({ path: out, fullPage: true, clip: { x: 0, y: first.y - 8, width: WIDTH_PX, height: last.y + last.height - first.y + 16 } });
  } finally {
    await browser.close();
  }
  process.stdout.write(`wrote ${out} (${(fs.statSync(out).size / 1024).toFixed(0)} KiB)\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
