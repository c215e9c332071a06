/**
 * `export --bundle`: for the three multi-site fixtures (and a small one whose sites have 4 and 8
 * GPUs per node) and both frameworks, a bundle whose
 * ranks.csv has exactly the plan's GPUs per site in the framework's rank order, launch scripts that
 * are valid bash and reproduce that order (run against stand-ins for torchrun, srun, scontrol and
 * python), a JobSet that parses as YAML with one Indexed Job per site, and an nccl.env of known
 * NCCL variables.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse as parseCsv } from 'csv-parse/sync';
import { runCli } from '../src/cli/run';
import { buildBundle, type BundleFile } from '../src/export/bundle';
import { exportMegatron } from '../src/export/megatron';
import { socketSettings } from '../src/export/nccl-env';
import { exportTorchtitan } from '../src/export/torchtitan';
import { evaluateLayout } from '../src/model/evaluate';
import { layOutPlan } from '../src/model/placement';
import { parseScenario } from '../src/model/scenario';
import { clone, fixturePath, loadFixture, readFixture, readPlanFixture, ROOT } from './helpers/fixtures';

// js-yaml comes with jest's own dependencies (no YAML parser is a direct dependency).
const yaml = require('js-yaml') as { safeLoadAll(text: string): unknown[] };

const NCCL_NAMES = new Set(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'nccl-env-vars.txt'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-bundle-'));

interface PlanJson {
  tp: number; cp?: number; pp: number; dp: number; microBatchSeqs?: number; schedule?: string;
  placement: { replicaGroups: { replicas: number; stageSites: { site: string; stages: number }[]; microbatches?: number }[] };
  network?: { between: [string, string]; transport: string; flowsPerGpuPair: number }[];
}

/** Plans both frameworks run as planned: the fixtures' plans, with what a framework cannot express taken out. */
const launchable: Record<string, () => PlanJson> = {
  'llama3-405b-two-buildings': () => readPlanFixture('llama3-405b-two-buildings') as unknown as PlanJson,
  // One microbatch count for every replica group (the fixture gives each region its own, which neither framework can run).
  'llama3-70b-three-regions': () => {
    const plan = clone(readPlanFixture('llama3-70b-three-regions')) as unknown as PlanJson;
    for (const group of plan.placement.replicaGroups) delete group.microbatches;
    return plan;
  },
  // 1F1B instead of ZB-H1, which neither framework runs with one stage per rank.
  'deepseek-v3-moe-two-sites': () => ({ ...(clone(readPlanFixture('deepseek-v3-moe-two-sites')) as unknown as PlanJson), schedule: '1f1b' }),
  // Sites with 4 and 8 GPUs per node: stage 0 of both replicas on two 4-GPU nodes at a, stage 1 on one 8-GPU node at b.
  'small/two-sites': () => ({
    tp: 4, pp: 2, dp: 2, microBatchSeqs: 1, schedule: '1f1b',
    placement: { replicaGroups: [{ replicas: 2, stageSites: [{ site: 'a', stages: 1 }, { site: 'b', stages: 1 }] }] },
  }) as PlanJson,
};

/** Site of every (stage, replica), straight from the plan's replica groups. */
function siteOf(plan: PlanJson): (stage: number, replica: number) => string {
  const replicaStages: string[][] = [];
  for (const group of plan.placement.replicaGroups) {
    const stages = group.stageSites.flatMap((run) => Array.from({ length: run.stages }, () => run.site));
    for (let r = 0; r < group.replicas; r++) replicaStages.push(stages);
  }
  return (stage, replica) => replicaStages[replica]![stage]!;
}

function gpusPerSite(plan: PlanJson): Map<string, number> {
  const out = new Map<string, number>();
  for (const group of plan.placement.replicaGroups) {
    for (const run of group.stageSites) out.set(run.site, (out.get(run.site) ?? 0) + group.replicas * run.stages * plan.tp * (plan.cp ?? 1));
  }
  return out;
}

