/**
 * Issue 23: the explorer page, served by `scaleacross explore` and driven in headless Chromium.
 * The page plans the two-building example in its Web Worker and finds the CLI's iteration time
 * within the gap; a tenth of the link's bandwidth gives a new, slower plan; an invalid edit shows
 * the CLI's message next to the field; an infeasible fixture loaded from a file shows the
 * diagnosis, and applying a fix gives a plan; a sweep of a small scenario's link plots a time per
 * point and marks each change of the plan's shape. The console stays clean and every request goes
 * to the page's own origin.
 */
import { execFile, spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_PATH, launchChromium } from '../scripts/browser';
import { evaluate } from '../src/model/evaluate';
import type { PlanSpec } from '../src/model/plan-schema';
import { parseScenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { ROOT, clone, fixturePath, readFixture } from './helpers/fixtures';

const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const describeWithChromium = fs.existsSync(CHROMIUM_PATH) ? describe : describe.skip;

/** Seconds the page may take for one plan or diagnosis on a loaded 2-core machine. */
const WAIT_MS = 40_000;

let server: ChildProcess | undefined;
let origin = '';
let browser: Browser | undefined;
let page: Page;
const problems: string[] = [];
const requests: string[] = [];

/** Starts `explore --port 0 --no-open` and reads the URL it prints. */
function startExplore(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'explore', fixturePath('llama3-405b-two-buildings.json'), '--port', '0', '--no-open'], { stdio: ['ignore', 'pipe', 'pipe'] });
    server = child;
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
      if (url) resolve(url[0]);
    });
    child.stderr!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    child.on('exit', (code) => reject(new Error(`explore exited with ${code}: ${out}`)));
  });
}

const text = (testid: string) => page.locator(`[data-testid="${testid}"]`).textContent();
const value = async (testid: string) => Number(await page.locator(`[data-testid="${testid}"]`).getAttribute('data-value'));

/** Waits until the status is one of `statuses` and differs from what `before` shows (another plan). */
async function waitForStatus(statuses: readonly string[], planJsonBefore?: string): Promise<string> {
  await page.waitForFunction(([wanted, before]) => {
    // Runs in the page (the tests' TypeScript has no DOM library).
    const doc = (globalThis as unknown as { document: { querySelector(selector: string): { textContent: string | null } | null } }).document;
    const status = doc.querySelector('[data-testid="status"]')?.textContent ?? '';
    const json = doc.querySelector('[data-testid="plan-json"]')?.textContent ?? '';
    return wanted.includes(status) && (before === '' || json !== before);
  }, [statuses, planJsonBefore ?? ''] as const, { timeout: WAIT_MS, polling: 100 });
  return (await text('status'))!;
}

