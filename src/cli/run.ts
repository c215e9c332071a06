/**
 * The command line, as a function of argv returning an exit code: parse, validate, call the
 * library, print. Invalid input and usage exit 2 with one line per problem; bugs exit 1.
 */
import yargs from 'yargs';
import { ScenarioValidationError } from '../model/validation-error';
import { runEvaluate } from './commands/evaluate';
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
    .demandCommand(1, 'name a command: validate or evaluate')
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
    if (error instanceof UsageError) {
      output.err(`scaleacross: ${error.message.split('\n')[0]} (see scaleacross --help)`);
      return EXIT.invalidInput;
    }
    const message = error instanceof Error ? error.message : String(error);
    output.err(`scaleacross: internal error: ${message}${process.env['SCALEACROSS_DEBUG'] ? `\n${(error as Error).stack}` : ' (set SCALEACROSS_DEBUG=1 for a stack trace)'}`);
    return EXIT.internalError;
  }
}
