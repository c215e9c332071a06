/** What the bundle's launch scripts share: the framework's training program and the job's shape. Pure. */
import type { RankTable } from './ranks-csv';
import { fileSafe } from './shell';

export type Framework = 'megatron' | 'torchtitan';

/** What every launcher builder gets. */
export interface LaunchContext {
  readonly scenarioName: string;
  readonly framework: Framework;
  readonly table: RankTable;
  /** Default rendezvous port. */
  readonly masterPort: number;
}

/** File name of the torchrun script of a site (`torchrun-<site>.sh`), unique within the bundle. */
export function torchrunFile(table: RankTable, site: number): string {
  const names = table.sites.map((s) => fileSafe(s.name));
  const k = table.sites.findIndex((s) => s.site === site);
  const name = names[k]!;
  return names.indexOf(name) === k ? `torchrun-${name}.sh` : `torchrun-${name}-${k}.sh`;
}

/** The site and site-local node of global rank 0, where the rendezvous (MASTER_ADDR) is. */
export function rendezvousSite(table: RankTable): { site: number; name: string } {
  const first = table.nodes[0]!;
  return { site: first.site, name: table.sites.find((s) => s.site === first.site)!.name };
}

/**
 * Bash lines that prepare the training program (they run after BUNDLE_DIR is set), and the
 * program's words: a script path or `-m module`, then its arguments.
 */
export function trainingProgram(framework: Framework): { setup: string[]; words: string } {
  if (framework === 'megatron') {
    return {
      setup: [
        '# The plan\'s Megatron-LM arguments (megatron-args.txt); add yours (data, tokenizer, checkpoints,',
        '# learning rate, iterations) in EXTRA_ARGS.',
        'eval "MEGATRON_ARGS=($(< "$BUNDLE_DIR/megatron-args.txt"))"',
        ': "${MEGATRON_DIR:?set MEGATRON_DIR to your Megatron-LM checkout}"',
        '# Megatron-LM needs one CUDA connection per device to order its communication and compute kernels.',
        'export CUDA_DEVICE_MAX_CONNECTIONS="${CUDA_DEVICE_MAX_CONNECTIONS:-1}"',
      ],
      words: '"$MEGATRON_DIR/pretrain_gpt.py" "${MEGATRON_ARGS[@]}" ${EXTRA_ARGS:-}',
    };
  }
  return {
    setup: [
      '# The plan\'s torchtitan job config (job.toml); add the model name/flavor, data and checkpoints there or',
      '# as --section.key overrides in EXTRA_ARGS.',
    ],
    words: '-m torchtitan.train --job.config_file "$BUNDLE_DIR/job.toml" ${EXTRA_ARGS:-}',
  };
}
