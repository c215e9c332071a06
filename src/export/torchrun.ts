/**
 * `torchrun-<site>.sh`: one script per site, run once on each of the site's nodes with the
 * node's index at that site (0-based, the `node` column of ranks.csv). It maps that index to the
 * node's global --node-rank, so that torchrun's static rendezvous (rank = the local ranks of all
 * lower node ranks + local rank) gives exactly the ranks ranks.csv lists for it. Pure.
 */
import type { LaunchContext } from './launch-common';
import { rendezvousSite, torchrunFile, trainingProgram } from './launch-common';
import { bashIntList, oneLine, shellWord } from './shell';

export function torchrunScripts(ctx: LaunchContext): { path: string; content: string }[] {
  const { table } = ctx;
  const master = rendezvousSite(table);
  const program = trainingProgram(ctx.framework);
  const masterName = oneLine(master.name);
  return table.sites.map((site) => {
    const file = torchrunFile(table, site.site);
    const name = oneLine(site.name);
    const lines = [
      '#!/bin/bash',
      `# torchrun on one node of ${name} (${site.nodes.length} node${site.nodes.length === 1 ? '' : 's'} x ${site.gpusPerNode} GPUs) for ${oneLine(ctx.scenarioName)}.`,
      `# Usage, on node i of ${name} (i = 0..${site.nodes.length - 1}, the node column of ranks.csv):`,
      `#   MASTER_ADDR=<host of node 0 of ${masterName}> bash ${file} i`,
      '# In a Kubernetes Indexed Job the index is JOB_COMPLETION_INDEX. MASTER_PORT defaults to ' + `${ctx.masterPort}.`,
      'set -euo pipefail',
      'BUNDLE_DIR="${BUNDLE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"',
      'NODE_INDEX="${1:-${JOB_COMPLETION_INDEX:-}}"',
      `# Global node rank of each node of ${name}, in its node order.`,
      `NODE_RANKS=(${bashIntList(site.nodes.map((n) => n.globalNode))})`,
      'if [[ ! "$NODE_INDEX" =~ ^[0-9]+$ ]] || (( NODE_INDEX >= ${#NODE_RANKS[@]} )); then',
      `  echo ${shellWord(`${file}: give this node's index at ${name}, 0..${site.nodes.length - 1}`)} >&2`,
      '  exit 2',
      'fi',
      'if [[ -z "${MASTER_ADDR:-}" ]]; then',
      `  echo ${shellWord(`${file}: set MASTER_ADDR to the host of node 0 of ${masterName} (global rank 0)`)} >&2`,
      '  exit 2',
      'fi',
      `MASTER_PORT="\${MASTER_PORT:-${ctx.masterPort}}"`,
      'set -a',
      '# shellcheck source=/dev/null',
      'source "$BUNDLE_DIR/nccl.env"',
      'set +a',
      ...program.setup,
      '# shellcheck disable=SC2086',
      'exec torchrun \\',
      `  --nnodes=${table.nodes.length} \\`,
      `  --nproc-per-node=${site.gpusPerNode} \\`,
      '  --node-rank="${NODE_RANKS[NODE_INDEX]}" \\',
      '  --master-addr="$MASTER_ADDR" \\',
      '  --master-port="$MASTER_PORT" \\',
      `  ${program.words}`,
    ];
    return { path: file, content: `${lines.join('\n')}\n` };
  });
}
