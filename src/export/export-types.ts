/** What an export to a training framework produces. */
import type { CriticalReplicas } from './critical-replicas';
import type { RankMap } from './rank-map';

export type ExportSeverity = 'error' | 'warning' | 'note';

/** An error means the launch would not run the plan as evaluated; a warning, that it runs with a documented difference. */
export interface ExportMessage {
  readonly severity: ExportSeverity;
  readonly message: string;
}

export interface FrameworkExport {
  readonly framework: 'megatron' | 'torchtitan';
  /** Launch settings in the framework's own syntax (command-line arguments or TOML). */
  readonly text: string;
  /** Every flag (Megatron) or `section.key` (torchtitan) the text sets. */
  readonly keys: readonly string[];
  readonly rankMap: RankMap;
  /** The replicas of the replica group that sets the predicted iteration time. */
  readonly critical: CriticalReplicas;
  readonly messages: readonly ExportMessage[];
}

export const hasErrors = (result: FrameworkExport): boolean => result.messages.some((m) => m.severity === 'error');