describeWithChromium('scaleacross explore', () => {
  beforeAll(async () => {
    origin = (await startExplore()).replace(/\/$/, '');
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    context.on('request', (request) => requests.push(request.url()));
    page = await context.newPage();
    page.on('console', (message) => { if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`); });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('worker', (worker) => worker.on('console', (message) => { if (message.type() === 'error' || message.type() === 'warning') problems.push(`worker ${message.type()}: ${message.text()}`); }));
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
  });

  it('plans the two-building example with the iteration time of plan --json, within the gap', async () => {
    // The built CLI, in its own process, while the page plans.
    const cli = new Promise<{ predicted: { iterationTimeS: number }; bound: { gap: number } }>((resolve, reject) => {
      execFile(process.execPath, [CLI, 'plan', fixturePath('llama3-405b-two-buildings.json'), '--json'], (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))));
    });
    await page.goto(`${origin}/`);
    expect(await waitForStatus(['optimal', 'feasible'])).toBeDefined();
    const pageS = await value('iteration-time');
    const pageGap = await value('gap');
    expect(await text('iteration-time')).toBe(pageS.toFixed(4));
    expect(await text('gap')).toBe(`${(100 * pageGap).toFixed(2)}%`);
    const planJson = JSON.parse((await page.locator('[data-testid="plan-json"]').textContent())!) as { predicted: { iterationTimeS: number }; plan: { tp: number } };
    expect(planJson.predicted.iterationTimeS).toBe(pageS);
    const cliResult = await cli;
    const cliS = cliResult.predicted.iterationTimeS;
    // Both are within their own gap of the same optimum.
    expect(Math.abs(pageS - cliS) / Math.max(pageS, cliS)).toBeLessThanOrEqual(Math.max(pageGap, cliResult.bound.gap) + 1e-9);
    // The report's drawings are there.
    expect(await page.locator('#site-map g.site').count()).toBe(2);
    expect(await page.locator('#pipeline-timeline').count()).toBe(1);
    expect(await page.locator('#breakdown-table th').allTextContents()).toEqual(['part', 'ours', 'production', 'pp-across']);
    fs.mkdirSync(path.join(ROOT, 'test-output'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'test-output', 'explorer.png') });
  }, 60_000);

  it('re-plans when the link gets a tenth of its bandwidth: a new, slower plan', async () => {
    const before = await value('iteration-time');
    const jsonBefore = (await page.locator('[data-testid="plan-json"]').textContent())!;
    const bandwidth = page.locator('[data-testid="link-bandwidth-0"]');
    expect(Number(await bandwidth.inputValue())).toBe(51200);
    await bandwidth.fill('5120');
    await waitForStatus(['optimal', 'feasible'], jsonBefore);
    expect(await value('iteration-time')).toBeGreaterThan(before);
  }, 60_000);

  it('plans with a memory reserve typed in: 4 GiB per GPU at both sites, every site under 76 GiB', async () => {
    for (const i of [0, 1]) {
      const before = (await page.locator('[data-testid="plan-json"]').textContent())!;
      await page.locator(`input[data-path="cluster.sites[${i}].memoryReserveGiB"]`).fill('4');
      await waitForStatus(['optimal', 'feasible'], before);
    }
    const shown = JSON.parse((await page.locator('[data-testid="plan-json"]').textContent())!) as { predicted: { sites: { memoryGiBPerGpu: number; memoryCapacityGiB: number; memoryReserveGiB?: number }[] } };
    for (const site of shown.predicted.sites) {
      expect(site.memoryCapacityGiB).toBe(76);
      expect(site.memoryReserveGiB).toBe(4);
      expect(site.memoryGiBPerGpu).toBeLessThanOrEqual(76);
    }
  }, 60_000);

  it('shows the CLI\'s validation message next to an invalid field', async () => {
    const gpus = page.locator('[data-testid="site-gpus-0"]');
    await gpus.fill('0');
    await waitForStatus(['invalid']);
    const spec = clone(readFixture('llama3-405b-two-buildings')) as { cluster: { sites: { gpus: number; memoryReserveGiB?: number }[]; links: { bandwidthGbps: number }[] } };
    spec.cluster.links[0]!.bandwidthGbps = 5120;
    for (const site of spec.cluster.sites) site.memoryReserveGiB = 4;
    spec.cluster.sites[0]!.gpus = 0;
    let cliMessage = '';
    try {
      parseScenario(spec);
    } catch (error) {
      cliMessage = (error as ScenarioValidationError).issues.find((i) => i.path === 'cluster.sites[0].gpus')!.message;
    }
    expect(cliMessage).not.toBe('');
    expect(await page.locator('[data-error-for="cluster.sites[0].gpus"]').textContent()).toBe(cliMessage);
    // Saved, the scenario holds both edits (each edit starts from the one before).
    const [saved] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid="save-scenario"]').click()]);
    expect(JSON.parse(fs.readFileSync((await saved.path())!, 'utf8'))).toEqual(spec);
  }, 30_000);

  it('diagnoses an infeasible scenario loaded from a file; applying a verified fix gives a plan', async () => {
    await page.locator('[data-testid="load-scenario"]').setInputFiles(fixturePath('infeasible/gpu-count.json'));
    await waitForStatus(['infeasible']);
    const fixes = page.locator('[data-testid="apply-fix"]');
    expect(await fixes.count()).toBeGreaterThan(0);
    // The fix that adds GPUs: its button names the path it changes.
    await page.locator('[data-testid="apply-fix"][data-path="cluster.sites[0].gpus"]').first().click();
    await waitForStatus(['optimal', 'feasible']);
    expect(await value('iteration-time')).toBeGreaterThan(0);
    expect(Number(await page.locator('[data-testid="site-gpus-0"]').inputValue())).toBe(32);
  }, 60_000);

  it('sweeps a link\'s bandwidth: a time per point, and each change of the plan\'s shape marked', async () => {
    await page.locator('[data-testid="fixture-select"]').selectOption('fixtures/small/two-sites.json');
    await waitForStatus(['optimal', 'feasible']);
    const target = page.locator('[data-testid="sweep-target"]');
    // The choices follow the scenario: its link and both sites.
    expect(await target.locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value))).toEqual(['cluster.links[0].bandwidthGbps', 'cluster.sites[0].gpus', 'cluster.sites[1].gpus']);
    await target.selectOption('cluster.links[0].bandwidthGbps');
    await page.locator('[data-testid="sweep-run"]').click();
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('.sweep-points li').length === 7, undefined, { timeout: WAIT_MS });
    const points = (await page.locator('.sweep-points li').allTextContents()).map((line) => {
      const match = /^([\d,.]+): ([\d.]+) s, (.*?)( \(new shape\))?$/.exec(line)!;
      return { gbps: Number(match[1]!.replace(/,/g, '')), seconds: Number(match[2]), shape: match[3]!, marked: match[4] !== undefined };
    });
    // 1/8 to 8 times the link's 200 Gb/s, doubling.
    expect(points.map((p) => p.gbps)).toEqual([25, 50, 100, 200, 400, 800, 1600]);
    // More bandwidth never makes the best plan slower (each point within the 1% gap).
    for (let i = 1; i < points.length; i++) expect(points[i]!.seconds).toBeLessThanOrEqual(points[i - 1]!.seconds * 1.0101);
    points.forEach((p, i) => expect(p.marked).toBe(i > 0 && p.shape !== points[i - 1]!.shape));
    expect(await page.locator('#sweep svg circle').count()).toBe(7);
    expect(await page.locator('#sweep svg circle[r="6"]').count()).toBe(points.filter((p) => p.marked).length);
  }, 60_000);

  it('plans with Adam\'s moments in bf16 chosen in the form: the optimizer state of the plan shown is 8 bytes per parameter, not 12', async () => {
    const moments = page.locator('select[data-path="training.optimizerMomentsDtype"]');
    expect(await moments.inputValue()).toBe('fp32');
    const before = (await page.locator('[data-testid="plan-json"]').textContent())!;
    await moments.selectOption('bf16');
    await waitForStatus(['optimal', 'feasible'], before);
    const [saved] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid="save-scenario"]').click()]);
    const spec = JSON.parse(fs.readFileSync((await saved.path())!, 'utf8')) as { training: Record<string, unknown> };
    expect(spec.training['optimizerMomentsDtype']).toBe('bf16');
    const shown = JSON.parse((await page.locator('[data-testid="plan-json"]').textContent())!) as { plan: PlanSpec; predicted: { peakMemory: { optimizerGiB: number } } };
    expect(shown.plan.zero).toBeGreaterThanOrEqual(1);
    const withBf16 = evaluate(parseScenario(spec), shown.plan);
    const withFp32 = evaluate(parseScenario({ ...spec, training: { ...spec.training, optimizerMomentsDtype: 'fp32' } }), shown.plan);
    expect(shown.predicted.peakMemory.optimizerGiB).toBeCloseTo(withBf16.predicted.peakMemory.optimizerGiB, 9);
    expect(withBf16.predicted.peakMemory.optimizerGiB).toBeCloseTo((withFp32.predicted.peakMemory.optimizerGiB * 8) / 12, 9);
  }, 60_000);

  it('kept the console clean and fetched nothing from another origin', () => {
    expect(problems).toEqual([]);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'))).toEqual([]);
  });
});
