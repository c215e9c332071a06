/** The report's sections for --baseline-plan, idle GPUs and --what-if. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { run } from './helpers/run-cli';
import { evaluate } from '../src/model/evaluate';
import { fixturePath, loadFixture } from './helpers/fixtures';

jest.setTimeout(60_000);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-report-extras-'));

describe('report --what-if --baseline-plan', () => {
  it('shows the speedup over the given plan, why GPUs sit idle and the what-if table', async () => {
    const scenarioFile = fixturePath('small/three-heterogeneous.json');
    // Today's plan: two replicas on the H100s.
    const today = { tp: 2, pp: 1, dp: 2, microBatchSeqs: 1, schedule: '1f1b', placement: { replicaGroups: [{ replicas: 2, stageSites: [{ site: 'h100', stages: 1 }] }] } };
    const todayFile = path.join(tmp, 'today.json');
    fs.writeFileSync(todayFile, JSON.stringify(today));
    const html = path.join(tmp, 'report.html');
    const result = await run('report', scenarioFile, '--html', html, '--time-limit', '2', '--what-if', '--baseline-plan', todayFile);
    expect(result.code).toBe(0);
    const page = fs.readFileSync(html, 'utf8');
    const scenario = loadFixture('small/three-heterogeneous');
    const todayS = evaluate(scenario, today).predicted.iterationTimeS;
    const oursS = Number(/Predicted ([\d.]+) (m?s) per iteration/.exec(page)![1]) * (/Predicted [\d.]+ ms/.test(page) ? 1e-3 : 1);
    const speedup = Number(/data-speedup="([^"]+)"/.exec(page)![1]);
    // The page prints its time rounded; the attribute carries the exact ratio.
    expect(speedup * oursS).toBeCloseTo(todayS, 4);
    expect(page).toContain('<section id="idle-gpus"><h2>Why GPUs sit idle</h2>');
    expect(page).toContain('<section id="what-if"><h2>What if</h2>');
    const rows = [...page.matchAll(/<tr class="what-if"><td[^>]*>([^<]+)<\/td>/g)].map((m) => m[1]);
    expect(rows).toEqual(['remove site h100', 'remove site a100', 'remove site b200', 'remove link h100&lt;-&gt;a100', 'remove link a100&lt;-&gt;b200']);
  });

  it('a given plan that does not fit is listed with its reasons', async () => {
    const tooBig = { tp: 2, pp: 1, dp: 4, microBatchSeqs: 1, schedule: '1f1b', placement: { replicaGroups: [{ replicas: 4, stageSites: [{ site: 'h100', stages: 1 }] }] } };
    const file = path.join(tmp, 'too-big.json');
    fs.writeFileSync(file, JSON.stringify(tooBig));
    const html = path.join(tmp, 'too-big.html');
    const result = await run('report', fixturePath('small/three-heterogeneous.json'), '--html', html, '--time-limit', '1', '--no-explain-idle', '--baseline-plan', file);
    expect(result.code).toBe(0);
    const page = fs.readFileSync(html, 'utf8');
    expect(page).toContain('It does not fit this scenario:');
    expect(page).toContain('h100 has 4 GPUs, the plan uses 8');
    expect(page).not.toContain('id="idle-gpus"');
  });
});