const fileOf = (files: readonly BundleFile[], name: string): string => {
  const file = files.find((f) => f.path === name);
  if (file === undefined) throw new Error(`bundle has no ${name}`);
  return file.content;
};

function writeTo(dir: string, files: readonly BundleFile[]): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of files) fs.writeFileSync(path.join(dir, f.path), f.content, { mode: f.executable ? 0o755 : 0o644 });
}

/** A folder of stand-in commands that print what they were asked to run. */
function fakeTools(dir: string): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const tool = (name: string, body: string) => fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  // torchrun: print the node rank and processes per node it was given.
  tool('torchrun', 'for a in "$@"; do case "$a" in --node-rank=*) echo "node-rank ${a#*=}";; --nproc-per-node=*) echo "nproc ${a#*=}";; --nnodes=*) echo "nnodes ${a#*=}";; esac; done');
  // python: print the rank the launcher exported.
  tool('python', 'echo "rank $RANK local $LOCAL_RANK world $WORLD_SIZE master $MASTER_ADDR"');
  tool('scontrol', 'echo "$3"; echo host-other');
  // srun: run the task for the first and last node and local rank of its component.
  tool('srun', [
    'for a in "$@"; do case "$a" in --nodes=*) n=${a#*=};; --ntasks-per-node=*) g=${a#*=};; esac; done',
    'cmd=("${@: -3}")',
    'for node in 0 $((n - 1)); do for local in 0 $((g - 1)); do',
    '  SLURM_NODEID=$node SLURM_LOCALID=$local "${cmd[@]}"',
    'done; done',
  ].join('\n'));
  return bin;
}

type Row = { rank: number; site: string; node: number; local_rank: number; stage: number; replica: number };
const readRanks = (text: string): Row[] =>
  parseCsv(text, { columns: true, cast: (value, context) => (context.header || context.column === 'site' ? value : Number(value)) }) as Row[];

