/**
 * The command line, as a function of argv returning an exit code: parse, validate, call the
 * library, print. Invalid input and usage exit 2 with one line per problem; bugs exit 1.
 */
import yargs from 'yargs';
import { ScenarioValidationError } from '../model/validation-error';
import { runDiagnose } from './commands/diagnose';
import { runEvaluate } from './commands/evaluate';
import { runExport } from './commands/export';
import { runPlan } from './commands/plan';
import { runReport } from './commands/report';
import { runValidate } from './commands/validate';
import { EXIT, UsageError, type Output } from './exit-codes';

const processOutput: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

/** Runs `scaleacross` with `argv` (without node and script); resolves to the exit code. */
export async function runCli(argv: readonly string[], output: Output = processOutput): Promise<number> {
  let code: number = EXIT.ok;
  const parser = yargs([...argv])
    .scriptName('scaleacross')
    .usage('$0 <command> [options]\n\nPlans LLM training across data-center sites.')
    .command(
      'validate <scenario>',
      'Check a scenario file and summarise it',
      (y) => y.positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON' }),
      (args) => { code = runValidate(args.scenario, args.json, output); },
    )
    .command(
      'evaluate <scenario>',
      'Predict iteration time, memory and MFU of one plan or a JSON array of plans',
      (y) => y.positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file' })
        .option('plan', { type: 'string', demandOption: true, describe: 'Plan JSON file: one plan object or an array of plans' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON' }),
      (args) => { code = runEvaluate(args.scenario, args.plan, args.json, output); },
    )
    .command(
      'plan <scenario>',
      'Find the plan with the shortest iteration time, with a proven lower bound and baselines',
      (y) => y.positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
        .option('time-limit', { type: 'number', default: 10, describe: 'Seconds for the whole search, baselines included' })
        .option('gap', { type: 'number', default: 0.01, describe: 'Stop when (plan - bound) / plan is at most this' })
        .option('exhaustive', { type: 'boolean', default: false, describe: 'Enumerate the search space plan by plan instead (reference; slow)' })
        .option('quiet', { type: 'boolean', default: false, describe: 'No live progress' })
        .option('diagnose', { type: 'boolean', default: true, describe: 'When no plan fits, find the conflicting requirements and the smallest fixes (--no-diagnose skips it)' })
        .check((a) => {
          if (!(a['time-limit'] > 0 && a['time-limit'] <= 86400)) throw new UsageError('--time-limit must be a number of seconds in (0, 86400]');
          if (!(a.gap >= 0 && a.gap < 1)) throw new UsageError('--gap must be in [0, 1)');
          return true;
        }),
      async (args) => {
        code = await runPlan({ scenario: args.scenario, json: args.json, timeLimit: args['time-limit'], gap: args.gap, exhaustive: args.exhaustive, quiet: args.quiet, diagnose: args.diagnose }, output, output === processOutput ? process.stderr : undefined);
      },
    )
    .command(
      'diagnose <scenario>',
      'Why no plan fits and the smallest change that makes one fit; for a plannable scenario, what binds and what relaxing it buys',
      (y) => y.positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
        .option('time-limit', { type: 'number', default: 3, describe: 'Seconds for each re-solve' })
        .check((a) => {
          if (!(a['time-limit'] > 0 && a['time-limit'] <= 3600)) throw new UsageError('--time-limit must be a number of seconds in (0, 3600]');
          return true;
        }),
      async (args) => { code = await runDiagnose({ scenario: args.scenario, json: args.json, timeLimit: args['time-limit'] }, output); },
    )
    .command(
      'report <scenario>',
      'Write a self-contained HTML report: plan, bound, breakdown, pipeline timeline, site map, memory',
      (y) => y.positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file' })
        .option('plan', { type: 'string', describe: 'Plan JSON file (or the --json output of plan) to evaluate instead of searching' })
        .option('html', { type: 'string', demandOption: true, describe: 'HTML file to write' })
        .option('baselines', { type: 'boolean', default: false, describe: 'With --plan: also search the baselines' })
        .option('time-limit', { type: 'number', default: 10, describe: 'Seconds for the search (without --plan, or with --baselines)' })
        .check((a) => {
          if (!(a['time-limit'] > 0 && a['time-limit'] <= 86400)) throw new UsageError('--time-limit must be a number of seconds in (0, 86400]');
          return true;
        }),
      async (args) => {
        code = await runReport({ scenario: args.scenario, plan: args.plan, html: args.html, timeLimit: args['time-limit'], baselines: args.baselines }, output);
      },
    )
    .command(
      'export <plan>',
      'Print launch settings for Megatron-LM or torchtitan, with the rank-to-site map',
      (y) => y.positional('plan', { type: 'string', demandOption: true, describe: 'Plan JSON file (or the --json output of plan)' })
        .option('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file the plan is for' })
        .option('format', { choices: ['megatron', 'torchtitan'] as const, demandOption: true, describe: 'Framework' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON (settings, rank map, warnings)' }),
      (args) => { code = runExport({ plan: args.plan, scenario: args.scenario, format: args.format, json: args.json }, output); },
    )
    .demandCommand(1, 'name a command: validate, evaluate, plan, diagnose, report or export')
    .strict()
    .help()
    .version()
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new UsageError(message);
    });
  try {
    await parser.parseAsync();
    return code;
  } catch (error) {
    if (error instanceof ScenarioValidationError) {
      output.err(error.message);
      return EXIT.invalidInput;
    }
    if (error instanceof UsageError || (error instanceof Error && error.name === 'YError')) {
      output.err(`scaleacross: ${error.message.split('\n')[0]} (see scaleacross --help)`);
      return EXIT.invalidInput;
    }
    const message = error instanceof Error ? error.message : String(error);
    output.err(`scaleacross: internal error: ${message}${process.env['SCALEACROSS_DEBUG'] ? `\n${(error as Error).stack}` : ' (set SCALEACROSS_DEBUG=1 for a stack trace)'}`);
    return EXIT.internalError;
  }
}
