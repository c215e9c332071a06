/**
 * `slurm.sbatch`: one heterogeneous job, one component per site (`#SBATCH hetjob` between them;
 * a plain job for one site), one task per GPU. Each task computes its global rank explicitly: the first rank of its node
 * (node n of a site = the n-th node of the site's component, SLURM_NODEID) plus SLURM_LOCALID,
 * which is ranks.csv's order. Pure.
 */
import type { LaunchContext } from './launch-common';
import { rendezvousSite, trainingProgram } from './launch-common';
import { bashIntList, fileSafe, oneLine } from './shell';

export function slurmScript(ctx: LaunchContext): { path: string; content: string } {
  const { table } = ctx;
  const master = rendezvousSite(table);
  const masterComponent = table.sites.findIndex((s) => s.site === master.site);
  const program = trainingProgram(ctx.framework);
  // One site is a plain job (Slurm sets SLURM_JOB_NODELIST, and srun takes no --het-group).
  const het = table.sites.length > 1;
  const nodeList = het ? `SLURM_JOB_NODELIST_HET_GROUP_${masterComponent}` : 'SLURM_JOB_NODELIST';
  const lines = [
    '#!/bin/bash',
    `# Slurm heterogeneous job for ${oneLine(ctx.scenarioName)}: component k runs the nodes of one site:`,
    ...table.sites.map((s, k) => `#   component ${k}: ${oneLine(s.name)}, ${s.nodes.length} node${s.nodes.length === 1 ? '' : 's'} x ${s.gpusPerNode} GPUs`),
    '# Give each component the --partition, --nodelist or --constraint that puts it at its site (the',
    '# commented lines below), then submit from the bundle folder: sbatch slurm.sbatch',
    `#SBATCH --job-name=${fileSafe(`scaleacross-${ctx.scenarioName}`)}`,
  ];
  table.sites.forEach((s, k) => {
    if (k > 0) lines.push('#SBATCH hetjob');
    lines.push(
      `#SBATCH --nodes=${s.nodes.length}`,
      `#SBATCH --ntasks-per-node=${s.gpusPerNode}`,
      `#SBATCH --gpus-per-node=${s.gpusPerNode}`,
      '#SBATCH --exclusive',
      `##SBATCH --partition=<partition at ${oneLine(s.name)}>`,
    );
  });
  lines.push(
    '',
    'set -euo pipefail',
    'BUNDLE_DIR="${BUNDLE_DIR:-${SLURM_SUBMIT_DIR:-$(pwd)}}"',
    `# Global rank 0 runs on node 0 of ${oneLine(master.name)} (component ${masterComponent}): the rendezvous.`,
    'if [[ -z "${MASTER_ADDR:-}" ]]; then',
    `  if [[ -z "\${${nodeList}:-}" ]]; then`,
    `    echo 'slurm.sbatch: submit it with sbatch${het ? ' (a heterogeneous job)' : ''}, or set MASTER_ADDR' >&2`,
    '    exit 2',
    '  fi',
    `  mapfile -t MASTER_HOSTS < <(scontrol show hostnames "$${nodeList}")`,
    '  MASTER_ADDR="${MASTER_HOSTS[0]}"',
    'fi',
    `MASTER_PORT="\${MASTER_PORT:-${ctx.masterPort}}"`,
    `WORLD_SIZE=${table.worldSize}`,
    'export BUNDLE_DIR MASTER_ADDR MASTER_PORT WORLD_SIZE',
    '',
    '# One task per GPU: rank = first rank of its node + SLURM_LOCALID (ranks.csv).',
    'run_rank() {',
    '  set -euo pipefail',
    '  local -a first',
    '  case "$1" in',
    ...table.sites.map((s, k) => `    ${k}) first=(${bashIntList(s.nodes.map((n) => n.firstRank))}); LOCAL_WORLD_SIZE=${s.gpusPerNode} ;;  # ${oneLine(s.name)}`),
    '    *) echo "run_rank: no component $1" >&2; return 2 ;;',
    '  esac',
    '  RANK=$(( first[SLURM_NODEID] + SLURM_LOCALID ))',
    '  LOCAL_RANK=$SLURM_LOCALID',
    '  export RANK LOCAL_RANK LOCAL_WORLD_SIZE',
    '  set -a',
    '  # shellcheck source=/dev/null',
    '  source "$BUNDLE_DIR/nccl.env"',
    '  set +a',
    ...program.setup.map((line) => `  ${line}`),
    '  # shellcheck disable=SC2086',
    `  exec "\${PYTHON:-python}" ${program.words}`,
    '}',
    'export -f run_rank',
    '',
    'pids=()',
    ...table.sites.flatMap((s, k) => [
      `srun ${het ? `--het-group=${k} ` : ''}--nodes=${s.nodes.length} --ntasks-per-node=${s.gpusPerNode} --kill-on-bad-exit=1 bash -c 'run_rank ${k}' &`,
      'pids+=("$!")',
    ]),
    'status=0',
    'for pid in "${pids[@]}"; do wait "$pid" || status=$?; done',
    'exit "$status"',
  );
  return { path: 'slurm.sbatch', content: `${lines.join('\n')}\n` };
}
