/**
 * `export --bundle DIR`: everything needed to start the job, as a list of files (the CLI writes
 * them): the framework's arguments, ranks.csv, a Slurm script, torchrun scripts per site, a
 * Kubernetes JobSet, nccl.env and a README. Only for a launchable plan: an export with errors has
 * no bundle. Pure.
 */
import type { PlanLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { hasErrors, type FrameworkExport } from './export-types';
import { kubernetesManifest, kubernetesNames, SITE_LABEL, siteLabelValue } from './kubernetes';
import { rendezvousSite, torchrunFile, type LaunchContext } from './launch-common';
import { ncclEnv } from './nccl-env';
import { rankTable, ranksCsv } from './ranks-csv';
import { oneLine } from './shell';
import { slurmScript } from './slurm';
import { torchrunScripts } from './torchrun';

export interface BundleFile {
  /** File name inside the bundle folder. */
  readonly path: string;
  readonly content: string;
  /** A script: written with the execute bit. */
  readonly executable?: boolean;
}

export type Bundle =
  | { readonly ok: true; readonly files: readonly BundleFile[] }
  | { readonly ok: false; readonly errors: readonly string[] };

export const MASTER_PORT = 29500;

export function buildBundle(scenario: Scenario, layout: PlanLayout, result: FrameworkExport, planSource: string): Bundle {
  const table = rankTable(scenario, layout);
  const errors = [...result.messages.filter((m) => m.severity === 'error').map((m) => m.message), ...table.problems];
  if (hasErrors(result) || errors.length > 0) return { ok: false, errors };
  const ctx: LaunchContext = { scenarioName: scenario.name, framework: result.framework, table, masterPort: MASTER_PORT };
  const args: BundleFile = result.framework === 'megatron'
    ? { path: 'megatron-args.txt', content: `${result.text}\n` }
    : { path: 'job.toml', content: `# torchtitan job config for ${oneLine(scenario.name)} (plan ${oneLine(planSource)})\n${result.text}\n` };
  const scripts = [slurmScript(ctx), ...torchrunScripts(ctx)].map((f) => ({ ...f, executable: true }));
  const files: BundleFile[] = [
    args,
    { path: 'ranks.csv', content: ranksCsv(scenario, table) },
    { path: 'nccl.env', content: ncclEnv(scenario, layout) },
    ...scripts,
    kubernetesManifest(ctx),
  ];
  return { ok: true, files: [{ path: 'README.md', content: bundleReadme(scenario, result, ctx, planSource, files) }, ...files] };
}

function bundleReadme(scenario: Scenario, result: FrameworkExport, ctx: LaunchContext, planSource: string, files: readonly BundleFile[]): string {
  const { table } = ctx;
  const master = rendezvousSite(table);
  const k8s = kubernetesNames(ctx);
  const framework = result.framework === 'megatron' ? 'Megatron-LM' : 'torchtitan';
  const argsFile = result.framework === 'megatron' ? 'megatron-args.txt' : 'job.toml';
  const describe: Record<string, string> = {
    'megatron-args.txt': "the plan's Megatron-LM arguments (parallel degrees, layers per stage, schedule, batch, recomputation, optimizer sharding); the launch scripts pass them to pretrain_gpt.py",
    'job.toml': "the plan's torchtitan job config (parallelism, batch, schedule and stage split, activation checkpointing); the launch scripts pass it to torchtitan.train",
    'ranks.csv': `one row per global rank (${table.worldSize}): rank, site, node (numbered per site from 0), local_rank, pipeline stage, data-parallel replica, in ${framework}'s rank order (${result.rankMap.order})`,
    'nccl.env': "the NCCL environment the plan's cross-site network settings imply, and as comments what the environment cannot set",
    'slurm.sbatch': 'one Slurm heterogeneous job, one component per site; every task computes its global rank from its node and local rank as in ranks.csv',
    'k8s.yaml': `a JobSet with one Indexed Job per site (completions = the site's nodes, one pod per node with its GPUs), pinned by the node label ${SITE_LABEL}`,
  };
  for (const site of table.sites) {
    describe[torchrunFile(table, site.site)] = `torchrun on one node of ${site.name}: \`bash ${torchrunFile(table, site.site)} <node index at ${site.name}>\``;
  }
  const lines = [
    `# Launch bundle: ${scenario.name} on ${framework}`,
    '',
    `Written by \`scaleacross export --bundle\` from plan ${planSource}. Global rank r runs on the site, node`,
    'and local rank ranks.csv gives; every launcher below reproduces that order, so each pipeline stage',
    'and data-parallel replica lands on the site the plan chose.',
    '',
    '| site | nodes | GPUs per node | ranks |',
    '| --- | --- | --- | --- |',
    ...table.sites.map((s) => `| ${s.name} | ${s.nodes.length} | ${s.gpusPerNode} | ${s.nodes.reduce((n, node) => n + node.ranks, 0)} |`),
    '',
    `World size ${table.worldSize} on ${table.nodes.length} nodes. Global rank 0 (the rendezvous, MASTER_ADDR) runs on node 0 of ${master.name}.`,
    '',
    '## Files',
    '',
    '- `README.md`: this file.',
    ...files.map((f) => `- \`${f.path}\`: ${describe[f.path] ?? ''}`),
    '',
    '## What you fill in',
    '',
    `- The rest of the training job: data, tokenizer, checkpoints, learning rate, iterations${result.framework === 'torchtitan' ? ', and the model name and flavor in job.toml' : ''} (\`EXTRA_ARGS\`, or edit ${argsFile}).`,
    `- ${result.framework === 'megatron' ? '`MEGATRON_DIR`: your Megatron-LM checkout (the scripts run `$MEGATRON_DIR/pretrain_gpt.py`).' : 'A Python environment with torchtitan installed (the scripts run `python -m torchtitan.train`).'}`,
    '- Slurm: each component\'s `--partition`, `--nodelist` or `--constraint` in slurm.sbatch (the `##SBATCH` lines), so that component k gets nodes at its site; submit from this folder (`sbatch slurm.sbatch`). Node n of a site is the n-th node of its component (SLURM_NODEID). The sites must be reachable from one Slurm cluster.',
    `- torchrun: \`MASTER_ADDR\` (the host of node 0 of ${master.name}; \`MASTER_PORT\` defaults to ${ctx.masterPort}) on every node, and the node index at its site as the script's argument; node i of a site must be the node ranks.csv calls node i.`,
    `- Kubernetes: label every node with its site (\`kubectl label node <node> ${SITE_LABEL}=<value>\`, values: ${table.sites.map((s) => `${s.name} -> \`${siteLabelValue(s.name)}\``).join(', ')}), create the ConfigMap \`${k8s.configMap}\` from this folder (\`kubectl create configmap ${k8s.configMap} --from-file=.\`), set \`image\` (it must contain ${result.framework === 'megatron' ? 'Megatron-LM and set MEGATRON_DIR' : 'torchtitan'}), and give the pods the cluster\'s RDMA network (host network or its RDMA device plugin). Needs the JobSet controller.`,
    '- nccl.env: the interface names and anything site-specific (e.g. NCCL_SOCKET_IFNAME, NCCL_IB_HCA); read its notes.',
  ];
  const notes = result.messages.filter((m) => m.severity !== 'error');
  if (notes.length > 0) {
    lines.push('', '## Notes from the export', '', ...notes.map((m) => `- ${m.severity}: ${m.message}`));
  }
  return `${lines.join('\n')}\n`;
}
