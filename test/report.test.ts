/** The HTML report, opened in headless Chromium: timeline, site map and tables render with the fixture's real counts. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../scripts/browser';
import { runCli } from '../src/cli/run';
import { parseScenario } from '../src/model/scenario';
import { htmlReport } from '../src/report/html-report';
import { reportFromGivenPlan } from '../src/report/report-data';
import { fixturePath, readFixture, readPlanFixture, ROOT } from './helpers/fixtures';

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
  return { code, out, err };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-report-'));
const screenshots = path.join(ROOT, 'test-output');
let browser: Browser;

beforeAll(async () => { browser = await launchChromium(); });
afterAll(async () => { await browser?.close(); });

/** Opens a report file; collects console errors and failed requests (there must be none: the file is self-contained). */
async function open(file: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1180, height: 900 } });
  const problems: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('request', (request) => { if (!request.url().startsWith('file:')) problems.push(`fetched ${request.url()}`); });
  await page.goto(`file://${file}`);
  return { page, problems };
}

const count = (page: Page, selector: string) => page.locator(selector).count();
const distinct = async (page: Page, selector: string, attribute: string) =>
  new Set(await page.locator(selector).evaluateAll((els, a) => els.map((e) => e.getAttribute(a)), attribute)).size;

describe('report of a given plan (two buildings)', () => {
  it('renders the plan table, timeline, site map and memory with the plan\'s counts; no console errors', async () => {
    const html = path.join(tmp, 'two-buildings.html');
    const result = await run('report', fixturePath('llama3-405b-two-buildings.json'), '--plan', fixturePath('plans/llama3-405b-two-buildings.plan.json'), '--html', html);
    expect(result.code).toBe(0);
    const { page, problems } = await open(html);
    // pp 16, 2 chunks, 16 microbatches per replica: forward and backward of each on each stage.
    expect(await count(page, '#pipeline-timeline g.stage-lane')).toBe(16);
    expect(await page.getAttribute('#pipeline-timeline', 'data-microbatches')).toBe('16');
    expect(await distinct(page, '#pipeline-timeline rect.op', 'data-microbatch')).toBe(16);
    expect(await count(page, '#pipeline-timeline rect.op[data-kind="forward"]')).toBe(16 * 2 * 16);
    expect(await count(page, '#pipeline-timeline rect.op[data-kind="backward"]')).toBe(16 * 2 * 16);
    expect(await count(page, '#pipeline-timeline rect.bubble')).toBeGreaterThan(0);
    expect(await count(page, '#site-map g.site')).toBe(2);
    expect(await page.getAttribute('#site-map g.site[data-site="bldg-a"]', 'data-gpus')).toBe('8192');
    expect(await count(page, '#site-map g.link')).toBe(1);
    expect(await page.locator('#site-map g.link').textContent()).toMatch(/51,200 Gb\/s · RTT 0\.60 ms · [\d.]+% busy/);
    expect(await count(page, '#plan-table tr.replica-group')).toBe(2);
    expect(await page.locator('#plan-bound').textContent()).toContain('none: this plan was given');
    expect(await count(page, '#memory-chart g.memory-site')).toBe(2);
    expect(await count(page, '#breakdown-chart g.bar')).toBe(1);
    expect(await page.locator('#pipeline-timeline').isVisible()).toBe(true);
    fs.mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: path.join(screenshots, 'report-two-buildings.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  it('draws cross-site sends on the link lane (pipeline across the buildings)', async () => {
    const html = path.join(tmp, 'pp-across.html');
    const result = await run('report', fixturePath('llama3-405b-two-buildings.json'), '--plan', fixturePath('plans/llama3-405b-pp-across-no-recompute.plan.json'), '--html', html);
    expect(result.code).toBe(0);
    const { page, problems } = await open(html);
    // Chain of 32 virtual stages crosses at 7->8, 15->16 (wrap) and 23->24: two link lanes, 3 hops x 2 directions x 32 microbatches.
    expect(await count(page, '#pipeline-timeline g.link-lane')).toBe(2);
    expect(await count(page, '#pipeline-timeline g.send')).toBe(3 * 2 * 32);
    expect(await page.locator('#violations').textContent()).toMatch(/needs [\d.]+ GiB per GPU/);
    expect(problems).toEqual([]);
  });
});

describe('report from a search', () => {
  it('small two-site scenario: bound and gap, baselines beside ours', async () => {
    const html = path.join(tmp, 'two-sites.html');
    const result = await run('report', fixturePath('small/two-sites.json'), '--html', html, '--time-limit', '8');
    expect(result.code).toBe(0);
    const { page, problems } = await open(html);
    expect(await page.locator('#plan-bound').textContent()).toMatch(/on every plan in the search space/);
    expect(await page.locator('#plan-gap').textContent()).toMatch(/\d+\.\d%/);
    expect(await count(page, '#breakdown-chart g.bar')).toBe(3);
    // Each baseline with the least speedup its proven bound gives, never above the speedup printed.
    const table = (await page.locator('#breakdown-table + p').textContent())!;
    const pairs = [...table.matchAll(/ours is ([\d.]+)x faster \(at least ([\d.]+)x proven\)/g)];
    expect(pairs).toHaveLength(2);
    for (const [, speedup, atLeast] of pairs) expect(Number(atLeast)).toBeLessThanOrEqual(Number(speedup));
    expect(await count(page, '#site-map g.site')).toBe(2);
    const pp = Number(await page.getAttribute('#pipeline-timeline', 'data-stages'));
    expect(await count(page, '#pipeline-timeline g.stage-lane')).toBe(pp);
    expect(problems).toEqual([]);
  });

  it('infeasible: "Why no plan fits" with the diagnosis (conflicting requirements, verified fixes), exit 3', async () => {
    const html = path.join(tmp, 'infeasible.html');
    const result = await run('report', fixturePath('small/infeasible-memory.json'), '--html', html);
    expect(result.code).toBe(3);
    const { page, problems } = await open(html);
    expect(await page.locator('#diagnosis h2').textContent()).toBe('Why no plan fits');
    // The minimal conflicting set of this fixture: memory per GPU and GPU count at the one site.
    expect(await count(page, '#diagnosis li.diagnosis-item')).toBe(2);
    expect(await page.locator('#diagnosis').textContent()).toMatch(/needs [\d.]+ GiB per GPU at lab/);
    expect(await page.locator('#diagnosis').textContent()).toMatch(/add 112 GPUs to lab/);
    expect(await count(page, '#pipeline-timeline')).toBe(0);
    expect(problems).toEqual([]);
  });
});

describe('report input handling', () => {
  it('escapes user text (scenario and site names)', () => {
    const spec = readFixture('llama3-405b-two-buildings') as { name: string };
    spec.name = '<script>alert(1)</script>&"';
    const scenario = parseScenario(spec);
    const html = htmlReport(reportFromGivenPlan(scenario, readPlanFixture('llama3-405b-two-buildings'), 'plan<1>.json'));
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;');
    expect(html).toContain('plan&lt;1&gt;.json');
  });

  it('a bad plan file: one line naming the file and JSON path, exit 2', async () => {
    const bad = path.join(tmp, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ ...readPlanFixture('llama3-405b-two-buildings'), dp: 64 }));
    const result = await run('report', fixturePath('llama3-405b-two-buildings.json'), '--plan', bad, '--html', path.join(tmp, 'x.html'));
    expect(result.code).toBe(2);
    expect(result.err.trim()).toBe(`${bad}: plan.placement.replicaGroups: hold 128 replicas in all, dp is 64`);
  });
});
