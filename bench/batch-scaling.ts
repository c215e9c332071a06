/**
 * Batch throughput: a sweep run by the built CLI with --workers 1 and with --workers 2, in the
 * same run (alternating, repeated); prints the wall times, the speedup (workers 1 time / workers 2
 * time) and how many points end at a proven gap within 1%, as docs/benchmarks.md rows.
 * Workloads:
 * - `sweep` (issue 20, item 3): the 1,000-point two-site sweeps, `sweep-small` and `sweep-large`
 *   side by side in one run: two models x five global batches x four sizes of the second site x
 *   five link bandwidths x five RTTs. Small: a 1B-class and Llama 3 8B on 8-64 GPUs per site (the
 *   small two-site fixture in the default plan space); large: Llama 3 70B and 405B on the
 *   two-building example (8,192 H100s and 2,048-16,384 in the second building).
 * - `small` (240 small one-site scenarios, tens of milliseconds of planning each) and
 *   `two-building` (200 variants of the 405B two-building example over link bandwidth, distance
 *   and batch, about a second of planning each): issue 5's workloads.
 * Run: npm run bench:batch, or npm run build && node dist/bench/batch-scaling.js [time limit s, default 2]
 * [repeats, default 1] [sweep|sweep-small|sweep-large|small|two-building, default sweep] [values per axis: keep only the
 * first N values of every axis, for a quicker sample; default all] [cli: another build's dist/src/cli/main.js, to compare]
 * [--markdown FILE: the table also goes into the file's `batch-scaling` section, bench/markdown-section.ts]
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { median } from '../src/calibration/calibration-table';
import { markdownOption, SectionOutput } from './markdown-section';

const { markdownFile, args } = markdownOption(process.argv.slice(2));
const timeLimitS = Number(args[0] ?? 2);
const repeats = Number(args[1] ?? 1);
const workloadArg = args[2] ?? 'sweep';
const valuesPerAxis = args[3] !== undefined && args[3] !== 'all' ? Number(args[3]) : Infinity;
const root = path.join(__dirname, '..', '..');
const cli = args[4] ?? path.join(root, 'dist', 'src', 'cli', 'main.js');
const readFixture = (...parts: string[]) => {
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'fixtures', ...parts), 'utf8')) as Record<string, unknown>;
  delete spec['$schema'];
  return spec;
};
const modelOf = (file: string) => readFixture(file)['model'];
// The small one-site fixture with its `search` block removed: the default plan space (a few
// hundred candidates), so that each scenario is real work (~0.1-0.3 s) that ends well within the
// time limit: wall time then measures CPU work, not waiting for a limit.
const smallBase = readFixture('small', 'one-site.json');
delete smallBase['search'];
const smallTwoSites = readFixture('small', 'two-sites.json');
delete smallTwoSites['search'];
const twoBuildings = readFixture('llama3-405b-two-buildings.json');
const SWEEPS: Record<string, { base: Record<string, unknown>; axes: Record<string, unknown[]> }> = {
  small: {
    base: smallBase,
    axes: {
      'cluster.sites[0].gpuType': ['H100-SXM', 'A100-80GB', 'H200', 'B200', 'H800'],
      'cluster.sites[0].gpus': [8, 16, 24, 32, 48, 64],
      'training.globalBatchSeqs': [8, 16, 32, 64],
      'model.layers': [8, 16],
    },
  },
  'two-building': {
    base: twoBuildings,
    axes: {
      'cluster.links[0].bandwidthGbps': [400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 102400, 204800],
      'cluster.links[0].rttMs': [0.1, 0.6, 2, 10, 30],
      'training.globalBatchSeqs': [1024, 2048, 4096, 8192],
    },
  },
  'sweep-small': {
    base: smallTwoSites,
    axes: {
      model: [smallTwoSites['model'], modelOf('llama3-8b-one-site.json')],
      'training.globalBatchSeqs': [8, 16, 32, 64, 128],
      'cluster.sites[1].gpus': [8, 16, 32, 64],
      'cluster.links[0].bandwidthGbps': [50, 200, 800, 3200, 12800],
      'cluster.links[0].rttMs': [0.1, 1, 5, 20, 60],
    },
  },
  'sweep-large': {
    base: twoBuildings,
    axes: {
      model: [modelOf('llama3-70b-three-regions.json'), modelOf('llama3-405b-two-buildings.json')],
      'training.globalBatchSeqs': [512, 1024, 2048, 4096, 8192],
      'cluster.sites[1].gpus': [2048, 4096, 8192, 16384],
      'cluster.links[0].bandwidthGbps': [800, 3200, 12800, 51200, 204800],
      'cluster.links[0].rttMs': [0.1, 1, 5, 20, 60],
    },
  },
};
const workloads = workloadArg === 'sweep' ? ['sweep-small', 'sweep-large'] : [workloadArg];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-bench-batch-'));

interface RunResult { wallS: number; cpuS: number; summary: string; points: number; withinGap: number; worstGap: number }

function run(sweepFile: string, workers: number): RunResult {
  const out = path.join(dir, `workers-${workers}.ndjson`);
  fs.rmSync(out, { force: true });
  const timeFile = path.join(dir, 'cpu.txt');
  const started = process.hrtime.bigint();
  // GNU time reports the batch process's CPU (its worker threads included): load from other work
  // on a shared machine stretches wall time much more than CPU time.
  const result = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, process.execPath, cli, 'batch', sweepFile, '--out', out, '--workers', String(workers), '--time-limit', String(timeLimitS), '--quiet', '--no-charts'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) throw new Error(`batch --workers ${workers} exited ${result.status}: ${result.stderr}`);
  const [user, sys] = fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  const cpuS = user! + sys!;
  const summary = result.stdout.split('\n').find((line) => /^\d+ scenarios:/.test(line)) ?? '';
  // Every record's own proven gap, read back from the results file (not from the summary).
  const records = fs.readFileSync(out, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { gap: number | null; status: string });
  const gaps = records.map((r) => (typeof r.gap === 'number' ? r.gap : Infinity));
  const withinGap = gaps.filter((g) => g <= 0.01 * (1 + 1e-9)).length;
  return { wallS, cpuS, summary, points: records.length, withinGap, worstGap: Math.max(...gaps) };
}

interface Row { workload: string; scenarios: number; one: number; two: number; cpuOne: number; cpuTwo: number; ratios: number[]; withinGap: number; points: number; worstGap: number; summary: string }
const rows: Row[] = [];
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`batch scaling: ${workloads.join(' and ')}, --time-limit ${timeLimitS}, ${repeats} repeat(s), ${valuesPerAxis === Infinity ? 'every value' : `the first ${valuesPerAxis} values`} of each axis, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), load average ${load()}, CLI ${path.relative(process.cwd(), cli)}`);
for (const workload of workloads) {
  const chosen = SWEEPS[workload];
  if (!chosen) throw new Error(`unknown workload ${workload}: one of sweep, ${Object.keys(SWEEPS).join(', ')}`);
  const axes = Object.fromEntries(Object.entries(chosen.axes).map(([p, values]) => [p, values.slice(0, valuesPerAxis)]));
  const sweep = { version: 1, sweep: `batch-scaling-${workload}`, base: chosen.base, axes };
  const scenarios = Object.values(axes).reduce((n, values) => n * values.length, 1);
  const sweepFile = path.join(dir, `${workload}.sweep.json`);
  fs.writeFileSync(sweepFile, JSON.stringify(sweep));
  const times: Record<1 | 2, number[]> = { 1: [], 2: [] };
  const cpu: Record<1 | 2, number[]> = { 1: [], 2: [] };
  const ratios: number[] = [];
  let last: RunResult | undefined;
  for (let r = 0; r < repeats; r++) {
    // Alternate the order so that drifting load on the shared machine does not favour one side.
    const order: (1 | 2)[] = r % 2 === 0 ? [1, 2] : [2, 1];
    const pair: Partial<Record<1 | 2, number>> = {};
    for (const workers of order) {
      const loadBefore = load();
      const result = run(sweepFile, workers);
      if (workers === 2) last = result;
      pair[workers] = result.wallS;
      times[workers].push(result.wallS);
      cpu[workers].push(result.cpuS);
      console.log(`  ${workload} repeat ${r + 1}: --workers ${workers}: ${result.wallS.toFixed(1)} s wall, ${result.cpuS.toFixed(1)} s CPU, ${result.withinGap} of ${result.points} points at a proven gap <= 1% (worst ${(100 * result.worstGap).toFixed(2)}%), load average before ${loadBefore}  (${result.summary})`);
    }
    ratios.push(pair[1]! / pair[2]!);
    console.log(`  ${workload} repeat ${r + 1}: speedup ${ratios[r]!.toFixed(2)}x`);
  }
  rows.push({ workload, scenarios, one: median(times[1]), two: median(times[2]), cpuOne: median(cpu[1]), cpuTwo: median(cpu[2]), ratios, withinGap: last!.withinGap, points: last!.points, worstGap: last!.worstGap, summary: last!.summary });
}
console.log('');
console.log(`load average at the end: ${load()}`);
const out = new SectionOutput('batch-scaling', markdownFile);
out.line('| workload | scenarios | time limit s | repeats | --workers 1 median wall s | --workers 2 median wall s | speedup (medians) | per-repeat speedups | CPU s, --workers 1 / 2 | points at proven gap <= 1% (--workers 2) | worst gap |');
out.line('|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|');
for (const r of rows) {
  out.line(`| ${r.workload} | ${r.scenarios} | ${timeLimitS} | ${repeats} | ${r.one.toFixed(1)} | ${r.two.toFixed(1)} | ${(r.one / r.two).toFixed(2)}x | ${r.ratios.map((x) => `${x.toFixed(2)}x`).join(', ')} | ${r.cpuOne.toFixed(1)} / ${r.cpuTwo.toFixed(1)} | ${r.withinGap} of ${r.points} | ${(100 * r.worstGap).toFixed(2)}% |`);
}
out.finish();
fs.rmSync(dir, { recursive: true, force: true });