describe.each(Object.keys(launchable))('launch bundle for %s', (name) => {
  const scenario = loadFixture(name);
  const plan = launchable[name]!();
  const layout = layOutPlan(scenario, plan);

  it('the plan fits (so the bundle launches a plan the cost model accepts)', () => {
    const evaluation = evaluateLayout(scenario, layout);
    expect(evaluation.violations).toEqual([]);
    expect(evaluation.fits).toBe(true);
  });

  describe.each(['megatron', 'torchtitan'] as const)('%s', (framework) => {
    const result = framework === 'megatron' ? exportMegatron(scenario, layout) : exportTorchtitan(scenario, layout);
    const bundle = buildBundle(scenario, layout, result, `${name}.plan.json`);
    const files = bundle.ok ? bundle.files : [];
    const dir = path.join(tmp, `${name}-${framework}`);
    const gpn = new Map(scenario.sites.map((s) => [s.name, s.gpusPerNode]));

    it('is built (the export has no error)', () => {
      expect(result.messages.filter((m) => m.severity === 'error')).toEqual([]);
      expect(bundle.ok).toBe(true);
      const names = files.map((f) => f.path);
      for (const required of ['README.md', framework === 'megatron' ? 'megatron-args.txt' : 'job.toml', 'ranks.csv', 'nccl.env', 'slurm.sbatch', 'k8s.yaml']) expect(names).toContain(required);
      const sitesUsed = [...gpusPerSite(plan).keys()];
      expect(names.filter((n) => /^torchrun-.*\.sh$/.test(n))).toHaveLength(sitesUsed.length);
      writeTo(dir, files);
      for (const f of files) expect(f.content).not.toMatch(/undefined|NaN/);
    });

    it('ranks.csv: ranks 0..N-1 in the framework order, exactly the plan\'s GPUs per site, each (site, node, local rank) once', () => {
      const rows = readRanks(fileOf(files, 'ranks.csv'));
      expect(fileOf(files, 'ranks.csv').split('\n')[0]).toBe('rank,site,node,local_rank,stage,replica');
      const tp = plan.tp;
      const cp = plan.cp ?? 1;
      expect(rows).toHaveLength(tp * cp * plan.pp * plan.dp);
      const where = siteOf(plan);
      const counted = new Map<string, number>();
      const slots = new Set<string>();
      const nodeRanks = new Map<string, number[]>();
      // Checked row by row, mismatches collected (one expect per row would take half a minute on 16,384 rows).
      const wrong: string[] = [];
      rows.forEach((row, i) => {
        // rank = ((stage * dp + replica) * cp + cpRank) * tp + tpRank, in both frameworks' default orders.
        const stage = Math.floor(i / (plan.dp * cp * tp));
        const replica = Math.floor(i / (cp * tp)) % plan.dp;
        if (row.rank !== i || row.stage !== stage || row.replica !== replica || row.site !== where(stage, replica)) wrong.push(`row ${i}: ${JSON.stringify(row)}`);
        if (!(row.local_rank >= 0 && row.local_rank < gpn.get(row.site)!)) wrong.push(`row ${i}: local rank ${row.local_rank}`);
        counted.set(row.site, (counted.get(row.site) ?? 0) + 1);
        const slot = `${row.site}/${row.node}/${row.local_rank}`;
        if (slots.has(slot)) wrong.push(`row ${i}: ${slot} again`);
        slots.add(slot);
        const key = `${row.site}/${row.node}`;
        const onNode = nodeRanks.get(key);
        if (onNode) onNode.push(row.rank);
        else nodeRanks.set(key, [row.rank]);
      });
      expect(wrong).toEqual([]);
      expect(counted).toEqual(gpusPerSite(plan));
      for (const [site, count] of counted) {
        // Nodes of a site are numbered 0..K-1, each full, each running consecutive ranks with local rank = rank - first.
        const nodes = [...nodeRanks.keys()].filter((k) => k.startsWith(`${site}/`)).map((k) => Number(k.slice(site.length + 1))).sort((a, b) => a - b);
        expect(nodes).toEqual(Array.from({ length: count / gpn.get(site)! }, (_, n) => n));
      }
      const badNodes = [...nodeRanks].filter(([key, ranks]) => ranks.length !== gpn.get(key.split('/')[0]!)
        || ranks.some((rank, k) => rank !== ranks[0]! + k || rows[rank]!.local_rank !== k));
      expect(badNodes).toEqual([]);
      expect(nodeRanks.size).toBeGreaterThan(0);
      // The rank map the export prints agrees with every row.
      for (const range of result.rankMap.ranges) {
        for (const rank of [range.firstRank, range.lastRank]) expect(rows[rank]!.site).toBe(range.site);
      }
    });

    it('scripts are valid bash; torchrun and Slurm start every rank ranks.csv lists where it lists it', () => {
      const scripts = files.filter((f) => f.executable);
      expect(scripts.length).toBeGreaterThanOrEqual(2);
      for (const script of scripts) {
        const check = spawnSync('bash', ['-n', path.join(dir, script.path)], { encoding: 'utf8' });
        expect(check.stderr).toBe('');
        expect(check.status).toBe(0);
      }
      const rows = readRanks(fileOf(files, 'ranks.csv'));
      const firstRank = new Map<string, number>();
      for (const row of rows) if (!firstRank.has(`${row.site}/${row.node}`)) firstRank.set(`${row.site}/${row.node}`, row.rank);
      const nodeCount = new Set(rows.map((r) => `${r.site}/${r.node}`)).size;
      // Global node rank -> first rank: torchrun numbers ranks by node rank, each node adding its processes.
      const nodesInOrder = [...firstRank.entries()].sort((a, b) => a[1] - b[1]).map(([key]) => key);
      const bin = fakeTools(dir);
      const env = { ...process.env, PATH: `${bin}:${process.env['PATH']}`, MASTER_ADDR: 'host-a', MEGATRON_DIR: '/opt/megatron', BUNDLE_DIR: dir };
      for (const site of [...gpusPerSite(plan).keys()]) {
        const nodes = [...firstRank.keys()].filter((k) => k.startsWith(`${site}/`)).length;
        const script = files.find((f) => f.path.startsWith('torchrun-') && f.content.includes(`one node of ${site} (`))!;
        for (const node of [0, Math.floor(nodes / 2), nodes - 1]) {
          const run = spawnSync('bash', [path.join(dir, script.path), String(node)], { encoding: 'utf8', env });
          expect(run.stderr).toBe('');
          const nodeRank = Number(run.stdout.match(/node-rank (\d+)/)![1]);
          expect(nodesInOrder[nodeRank]).toBe(`${site}/${node}`);
          expect(run.stdout).toContain(`nnodes ${nodeCount}`);
          expect(run.stdout).toContain(`nproc ${gpn.get(site)}`);
        }
        const outOfRange = spawnSync('bash', [path.join(dir, script.path), String(nodes)], { encoding: 'utf8', env });
        expect(outOfRange.status).toBe(2);
      }
      // The rendezvous host is the first host of the component holding rank 0 (each stand-in list starts with host-<k>).
      const components = [...gpusPerSite(plan).keys()];
      const nodeLists = Object.fromEntries(components.map((_, k) => [`SLURM_JOB_NODELIST_HET_GROUP_${k}`, `host-${k}`]));
      const slurm = spawnSync('bash', [path.join(dir, 'slurm.sbatch')], { encoding: 'utf8', env: { ...env, MASTER_ADDR: '', ...nodeLists, SLURM_SUBMIT_DIR: dir } });
      expect(slurm.stderr).toBe('');
      expect(slurm.status).toBe(0);
      const rankZeroSite = scenario.sites.findIndex((s) => s.name === rows[0]!.site);
      const componentOfRankZero = scenario.sites.filter((s, i) => i < rankZeroSite && gpusPerSite(plan).has(s.name)).length;
      expect(new Set([...slurm.stdout.matchAll(/master (\S+)/g)].map((m) => m[1]))).toEqual(new Set([`host-${componentOfRankZero}`]));
      const started = [...slurm.stdout.matchAll(/rank (\d+) local (\d+) world (\d+)/g)].map((m) => ({ rank: Number(m[1]), local: Number(m[2]), world: Number(m[3]) }));
      const sites = [...gpusPerSite(plan).keys()];
      expect(started).toHaveLength(sites.length * 4);
      for (const s of started) {
        expect(s.world).toBe(rows.length);
        expect(rows[s.rank]!.local_rank).toBe(s.local);
      }
      // Each component started the first and last rank of its site's first and last node.
      for (const site of sites) {
        const siteRows = rows.filter((r) => r.site === site);
        const lastNode = Math.max(...siteRows.map((r) => r.node));
        for (const node of [0, lastNode]) {
          const onNode = siteRows.filter((r) => r.node === node);
          for (const r of [onNode[0]!, onNode[onNode.length - 1]!]) expect(started.map((x) => x.rank)).toContain(r.rank);
        }
      }
    });

    it('k8s.yaml parses as YAML: a JobSet with one Indexed Job per site, its nodes, GPUs and node selector', () => {
      const docs = yaml.safeLoadAll(fileOf(files, 'k8s.yaml')) as { kind: string; spec: { replicatedJobs: { name: string; template: { spec: { completionMode: string; completions: number; parallelism: number; template: { spec: { nodeSelector: Record<string, string>; containers: { command: string[]; resources: { limits: Record<string, number> } }[] } } } } }[] } }[];
      expect(docs).toHaveLength(1);
      expect(docs[0]!.kind).toBe('JobSet');
      const jobs = docs[0]!.spec.replicatedJobs;
      const perSite = gpusPerSite(plan);
      expect(jobs).toHaveLength(perSite.size);
      const seen = new Set<string>();
      for (const job of jobs) {
        const spec = job.template.spec;
        const site = spec.template.spec.nodeSelector['scaleacross.io/site']!;
        expect(perSite.has(site)).toBe(true);
        seen.add(site);
        expect(spec.completionMode).toBe('Indexed');
        expect(spec.completions).toBe(perSite.get(site)! / gpn.get(site)!);
        expect(spec.parallelism).toBe(spec.completions);
        const container = spec.template.spec.containers[0]!;
        expect(container.resources.limits['nvidia.com/gpu']).toBe(gpn.get(site));
        const script = container.command[1]!.replace('/bundle/', '');
        expect(fileOf(files, script)).toContain(`one node of ${site} (`);
      }
      expect(seen).toEqual(new Set(perSite.keys()));
    });

    it('nccl.env: VAR=value lines of known NCCL variables, values from the plan\'s links', () => {
      const text = fileOf(files, 'nccl.env');
      const vars = new Map<string, string>();
      for (const line of text.split('\n')) {
        if (line === '' || line.startsWith('#')) continue;
        const match = line.match(/^([A-Z0-9_]+)=(\S+)$/);
        expect(match).not.toBeNull();
        expect(NCCL_NAMES).toContain(match![1]);
        vars.set(match![1]!, match![2]!);
      }
      expect(vars.size).toBeGreaterThan(0);
      const settings = plan.network ?? [];
      const flows = settings.filter((s) => s.transport === 'roce').map((s) => s.flowsPerGpuPair);
      if (settings.every((s) => s.transport === 'roce')) {
        // Links the plan leaves out take the defaults: RoCE, one flow per GPU pair.
        expect(Number(vars.get('NCCL_IB_QPS_PER_CONNECTION'))).toBe(Math.max(1, ...flows));
      }
      const sourced = spawnSync('bash', ['-c', `set -euo pipefail; set -a; source ${JSON.stringify(path.join(dir, 'nccl.env'))}; env`], { encoding: 'utf8' });
      expect(sourced.status).toBe(0);
      for (const [key, value] of vars) expect(sourced.stdout).toContain(`${key}=${value}\n`);
    });
  });
});

