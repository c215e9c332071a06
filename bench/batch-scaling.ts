/**
 * Batch throughput: the same sweep run by the built CLI with --workers 1 and with --workers 2,
 * in the same run (alternating, repeated); prints the wall times and the speedup (workers 1 time
 * / workers 2 time) as a docs/benchmarks.md row. Workloads: `small` (240 small one-site
 * scenarios, tens of milliseconds of planning each) and `two-building` (200 variants of the
 * 405B two-building example over link bandwidth, distance and batch: a capacity planner's sweep,
 * about a second of planning each).
 * Run: npm run bench:batch  (or: npm run build && node dist/bench/batch-scaling.js [time limit s, default 2] [repeats, default 3] [small|two-building, default small])
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { median } from '../src/calibration/calibration-table';

const timeLimitS = Number(process.argv[2] ?? 2);
const repeats = Number(process.argv[3] ?? 3);
const root = path.join(__dirname, '..', '..');
const cli = path.join(root, 'dist', 'src', 'cli', 'main.js');
// The small one-site fixture with its `search` block removed: the default plan space (a few
// hundred candidates), so that each scenario is real work (~0.1-0.3 s) that ends well within the
// time limit: wall time then measures CPU work, not waiting for a limit.
const workload = process.argv[4] ?? 'small';
const readFixture = (...parts: string[]) => {
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'fixtures', ...parts), 'utf8')) as Record<string, unknown>;
  delete spec['$schema'];
  return spec;
};
const smallBase = readFixture('small', 'one-site.json');
delete smallBase['search'];
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
    base: readFixture('llama3-405b-two-buildings.json'),
    axes: {
      'cluster.links[0].bandwidthGbps': [400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 102400, 204800],
      'cluster.links[0].rttMs': [0.1, 0.6, 2, 10, 30],
      'training.globalBatchSeqs': [1024, 2048, 4096, 8192],
    },
  },
};
const chosen = SWEEPS[workload];
if (!chosen) throw new Error(`unknown workload ${workload}: one of ${Object.keys(SWEEPS).join(', ')}`);
const sweep = { version: 1, sweep: `batch-scaling-${workload}`, ...chosen };
const scenarios = Object.values(sweep.axes).reduce((n, values) => n * values.length, 1);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-bench-batch-'));
const sweepFile = path.join(dir, 'batch-scaling.sweep.json');
fs.writeFileSync(sweepFile, JSON.stringify(sweep));

function run(workers: number): { wallS: number; summary: string } {
  console.log(`load average before --workers ${workers}: ${os.loadavg()[0]!.toFixed(2)}`);
  const out = path.join(dir, `workers-${workers}.ndjson`);
  fs.rmSync(out, { force: true });
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [cli, 'batch', sweepFile, '--out', out, '--workers', String(workers), '--time-limit', String(timeLimitS), '--quiet', '--no-charts'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) throw new Error(`batch --workers ${workers} exited ${result.status}: ${result.stderr}`);
  const summary = result.stdout.split('\n').find((line) => /^\d+ scenarios:/.test(line)) ?? '';
  return { wallS, summary };
}


console.log(`batch scaling: ${scenarios} scenarios (${workload} sweep), --time-limit ${timeLimitS}, ${repeats} repeat(s), ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'})`);
const times: Record<1 | 2, number[]> = { 1: [], 2: [] };
const ratios: number[] = [];
for (let r = 0; r < repeats; r++) {
  // Alternate the order so that drifting load on the shared machine does not favour one side.
  const order: (1 | 2)[] = r % 2 === 0 ? [1, 2] : [2, 1];
  const pair: Partial<Record<1 | 2, number>> = {};
  for (const workers of order) {
    const result = run(workers);
    pair[workers] = result.wallS;
    times[workers].push(result.wallS);
    console.log(`  repeat ${r + 1}: --workers ${workers}: ${result.wallS.toFixed(1)} s  (${result.summary})`);
  }
  ratios.push(pair[1]! / pair[2]!);
  console.log(`  repeat ${r + 1}: speedup ${ratios[r]!.toFixed(2)}x`);
}
const one = median(times[1]);
const two = median(times[2]);
const speedup = one / two;
console.log(`median --workers 1: ${one.toFixed(1)} s, median --workers 2: ${two.toFixed(1)} s, speedup of the medians ${speedup.toFixed(2)}x (ideal 2.00x); per-repeat speedups ${ratios.map((x) => x.toFixed(2)).join(', ')}`);
console.log('');
console.log('| workload | scenarios | time limit s | repeats | --workers 1 median wall s | --workers 2 median wall s | speedup (medians) | per-repeat speedups |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
console.log(`| ${workload} | ${scenarios} | ${timeLimitS} | ${repeats} | ${one.toFixed(1)} | ${two.toFixed(1)} | ${speedup.toFixed(2)}x | ${ratios.map((x) => `${x.toFixed(2)}x`).join(', ')} |`);
fs.rmSync(dir, { recursive: true, force: true });
