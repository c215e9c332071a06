/**
 * `scaleacross batch` and `merge` end to end, through the built CLI in dist/ (worker threads
 * need compiled JavaScript): kill and resume, crash and timeout isolation, shards merged
 * against the unsharded run, completeness checks, one-line errors for bad input.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { BatchRecord } from '../src/batch/record';
import { deterministicPart } from '../src/batch/record';
import { buildScenarioList } from '../src/batch/scenario-list';
import { inShard } from '../src/batch/shard';
import { run } from './helpers/run-cli';
import { readBatchInputs } from '../src/io/batch-inputs';
import { ROOT, clone, fixturePath, readFixture } from './helpers/fixtures';

const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-batch-'));
const writeJson = (name: string, value: unknown): string => {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
};

interface Run { code: number | null; signal: NodeJS.Signals | null; out: string; err: string }

/** Runs the built CLI; `whenRunning` gets the child to signal it. */
function cli(args: readonly string[], env: Record<string, string> = {}, whenRunning?: (child: ReturnType<typeof spawn>) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out, err }));
    whenRunning?.(child);
  });
}

/** Complete lines of a results file, parsed. */
const records = (file: string): BatchRecord[] => {
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as BatchRecord);
};

/** Signals the child once the results file holds `lines` complete lines. */
function signalAfterLines(file: string, lines: number, signal: NodeJS.Signals) {
  return (child: ReturnType<typeof spawn>): void => {
    const timer = setInterval(() => {
      if (records(file).length >= lines) {
        clearInterval(timer);
        child.kill(signal);
      }
    }, 25);
    child.on('close', () => clearInterval(timer));
  };
}

const expectedIds = (inputs: readonly string[]): string[] => buildScenarioList(readBatchInputs(inputs)).scenarios.map((s) => s.id);
const countBy = (ids: readonly string[]): Map<string, number> => ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>());