describe('names that are not shell-safe', () => {
  it('site and scenario names with quotes, $(...) and newlines stay text: scripts parse, run, and execute nothing from them', () => {
    const spec = clone(readFixture('small/two-sites')) as { name: string; cluster: { sites: { name: string }[]; links: { between: string[] }[] } };
    const east = 'east "$(touch injected-1)" `touch injected-2`';
    const west = "west\n$(touch injected-3)'";
    spec.name = "two sites; $(touch injected-4) 'x'\n# y";
    spec.cluster.sites[0]!.name = east;
    spec.cluster.sites[1]!.name = west;
    spec.cluster.links[0]!.between = [east, west];
    const scenario = parseScenario(spec, 'hostile');
    const plan = { ...launchable['small/two-sites']!(), placement: { replicaGroups: [{ replicas: 2, stageSites: [{ site: east, stages: 1 }, { site: west, stages: 1 }] }] } };
    const layout = layOutPlan(scenario, plan);
    for (const result of [exportMegatron(scenario, layout), exportTorchtitan(scenario, layout)]) {
      const bundle = buildBundle(scenario, layout, result, 'hostile.plan.json');
      expect(bundle.ok).toBe(true);
      if (!bundle.ok) continue;
      const dir = path.join(tmp, `hostile-${result.framework}`);
      writeTo(dir, bundle.files);
      const bin = fakeTools(dir);
      const env = { ...process.env, PATH: `${bin}:${process.env['PATH']}`, MEGATRON_DIR: '/opt/megatron', BUNDLE_DIR: dir, SLURM_SUBMIT_DIR: dir };
      const scripts = bundle.files.filter((f) => f.executable);
      for (const script of scripts) expect(spawnSync('bash', ['-n', path.join(dir, script.path)], { encoding: 'utf8' }).status).toBe(0);
      for (const script of scripts.filter((f) => f.path.startsWith('torchrun-'))) {
        const noMaster = spawnSync('bash', [path.join(dir, script.path), '0'], { encoding: 'utf8', env, cwd: dir });
        expect(noMaster.status).toBe(2);
        expect(noMaster.stderr).toMatch(/set MASTER_ADDR/);
        const bad = spawnSync('bash', [path.join(dir, script.path), '9'], { encoding: 'utf8', env: { ...env, MASTER_ADDR: 'h' }, cwd: dir });
        expect(bad.status).toBe(2);
        expect(spawnSync('bash', [path.join(dir, script.path), '0'], { encoding: 'utf8', env: { ...env, MASTER_ADDR: 'h' }, cwd: dir }).status).toBe(0);
      }
      const slurm = spawnSync('bash', [path.join(dir, 'slurm.sbatch')], { encoding: 'utf8', env: { ...env, SLURM_JOB_NODELIST_HET_GROUP_0: 'h0', SLURM_JOB_NODELIST_HET_GROUP_1: 'h1' }, cwd: dir });
      expect(slurm.stderr).toBe('');
      expect(slurm.status).toBe(0);
      expect(spawnSync('bash', [path.join(dir, 'slurm.sbatch')], { encoding: 'utf8', env, cwd: dir }).status).toBe(2);
      expect(spawnSync('bash', ['-c', 'set -a; source nccl.env'], { encoding: 'utf8', cwd: dir }).status).toBe(0);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('injected'))).toEqual([]);
      const docs = yaml.safeLoadAll(fileOf(bundle.files, 'k8s.yaml')) as { spec: { replicatedJobs: { name: string; template: { spec: { template: { spec: { nodeSelector: Record<string, string> } } } } }[] } }[];
      for (const job of docs[0]!.spec.replicatedJobs) {
        expect(job.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
        expect(job.template.spec.template.spec.nodeSelector['scaleacross.io/site']).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/);
      }
      const rows = readRanks(fileOf(bundle.files, 'ranks.csv'));
      expect(new Set(rows.map((r) => r.site))).toEqual(new Set([east, west]));
    }
  });
});

