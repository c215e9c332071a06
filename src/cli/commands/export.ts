/** `scaleacross export <plan.json> --scenario <scenario.json> --format megatron|torchtitan [--json] [--bundle DIR]`. */
import * as path from 'path';
import { loadScenario } from '../../index';
import { checkFolderTarget, readPlanFile, writeFilesToFolder } from '../../io/files';
import { layOutPlan, type PlanLayout } from '../../model/placement';
import type { Scenario } from '../../model/scenario';
import { buildBundle } from '../../export/bundle';
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
  /** Folder to write the launch bundle into (instead of printing the settings). */
  readonly bundle?: string;
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
  if (args.bundle !== undefined) return writeBundle(args, args.bundle, scenario, layout, result, output);
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

/** `--bundle DIR`: the launch bundle, only for a plan the framework runs as planned (else exit 4, nothing written). */
function writeBundle(args: ExportArgs, folder: string, scenario: Scenario, layout: PlanLayout, result: FrameworkExport, output: Output): number {
  checkFolderTarget(folder);
  const bundle = buildBundle(scenario, layout, result, path.basename(args.plan));
  if (!bundle.ok) {
    for (const message of result.messages) output.err(`${message.severity}: ${message.message}`);
    for (const problem of bundle.errors.filter((e) => !result.messages.some((m) => m.message === e))) output.err(`error: ${problem}`);
    output.err(`error: no bundle written to ${folder}: the plan cannot be launched as planned in ${args.format === 'megatron' ? 'Megatron-LM' : 'torchtitan'}`);
    return EXIT.exportUnfaithful;
  }
  writeFilesToFolder(folder, bundle.files);
  if (args.json) {
    output.out(JSON.stringify({ framework: result.framework, bundle: folder, files: bundle.files.map((f) => f.path), rankMap: result.rankMap, critical: result.critical, messages: result.messages }, null, 2));
  } else {
    output.out(`Launch bundle for ${scenario.name} on ${args.format === 'megatron' ? 'Megatron-LM' : 'torchtitan'} written to ${folder}:`);
    const width = Math.max(...bundle.files.map((f) => f.path.length));
    for (const file of bundle.files) {
      const lines = file.content.split('\n').length - 1;
      output.out(`  ${file.path.padEnd(width)}  ${lines} lines${file.executable ? ', executable' : ''}`);
    }
  }
  for (const message of result.messages) output.err(`${message.severity}: ${message.message}`);
  return EXIT.ok;
}
