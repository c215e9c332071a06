/**
 * Issue 20, item 5: a killed or timed-out `plan`, `plan --exhaustive` or `batch` leaves nothing
 * running. Each run starts the built CLI as the leader of its own process group, signals it
 * mid-run (checked to be still running, with its worker threads started), and then checks
 * through /proc that neither the process, nor any process of its group, nor any descendant of it
 * remains; for `batch`, also that its results file holds the records finished before the signal,
 * each a whole line.
 */
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { BatchRecord } from '../src/batch/record';
import { ROOT, clone, fixturePath, readFixture } from './helpers/fixtures';

const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-strays-'));
const onLinux = fs.existsSync('/proc/self/stat');

interface ProcInfo { pid: number; ppid: number; pgrp: number; state: string }

/** Every process /proc lists now (zombies included: they are reported by state). */
function processes(): ProcInfo[] {
  const list: ProcInfo[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended while listing
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    list.push({ pid: Number(entry), state: rest[0]!, ppid: Number(rest[1]), pgrp: Number(rest[2]) });
  }
  return list;
}

/** The process, its descendants and the members of its process group that are still alive (not zombies). */
function leftOf(pid: number): ProcInfo[] {
  const all = processes().filter((p) => p.state !== 'Z');
  const inTree = new Set<number>([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) if (!inTree.has(p.pid) && inTree.has(p.ppid)) { inTree.add(p.pid); grew = true; }
  }
  return all.filter((p) => inTree.has(p.pid) || p.pgrp === pid);
}

/** Threads of a live process (main thread, V8's and libuv's, and every worker thread). */
const threadsOf = (pid: number): number => fs.readdirSync(`/proc/${pid}/task`).length;

interface Run { code: number | null; signal: NodeJS.Signals | null; err: string; threadsWhenSignalled: number; baseThreads: number }

/**
 * Starts the CLI with `args` as a process-group leader; `signalWhen` says when to send `signal`
 * (undefined: let it end by itself). Resolves when it has exited.
 */
function runCli(args: readonly string[], signal: NodeJS.Signals | undefined, signalWhen: (child: ChildProcess) => Promise<void>): Promise<Run & { pid: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    child.on('error', reject);
    let threadsWhenSignalled = 0;
    let baseThreads = 0;
    // Node's own threads, before the CLI starts any worker.
    try { baseThreads = threadsOf(child.pid!); } catch { /* already gone */ }
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on('close', (code, sig) => done({ code, signal: sig })));
    void (async () => {
      await signalWhen(child);
      if (signal && child.exitCode === null && child.signalCode === null) {
        threadsWhenSignalled = threadsOf(child.pid!);
        child.kill(signal);
      }
      const ended = await closed;
      resolve({ ...ended, err, threadsWhenSignalled, baseThreads, pid: child.pid! });
    })().catch(reject);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until `pid` runs more than `threads` threads (its workers have started), at most `maxMs`. */
async function untilThreadsAbove(pid: number, threads: number, maxMs: number): Promise<void> {
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    try {
      if (threadsOf(pid) > threads) return;
    } catch {
      return;
    }
    await sleep(25);
  }
}

/** After a short wait, nothing of the run is left. */
async function expectNothingLeft(pid: number): Promise<void> {
  await sleep(500);
  expect(leftOf(pid)).toEqual([]);
}

const records = (file: string): BatchRecord[] => {
  const text = fs.readFileSync(file, 'utf8');
  // Every line whole: a kill may cut at most an unterminated tail, which batch's signal handling never leaves.
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as BatchRecord);
};

(onLinux ? describe : describe.skip)('no stray processes after a kill or a timeout', () => {
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it.each(['SIGTERM', 'SIGINT'] as const)('plan killed by %s mid-search (MIP workers running): nothing left', async (signal) => {
    // The 3-region fixture plans for a few seconds with its HiGHS workers busy.
    const run = await runCli(['plan', fixturePath('llama3-70b-three-regions.json'), '--quiet', '--time-limit', '20'], signal, async (child) => {
      await untilThreadsAbove(child.pid!, threadsOf(child.pid!), 5000);
      await sleep(1200);
    });
    expect(run.threadsWhenSignalled).toBeGreaterThan(run.baseThreads); // it was running, with its worker threads
    expect(run.signal).toBe(signal); // killed mid-run, not finished
    await expectNothingLeft(run.pid);
  }, 60_000);

  it('plan --exhaustive killed by SIGTERM mid-enumeration: nothing left', async () => {
    // The two-building example: its exhaustive enumeration runs for minutes even with symmetry and
    // bounds (the one-site 8B fixture's now finishes in about a second, before any kill).
    const run = await runCli(['plan', fixturePath('llama3-405b-two-buildings.json'), '--exhaustive', '--quiet', '--time-limit', '60'], 'SIGTERM', () => sleep(2000));
    expect(run.signal).toBe('SIGTERM');
    await expectNothingLeft(run.pid);
  }, 60_000);

  it('plan whose time limit runs out ends by itself, its workers with it', async () => {
    const started = Date.now();
    const run = await runCli(['plan', fixturePath('llama3-70b-three-regions.json'), '--quiet', '--time-limit', '1'], undefined, async () => undefined);
    expect([0, 3]).toContain(run.code);
    // The time limit covers the search; a lingering worker would keep the process alive far longer.
    expect(Date.now() - started).toBeLessThan(30_000);
    await expectNothingLeft(run.pid);
  }, 60_000);

  it.each(['SIGTERM', 'SIGINT'] as const)('batch on a folder stopped by %s after its first results: nothing left, finished records kept', async (signal) => {
    const folder = fs.mkdtempSync(path.join(tmp, `batch-${signal}-`));
    const base = readFixture('small/two-sites') as Record<string, unknown>;
    delete base['search'];
    for (let i = 0; i < 12; i++) {
      const spec = clone(base) as { name: string; training: { globalBatchSeqs: number }; cluster: { links: { bandwidthGbps: number }[] } };
      spec.name = `stray-${i}`;
      spec.training.globalBatchSeqs = 8 * (1 + (i % 4));
      spec.cluster.links[0]!.bandwidthGbps = 100 * (1 + i);
      fs.writeFileSync(path.join(folder, `s${i}.json`), JSON.stringify(spec));
    }
    const out = path.join(tmp, `batch-${signal}.ndjson`);
    const run = await runCli(['batch', folder, '--out', out, '--workers', '2', '--time-limit', '3', '--quiet', '--no-charts'], signal, async () => {
      const end = Date.now() + 45_000;
      while (Date.now() < end && (!fs.existsSync(out) || records(out).length < 1)) await sleep(25);
    });
    const written = records(out);
    expect(written.length).toBeGreaterThanOrEqual(1);
    expect(written.length).toBeLessThan(12); // stopped mid-run
    for (const r of written) expect(['optimal', 'feasible', 'infeasible', 'unknown']).toContain(r.status);
    expect(new Set(written.map((r) => r.id)).size).toBe(written.length);
    expect(run.code).toBe(signal === 'SIGTERM' ? 143 : 130);
    expect(run.err).toMatch(signal === 'SIGTERM' ? /^terminated: \d+ of 12 done; resume with: / : /^interrupted: \d+ of 12 done; resume with: /m);
    await expectNothingLeft(run.pid);
  }, 90_000);
});
