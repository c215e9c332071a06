/**
 * Time from page load to the first plan of the two-building example in the explorer (issue 23
 * goal: under 3 s): `scaleacross explore --no-open` serves the page, headless Chromium opens it in
 * a fresh browser context each run (nothing cached), and the page records when its first plan
 * appeared, counted from the navigation's start (performance.now()). Prints each run, the median,
 * and the machine's load average. The last run's page is saved as docs/images/explorer.png.
 * Run: npm run bench:explorer [runs]
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import { availableParallelism } from 'os';
import * as path from 'path';
import { launchChromium } from '../scripts/browser';

const ROOT = path.join(__dirname, '..', '..');
const runs = Number(process.argv[2] ?? 5);

function startExplore(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'explore', '--port', '0', '--no-open'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
      if (url) resolve({ url: url[0], stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (code) => reject(new Error(`explore exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const server = await startExplore();
  const browser = await launchChromium();
  const rows: { firstPlanS: number; solveS: number; iterationTimeS: number; gap: string }[] = [];
  try {
    for (let run = 1; run <= runs; run++) {
      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      const page = await context.newPage();
      await page.goto(server.url);
      await page.waitForFunction(() => (globalThis as unknown as { document: { body: { dataset: Record<string, string | undefined> } } }).document.body.dataset['firstPlanMs'] !== undefined, undefined, { timeout: 60_000, polling: 20 });
      const firstPlanS = Number(await page.getAttribute('body', 'data-first-plan-ms')) / 1000;
      const detail = (await page.textContent('#status-detail')) ?? '';
      const solveS = Number(/planned in ([\d.]+) s/.exec(detail)?.[1]);
      const iterationTimeS = Number(await page.getAttribute('[data-testid="iteration-time"]', 'data-value'));
      const gap = (await page.textContent('[data-testid="gap"]')) ?? '';
      rows.push({ firstPlanS, solveS, iterationTimeS, gap });
      process.stdout.write(`run ${run}: first plan ${firstPlanS.toFixed(2)} s after navigation start (search ${solveS.toFixed(1)} s in the worker), ${iterationTimeS.toFixed(4)} s per iteration, gap ${gap}\n`);
      if (run === runs) {
        const out = path.join(ROOT, 'docs', 'images', 'explorer.png');
        await page.screenshot({ path: out, fullPage: true });
        process.stdout.write(`wrote ${out}\n`);
      }
      await context.close();
    }
  } finally {
    await browser.close();
    server.stop();
  }
  const sorted = rows.map((r) => r.firstPlanS).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  process.stdout.write(`median first plan ${median.toFixed(2)} s (min ${sorted[0]!.toFixed(2)}, max ${sorted[sorted.length - 1]!.toFixed(2)}) over ${runs} runs; goal < 3 s; load average ${load} on ${availableParallelism()} cores\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
