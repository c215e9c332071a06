/** The report's GPU-budget frontier (`report --pareto`): an inline SVG chart and a table, one point per budget. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { run } from './helpers/run-cli';
import { frontierSection } from '../src/report/frontier-section';
import type { FrontierPoint } from '../src/solve/pareto';
import { fixturePath } from './helpers/fixtures';

jest.setTimeout(60_000);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-report-frontier-'));
const attributes = (page: string, element: string, cls: string, name: string): number[] =>
  [...page.matchAll(new RegExp(`<${element} class="${cls}"[^>]*? ${name}="([^"]+)"`, 'g'))].map((m) => Number(m[1]));

describe('report --pareto', () => {
  const budgets = [1, 2, 3, 4, 8, 16];
  let page = '';
  let printed = '';

  beforeAll(async () => {
    const html = path.join(tmp, 'two-sites.html');
    const result = await run('report', fixturePath('small/two-sites.json'), '--html', html, '--time-limit', '3', '--no-explain-idle', '--pareto', '--budgets', budgets.join(','));
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    printed = result.out;
    page = fs.readFileSync(html, 'utf8');
  });

  it('adds the frontier section with its chart and table', () => {
    expect(page).toContain('<section id="frontier"><h2>GPU-budget frontier</h2>');
    expect(page).toContain(`<svg id="frontier-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 540 360" width="540" height="360" data-points="${budgets.length}">`);
    expect(page).toContain('GPUs at most (log2 scale)');
    expect(page).toMatch(/iteration time \(s(, log scale)?\)/);
    expect(printed).toContain(`GPU-budget frontier of ${budgets.length} budget(s)`);
    // Nothing fetched: no external references in the section.
    const section = /<section id="frontier">[\s\S]*?<\/section>/.exec(page)![0];
    expect(section).not.toMatch(/(href|src)=/);
    // Unpriced: no price column.
    expect(section).not.toContain('$ per hour');
  });

  it('has one point per budget, non-increasing in time as GPUs grow, each above its proven bound', () => {
    const gpus = attributes(page, 'circle', 'frontier-plan', 'data-gpus');
    const times = attributes(page, 'circle', 'frontier-plan', 'data-iteration-s');
    expect(gpus).toEqual(budgets);
    expect(attributes(page, 'tr', 'frontier-point', 'data-gpus')).toEqual(budgets);
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeLessThanOrEqual(times[i - 1]!);
    expect(times[times.length - 1]!).toBeLessThan(times[0]!);
    const bounds = attributes(page, 'rect', 'frontier-bound', 'data-bound-s');
    expect(attributes(page, 'rect', 'frontier-bound', 'data-gpus')).toEqual(budgets);
    bounds.forEach((b, i) => expect(b).toBeLessThanOrEqual(times[i]! * (1 + 1e-12)));
  });

  it('places the budgets on a log2 scale', () => {
    const cx = [...page.matchAll(/<circle class="frontier-plan" data-gpus="(\d+)"[^>]*? cx="([\d.]+)"/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    const x = new Map(cx);
    const octave = x.get(2)! - x.get(1)!;
    expect(octave).toBeGreaterThan(0);
    expect(x.get(4)! - x.get(2)!).toBeCloseTo(octave, 1);
    expect(x.get(16)! - x.get(8)!).toBeCloseTo(octave, 1);
    expect(x.get(3)! - x.get(2)!).toBeCloseTo(octave * Math.log2(1.5), 1);
  });

  it('--budgets needs --pareto, and a bad budget exits 2 before any search', async () => {
    const html = path.join(tmp, 'never.html');
    const without = await run('report', fixturePath('small/two-sites.json'), '--html', html, '--budgets', '4,8');
    expect(without.code).toBe(2);
    expect(without.err).toContain('--budgets needs --pareto');
    const bad = await run('report', fixturePath('small/two-sites.json'), '--html', html, '--pareto', '--budgets', '4,x');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--budgets must be comma-separated positive GPU counts');
    expect(fs.existsSync(html)).toBe(false);
  });
});

describe('the frontier section', () => {
  const point = (gpus: number, iterationTimeS: number | undefined, lowerBoundS: number, usdPerHour?: number): FrontierPoint => (iterationTimeS === undefined
    ? { gpus, status: 'infeasible', lowerBoundS, reasons: [`no plan uses at most ${gpus} GPUs`] }
    : { gpus, status: 'optimal', gpusUsed: gpus, iterationTimeS, lowerBoundS, gap: (iterationTimeS - lowerBoundS) / iterationTimeS, reasons: [], ...(usdPerHour === undefined ? {} : { usdPerHour }) });

  it('is absent without points', () => {
    expect(frontierSection(undefined)).toBe('');
    expect(frontierSection([])).toBe('');
  });

  it('marks a budget no plan fits on the axis, prices the others and uses a log axis over a 10x span', () => {
    const html = frontierSection([point(64, undefined, Infinity), point(128, 700, 690, 282), point(1024, 60, 59.5, 2253)]);
    expect(html).toContain('<path class="frontier-no-plan" data-gpus="64"');
    expect(html).toContain('no plan within the budget');
    expect((html.match(/class="frontier-plan"/g) ?? []).length).toBe(2);
    expect((html.match(/class="frontier-bound"/g) ?? []).length).toBe(2);
    expect(html).toContain('<th>$ per hour</th>');
    expect(html).toContain('<td class="num" style="white-space: nowrap">$2,253</td>');
    expect(html).toContain('none fits');
    expect(html).toContain('iteration time (s, log scale)');
    expect(html).toContain('128 → 1,024 11.67x');
  });

  it('keeps a linear axis from 0 over a small span', () => {
    const html = frontierSection([point(8, 2, 1.9), point(16, 1.2, 1.1)]);
    expect(html).toContain('iteration time (s)</text>');
    expect(html).not.toContain('log scale)</text>');
  });
});