describe('one site', () => {
  it('is a plain Slurm job (no hetjob, SLURM_JOB_NODELIST) whose tasks still start the ranks of ranks.csv', () => {
    const scenario = loadFixture('llama3-8b-one-site');
    const layout = layOutPlan(scenario, readPlanFixture('llama3-8b-one-site'));
    const bundle = buildBundle(scenario, layout, exportMegatron(scenario, layout), 'one.plan.json');
    expect(bundle.ok).toBe(true);
    if (!bundle.ok) return;
    const dir = path.join(tmp, 'one-site');
    writeTo(dir, bundle.files);
    const script = fileOf(bundle.files, 'slurm.sbatch');
    expect(script).not.toMatch(/hetjob|--het-group|HET_GROUP/);
    const bin = fakeTools(dir);
    const run = spawnSync('bash', [path.join(dir, 'slurm.sbatch')], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env['PATH']}`, MEGATRON_DIR: '/m', SLURM_SUBMIT_DIR: dir, SLURM_JOB_NODELIST: 'node-0' } });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const rows = readRanks(fileOf(bundle.files, 'ranks.csv'));
    const started = [...run.stdout.matchAll(/rank (\d+) local (\d+) world (\d+) master (\S+)/g)];
    expect(started).toHaveLength(4);
    for (const m of started) {
      expect(rows[Number(m[1])]!.local_rank).toBe(Number(m[2]));
      expect(Number(m[3])).toBe(rows.length);
      expect(m[4]).toBe('node-0');
    }
    expect(started.map((m) => Number(m[1]))).toContain(rows.length - 1);
  });
});

describe('nccl.env for TCP across sites', () => {
  it('sets sockets from flows per GPU pair within NCCL\'s limits', () => {
    const scenario = loadFixture('llama3-405b-two-buildings');
    for (const flows of [1, 8, 32]) {
      const plan = { ...readPlanFixture('llama3-405b-two-buildings'), network: [{ between: ['bldg-a', 'bldg-b'], transport: 'tcp', flowsPerGpuPair: flows }] };
      const layout = layOutPlan(scenario, plan);
      const bundle = buildBundle(scenario, layout, exportMegatron(scenario, layout), 'tcp.plan.json');
      expect(bundle.ok).toBe(true);
      const text = bundle.ok ? fileOf(bundle.files, 'nccl.env') : '';
      const value = (name: string) => Number(text.match(new RegExp(`^${name}=(\\d+)$`, 'm'))?.[1]);
      expect(text).toMatch(/^NCCL_NET=Socket$/m);
      expect(text).toMatch(/^NCCL_IB_DISABLE=1$/m);
      expect(value('NCCL_SOCKET_NTHREADS') * value('NCCL_NSOCKS_PERTHREAD')).toBe(flows);
      expect(value('NCCL_SOCKET_NTHREADS')).toBeLessThanOrEqual(16);
    }
    const most = socketSettings(1024);
    expect(most.threads * most.socketsPerThread).toBe(64);
  });
});

describe('scaleacross export --bundle (the built CLI)', () => {
  const cli = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
  const node = (...argv: string[]) => spawnSync(process.execPath, [cli, ...argv], { encoding: 'utf8' });
  const scenario = fixturePath('deepseek-v3-moe-two-sites.json');
  const planFile = path.join(tmp, 'moe-1f1b.plan.json');
  fs.writeFileSync(planFile, JSON.stringify(launchable['deepseek-v3-moe-two-sites']!()));

  beforeAll(() => {
    if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  });

  it('writes the bundle and lists it, exit 0; without --bundle prints the settings as before', () => {
    const dir = path.join(tmp, 'cli-ok', 'nested');
    const result = node('export', planFile, '--scenario', scenario, '--format', 'torchtitan', '--bundle', dir);
    expect(result.status).toBe(0);
    const written = fs.readdirSync(dir).sort();
    expect(written).toEqual(expect.arrayContaining(['README.md', 'job.toml', 'ranks.csv', 'nccl.env', 'slurm.sbatch', 'k8s.yaml']));
    for (const file of written) expect(result.stdout).toContain(file);
    expect(fs.statSync(path.join(dir, 'slurm.sbatch')).mode & 0o111).not.toBe(0);
    expect(result.stdout + result.stderr).not.toMatch(/undefined/);
    const plain = node('export', planFile, '--scenario', scenario, '--format', 'torchtitan');
    expect(plain.status).toBe(0);
    expect(plain.stdout).toMatch(/^\[parallelism\]$/m);
  });

  it('exit 4 with the export\'s errors and nothing written when the framework cannot run the plan', () => {
    const dir = path.join(tmp, 'cli-refused');
    const result = node('export', fixturePath('plans/deepseek-v3-moe-two-sites.plan.json'), '--scenario', scenario, '--format', 'megatron', '--bundle', dir);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/^error: Megatron-LM has no zero-bubble \(ZB-H1\) schedule/m);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('exit 2 with one line naming the path when DIR is a file or under one', () => {
    const file = path.join(tmp, 'not-a-folder.txt');
    fs.writeFileSync(file, 'x');
    for (const dir of [file, path.join(file, 'sub')]) {
      const result = node('export', planFile, '--scenario', scenario, '--format', 'megatron', '--bundle', dir);
      expect(result.status).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr.startsWith(`${dir}: `)).toBe(true);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
  });

  it('runs in process too (runCli), with --json naming the files', async () => {
    let out = '';
    const dir = path.join(tmp, 'in-process');
    const code = await runCli(['export', planFile, '--scenario', scenario, '--format', 'megatron', '--bundle', dir, '--json'], { out: (t) => { out += t; }, err: () => undefined });
    expect(code).toBe(0);
    const parsed = JSON.parse(out) as { bundle: string; files: string[] };
    expect(parsed.bundle).toBe(dir);
    expect(parsed.files.sort()).toEqual(fs.readdirSync(dir).sort());
  });
});