describe('scaleacross batch: nothing lost, nothing twice', () => {
  it('SIGKILL mid-run, then SIGINT on the resumed run, then a final resume: every scenario exactly once', async () => {
    const sweep = writeJson('kill.sweep.json', {
      version: 1, sweep: 'kill', base: fixturePath('small/two-sites.json'),
      axes: { 'cluster.links[0].bandwidthGbps': [50, 100, 200, 400, 800, 1600], 'cluster.links[0].rttMs': [1, 10] },
    });
    const out = path.join(tmp, 'kill.ndjson');
    const args = ['batch', sweep, '--out', out, '--time-limit', '0.5', '--workers', '2', '--no-charts'];
    const ids = expectedIds([sweep]);
    expect(ids).toHaveLength(12);

    const killed = await cli(args, {}, signalAfterLines(out, 2, 'SIGKILL'));
    expect(killed.signal).toBe('SIGKILL');
    const afterKill = records(out).length;
    expect(afterKill).toBeGreaterThanOrEqual(2);
    expect(afterKill).toBeLessThan(12);
    // A write cut short by a kill leaves an unterminated line: resume must drop it.
    fs.appendFileSync(out, '{"id":"cut-short","ordi');

    const interrupted = await cli([...args, '--resume'], {}, signalAfterLines(out, afterKill + 1, 'SIGINT'));
    expect(interrupted.code).toBe(130);
    expect(interrupted.err).toContain('dropped an unfinished last line');
    expect(interrupted.err).toMatch(/interrupted: \d+ of 12 done; resume with: scaleacross batch .*kill\.sweep\.json --out .*kill\.ndjson .*--resume/);
    expect(records(out).length).toBeLessThan(12);

    const resumed = await cli([...args, '--resume']);
    expect(resumed.code).toBe(0);
    const all = records(out);
    expect(fs.readFileSync(out, 'utf8').endsWith('\n')).toBe(true);
    expect(all.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect([...countBy(all.map((r) => r.id)).values()].every((n) => n === 1)).toBe(true);
    // Solved, not failed (a heavily loaded machine may leave a scenario `unknown` at 0.5 s).
    expect(all.filter((r) => !['optimal', 'feasible', 'unknown'].includes(r.status))).toEqual([]);
    expect(resumed.out).toMatch(/12 scenarios: /);
  });
});

describe('scaleacross batch: one scenario failing never stops the others', () => {
  const crashSpec = clone(readFixture('small/one-site') as Record<string, unknown>);
  crashSpec['name'] = 'one-site [test-crash]';
  (crashSpec['cluster'] as { sites: { gpus: number }[] }).sites[0]!.gpus = 24;
  const crash = writeJson('crash.json', crashSpec);
  const odd = writeJson('odd.sweep.json', {
    version: 1, sweep: 'odd', base: fixturePath('small/one-site.json'),
    // An invalid generated scenario, and one equal to a point of one-site-gpus but for its name (solved once).
    points: [{ 'cluster.sites[0].gpus': -8 }, { name: 'one-site renamed', 'cluster.sites[0].gpus': 32 }],
  });
  const sweep = fixturePath('sweeps/one-site-gpus.sweep.json');

  it.each(['exit', 'throw'])('a worker crash (SCALEACROSS_TEST_CRASH=%s) is recorded as error, the worker replaced, all others solved', async (mode) => {
    const out = path.join(tmp, `crash-${mode}.ndjson`);
    const run = await cli(['batch', crash, sweep, odd, '--out', out, '--time-limit', '2', '--workers', '2', '--no-charts'], { SCALEACROSS_TEST_CRASH: mode });
    expect(run.code).toBe(0);
    const all = records(out);
    expect(all).toHaveLength(9);
    const crashed = all.find((r) => r.name === 'one-site [test-crash]')!;
    expect(crashed.status).toBe('error');
    expect(crashed.error).toMatch(mode === 'exit' ? /worker exited with code 70/ : /worker crashed: injected crash/);
    const invalid = all.find((r) => r.source.kind === 'sweep' && r.source.sweep === 'odd' && r.source.pointIndex === 0)!;
    expect(invalid.status).toBe('invalid');
    expect(invalid.error).toContain('cluster.sites[0].gpus: must be a positive integer');
    const others = all.filter((r) => r !== crashed && r !== invalid);
    expect(others).toHaveLength(7);
    expect(others.every((r) => r.status === 'optimal' || r.status === 'feasible')).toBe(true);
    const renamed = others.find((r) => r.name === 'one-site renamed')!;
    const original = others.find((r) => r.id === renamed.timing.cachedFrom)!;
    expect(original.name).toBe('one-site');
    expect(renamed.plan).toEqual(original.plan);
    expect(run.out).toContain('1 worker(s) replaced');
    expect(run.out).toContain('1 from the solve cache');
  });

  it('a scenario past its budget is recorded as timeout and the others are solved', async () => {
    const out = path.join(tmp, 'hang.ndjson');
    const run = await cli(['batch', crash, sweep, '--out', out, '--time-limit', '0.5', '--timeout-grace', '1', '--workers', '2', '--no-charts'], { SCALEACROSS_TEST_CRASH: 'hang' });
    expect(run.code).toBe(0);
    const all = records(out);
    expect(all).toHaveLength(7);
    expect(all.filter((r) => r.status === 'timeout').map((r) => r.name)).toEqual(['one-site [test-crash]']);
    expect(all.find((r) => r.status === 'timeout')!.error).toContain('no result within 1.5 s');
    expect(all.filter((r) => r.plan !== null)).toHaveLength(6);
  });

  it('without SCALEACROSS_TEST_CRASH the marker does nothing', async () => {
    const out = path.join(tmp, 'no-hook.ndjson');
    const run = await cli(['batch', crash, '--out', out, '--time-limit', '2', '--no-charts'], { SCALEACROSS_TEST_CRASH: '' });
    expect(run.code).toBe(0);
    expect(records(out).map((r) => r.status)).toEqual(['optimal']);
  });
});

describe('scaleacross batch --shard and merge', () => {
  const inputs = [fixturePath('sweeps/one-site-gpus.sweep.json'), fixturePath('small/one-site.json'), fixturePath('small/infeasible-memory.json')];
  const common = ['--time-limit', '2', '--workers', '2', '--no-charts'];
  const whole = path.join(tmp, 'whole.ndjson');
  const parts = [1, 2, 3].map((i) => path.join(tmp, `part-${i}.ndjson`));

  // Plans are deterministic for equal inputs when the search finishes within its time limit,
  // as these small scenarios do: records are compared in full except `timing`.
  it('shards 1/3, 2/3 and 3/3 merged equal the unsharded run, and the merge is complete', async () => {
    const unsharded = await cli(['batch', ...inputs, '--out', whole, '--csv', path.join(tmp, 'whole.csv'), ...common]);
    expect(unsharded.code).toBe(0);
    const ids = expectedIds(inputs);
    for (const [i, part] of parts.entries()) {
      const run = await cli(['batch', ...inputs, '--out', part, '--shard', `${i + 1}/3`, ...common]);
      expect(run.code).toBe(0);
      expect(records(part).map((r) => r.id).sort()).toEqual(ids.filter((id) => inShard(id, { index: i + 1, count: 3 })).sort());
    }
    const mergedFile = path.join(tmp, 'merged.ndjson');
    const merge = await run('merge', ...parts, '--out', mergedFile);
    expect(merge.code).toBe(0);
    expect(merge.out).toContain('complete: all 7 scenario(s) have a result');
    const merged = records(mergedFile);
    const reference = records(whole).sort((a, b) => a.ordinal - b.ordinal);
    expect(merged.map((r) => r.ordinal)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(merged.map(deterministicPart)).toEqual(reference.map(deterministicPart));
    expect(merged.map((r) => r.status)).toContain('infeasible');
    expect(fs.readFileSync(path.join(tmp, 'whole.csv'), 'utf8').split('\r\n')[0]).toContain('cluster.sites[0].gpus');
    // The baselines' proven bounds travel with the records: the least speedup they imply is at
    // most the speedup over the baseline plan found, and the CSV carries it.
    const withProduction = reference.filter((r) => r.productionSpeedup !== null);
    expect(withProduction.length).toBeGreaterThan(0);
    for (const r of withProduction) {
      expect(r.productionSpeedupAtLeast).not.toBeNull();
      expect(r.productionSpeedupAtLeast!).toBeLessThanOrEqual(r.productionSpeedup! * (1 + 1e-9));
    }
    expect(fs.readFileSync(path.join(tmp, 'whole.csv'), 'utf8').split('\r\n')[0]).toContain('productionSpeedupAtLeast');
  });

  it('merging only some shards reports the missing scenarios and exits 5', async () => {
    const shard3 = records(parts[2]!);
    expect(shard3.length).toBeGreaterThan(0);
    const byOrdinal = await run('merge', parts[0]!, parts[1]!, '--out', path.join(tmp, 'partial.ndjson'));
    expect(byOrdinal.code).toBe(5);
    expect(byOrdinal.err).toContain(`incomplete: ${shard3.length} of 7 scenario(s) have no result`);
    for (const r of shard3) expect(byOrdinal.err).toContain(`missing ordinal ${r.ordinal}`);
    const byId = await run('merge', parts[0]!, parts[1]!, '--out', path.join(tmp, 'partial.ndjson'), '--scenarios', ...inputs);
    expect(byId.code).toBe(5);
    for (const r of shard3) expect(byId.err).toContain(`missing ${r.id} (ordinal ${r.ordinal})`);
    // Duplicates (the same part twice) are dropped.
    const dup = await run('merge', ...parts, parts[0]!, '--out', path.join(tmp, 'dup.ndjson'));
    expect(dup.code).toBe(0);
    expect(records(path.join(tmp, 'dup.ndjson'))).toHaveLength(7);
    expect(dup.out).toContain('duplicate(s) dropped');
    // A part that does not exist is an input error (it had counted as an empty part).
    const absent = path.join(tmp, 'no-such-part.ndjson');
    const missingPart = await run('merge', ...parts, absent, '--out', path.join(tmp, 'with-absent.ndjson'));
    expect(missingPart.code).toBe(2);
    expect(missingPart.err.trim()).toBe(`${absent}: no such file`);
    expect(fs.existsSync(path.join(tmp, 'with-absent.ndjson'))).toBe(false);
  });
});

describe('scaleacross batch: a bad input is recorded as invalid and the rest runs', () => {
  const noUndefined = (text: string): void => expect(text).not.toMatch(/undefined/);

  it('a malformed file and an invalid scenario among the inputs: two invalid records, the valid scenario planned; resume after a fix runs it', async () => {
    const dir = path.join(tmp, 'mixed');
    fs.mkdirSync(dir);
    const bad = path.join(dir, 'bad.json');
    const empty = path.join(dir, 'empty.json');
    const valid = path.join(dir, 'llama3-8b-one-site.json');
    fs.writeFileSync(bad, '{bad');
    fs.writeFileSync(empty, '{}');
    fs.copyFileSync(fixturePath('llama3-8b-one-site.json'), valid);
    const out = path.join(tmp, 'mixed.ndjson');
    const csv = path.join(tmp, 'mixed.csv');
    const args = ['batch', dir, '--out', out, '--csv', csv, '--workers', '1', '--time-limit', '5', '--no-charts'];

    const first = await cli(args);
    expect(first.code).toBe(0);
    const all = records(out);
    expect(all).toHaveLength(3);
    const byFile = new Map(all.map((r) => [r.source.file, r]));
    expect(byFile.get(bad)!.status).toBe('invalid');
    expect(byFile.get(bad)!.error).toBe(`${bad}: malformed JSON at line 1, column 2: unexpected "b"`);
    expect(byFile.get(empty)!.status).toBe('invalid');
    expect(byFile.get(empty)!.error).toBe(`${empty}: version: required (1); name: is required (a string); model: is required (an object); training: is required (an object); cluster: is required (an object)`);
    expect(byFile.get(valid)!.status).toBe('optimal');
    expect(byFile.get(valid)!.plan).not.toBeNull();
    expect(first.out).toContain('3 scenarios: 1 optimal, 2 invalid');
    expect(first.err).toContain('2 invalid input(s), recorded as invalid (fix them and rerun with --resume):');
    expect(first.err).toContain(`  ${bad}: malformed JSON at line 1, column 2: unexpected "b"`);
    expect(first.err).toContain(`  ${empty}: version: required (1); name: is required (a string)`);
    noUndefined(first.out + first.err + fs.readFileSync(out, 'utf8'));
    const rows = fs.readFileSync(csv, 'utf8').split('\r\n');
    expect(rows.filter((row) => row.includes(',invalid,'))).toHaveLength(2);

    // Nothing changed: the resume solves nothing and leaves the file as it was.
    const text = fs.readFileSync(out, 'utf8');
    const again = await cli([...args, '--resume']);
    expect(again.code).toBe(0);
    expect(again.out).toContain('0 solved');
    expect(fs.readFileSync(out, 'utf8')).toBe(text);

    // bad.json fixed (another valid scenario): its invalid record is dropped, it is planned, empty.json stays invalid.
    const fixedSpec = clone(readFixture('small/one-site') as Record<string, unknown>);
    fs.writeFileSync(bad, JSON.stringify(fixedSpec));
    const fixed = await cli([...args, '--resume']);
    expect(fixed.code).toBe(0);
    expect(fixed.err).toContain(`dropped 1 invalid record(s) of input(s) changed since (${bad})`);
    const after = records(out);
    expect(after.map((r) => [r.source.file, r.status]).sort()).toEqual([[bad, 'optimal'], [empty, 'invalid'], [valid, 'optimal']].sort());
    expect(after.find((r) => r.source.file === bad)!.id).not.toBe(byFile.get(bad)!.id);
    // One batch again: merge finds every scenario of it.
    const merged = await run('merge', out, '--out', path.join(tmp, 'mixed-merged.ndjson'));
    expect(merged.code).toBe(0);
    expect(merged.out).toContain('complete: all 3 scenario(s) have a result');
  });

  it('invalid sweeps: a schema error, a missing base and an axis path that fits no point are one record each; a points sweep is recorded per point', async () => {
    const v2 = writeJson('v2.sweep.json', { version: 2, sweep: 'v2', base: fixturePath('small/one-site.json'), axes: { name: ['a'] } });
    const noBase = writeJson('no-base.sweep.json', { version: 1, sweep: 'x', base: 'nowhere.json', axes: { name: ['a'] } });
    const badAxis = writeJson('bad-axis.sweep.json', { version: 1, sweep: 'bad', base: fixturePath('small/two-sites.json'), axes: { 'cluster.links[7].bandwidthGbps': [400, 800] } });
    const points = writeJson('points.sweep.json', {
      version: 1, sweep: 'pts', base: fixturePath('small/one-site.json'),
      points: [{ 'cluster.links[0].rttMs': 1 }, { 'cluster.sites[0].gpus': -8 }, { 'cluster.sites[0].gpus': 16 }],
    });
    const out = path.join(tmp, 'sweeps.ndjson');
    const result = await cli(['batch', v2, noBase, badAxis, points, '--out', out, '--workers', '1', '--time-limit', '2', '--no-charts']);
    expect(result.code).toBe(0);
    const errors = records(out).filter((r) => r.status === 'invalid').map((r) => r.error).sort();
    expect(errors).toEqual([
      `${badAxis}: axes["cluster.links[7].bandwidthGbps"]: index 7 is out of range: cluster.links has 1 element in the base scenario`,
      `${noBase}: base: ${path.join(tmp, 'nowhere.json')}: no such file`,
      `${points}: point 1 (cluster.sites[0].gpus=-8): cluster.sites[0].gpus: must be a positive integer`,
      `${points}: points[0]["cluster.links[0].rttMs"]: index 0 is out of range: cluster.links has 0 elements in the base scenario`,
      `${v2}: version: must be one of 1, got 2`,
    ].sort());
    const solved = records(out).filter((r) => r.status !== 'invalid');
    expect(solved.map((r) => r.source.kind === 'sweep' ? r.source.pointIndex : -1)).toEqual([2]);
    expect(solved[0]!.plan).not.toBeNull();
    expect(result.out).toContain('6 scenarios: 1 optimal, 5 invalid');
    noUndefined(result.out + result.err);
  });
});

describe('scaleacross batch: what stops a batch before it starts exits 2 with one line', () => {
  it('names a missing input and a bad --shard', async () => {
    const missing = await run('batch', path.join(tmp, 'nope.json'), '--out', path.join(tmp, 'x.ndjson'));
    expect(missing.code).toBe(2);
    expect(missing.err.trim()).toBe(`${path.join(tmp, 'nope.json')}: no such file or folder`);
    const shard = await run('batch', fixturePath('small/one-site.json'), '--out', path.join(tmp, 'x.ndjson'), '--shard', '4/3');
    expect(shard.code).toBe(2);
    expect(shard.err.trim()).toBe('scaleacross: --shard 4/3: i must be between 1 and n (see scaleacross --help)');
    expect(fs.existsSync(path.join(tmp, 'x.ndjson'))).toBe(false);
  });

  it('refuses to overwrite results without --resume', async () => {
    const out = writeJson('existing.ndjson', {});
    const result = await run('batch', fixturePath('small/one-site.json'), '--out', out);
    expect(result.code).toBe(2);
    expect(result.err).toContain('already holds results: pass --resume');
  });
});
