/** `scaleacross export <plan.json> --scenario <scenario.json> --format megatron|torchtitan [--json]`. */
import { loadScenario } from '../../index';
import { readPlanFile } from '../../io/files';
import { layOutPlan } from '../../model/placement';
import { hasErrors, type FrameworkExport } from '../../export/export-types';
import { exportMegatron } from '../../export/megatron';
import { formatRankMap } from '../../export/rank-map';
import { exportTorchtitan } from '../../export/torchtitan';
import { ScenarioValidationError } from '../../model/validation-error';
import { EXIT, type Output } from '../exit-codes';

export interface ExportArgs {
  readonly plan: string;
  readonly scenario: string;
  readonly format: 'megatron' | 'torchtitan';
  readonly json: boolean;
}

export function runExport(args: ExportArgs, output: Output): number {
  const scenario = loadScenario(args.scenario);
  const given = readPlanFile(args.plan);
  let layout;
  try {
    layout = layOutPlan(scenario, given.plan, given.pathPrefix);
  } catch (error) {
    if (error instanceof ScenarioValidationError) throw error.withPrefix('', args.plan);
    throw error;
  }
  const result: FrameworkExport = args.format === 'megatron' ? exportMegatron(scenario, layout) : exportTorchtitan(scenario, layout);
  if (args.json) {
    output.out(JSON.stringify({ framework: result.framework, text: result.text, keys: result.keys, rankMap: result.rankMap, critical: result.critical, messages: result.messages }, null, 2));
  } else {
    const comment = args.format === 'megatron' ? '#' : '#';
    output.out(`${comment} ${args.format === 'megatron' ? 'Megatron-LM arguments' : 'torchtitan job config'} for ${scenario.name} (plan ${args.plan})`);
    output.out(result.text);
    output.out('');
    output.out(formatRankMap(result.rankMap).split('\n').map((line) => `${comment} ${line}`).join('\n'));
  }
  for (const message of result.messages) output.err(`${message.severity}: ${message.message}`);
  return hasErrors(result) ? EXIT.exportUnfaithful : EXIT.ok;
}
