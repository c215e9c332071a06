/**
 * The command line, as a function of argv returning an exit code: parse, validate, call the
 * library, print. Invalid input and usage exit 2 with one line per problem; bugs exit 1.
 */
import yargs from 'yargs';
import { FRAMEWORKS } from '../model/framework-capabilities';
import { ScenarioValidationError } from '../model/validation-error';
import { defaultWorkerCount, runBatchCommand } from './commands/batch';
import { runCalibrate } from './commands/calibrate';
import { runDiagnose } from './commands/diagnose';
import { runEvaluate } from './commands/evaluate';
import { runExplore } from './commands/explore';
import { runExport } from './commands/export';
import { runImportModel } from './commands/import-model';
import { runMerge } from './commands/merge';
import { PLAN_COST_OPTIONS, checkPlanCostOptions, runPlan } from './commands/plan';
import { runReport } from './commands/report';
import { runValidate } from './commands/validate';
import { EXIT, UsageError, type Output } from './exit-codes';

const processOutput: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

/** `--calibration`: a profile written by `calibrate`, applied for the command (overrides the scenario's `calibration`). */
const CALIBRATION_OPTION = { type: 'string', describe: 'Calibration profile (scaleacross calibrate --out) to apply; overrides the scenario\'s "calibration"' } as const;

/** `--what-if` as given: absent, one value or several (repeated); the bare flag is ''. */
const whatIfValues = (value: unknown): string[] | undefined =>
  (value === undefined ? undefined : ([] as unknown[]).concat(value).map((v) => (v === undefined || v === null ? '' : String(v))));

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
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
        .option('calibration', CALIBRATION_OPTION),
      (args) => { code = runEvaluate(args.scenario, args.plan, args.json, output, args.calibration); },
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
        .option('framework', { choices: FRAMEWORKS, describe: 'Search only plans this framework runs as planned (overrides the scenario\'s search.framework)' })
        .option('calibration', CALIBRATION_OPTION)
        .options(PLAN_COST_OPTIONS)
        .option('what-if', { type: 'string', describe: "Re-plan with each site and each link removed (bare flag), or with an edit: 'cluster.links[0].bandwidthGbps=*0.5' scales, '=v' sets (repeatable)" })
        .option('baseline-plan', { type: 'string', describe: 'A plan file (the configuration you run today): evaluated beside the best plan, with the speedup over it' })
        .option('explain-idle', { type: 'boolean', default: true, describe: 'When the plan leaves GPUs idle, re-plan using every GPU (within half the time limit) and say why (--no-explain-idle skips it)' })
        .check((a) => {
          if (!(a['time-limit'] > 0 && a['time-limit'] <= 86400)) throw new UsageError('--time-limit must be a number of seconds in (0, 86400]');
          if (!(a.gap >= 0 && a.gap < 1)) throw new UsageError('--gap must be in [0, 1)');
          return checkPlanCostOptions(a);
        }),
      async (args) => {
        const whatIf = whatIfValues(args['what-if']);
        code = await runPlan({
          scenario: args.scenario, json: args.json, timeLimit: args['time-limit'], gap: args.gap, exhaustive: args.exhaustive, quiet: args.quiet, diagnose: args.diagnose, framework: args.framework, calibration: args.calibration,
          objective: args.objective, maxUsdPerHour: args['max-usd-per-hour'], maxTrainingDays: args['max-training-days'], pareto: args.pareto, budgets: args.budgets,
          whatIf, baselinePlan: args['baseline-plan'], explainIdle: args['explain-idle'],
        }, output, output === processOutput ? process.stderr : undefined);
      },
    )
    .command(
      'diagnose <scenario>',
      'Why no plan fits and the smallest change that makes one fit; for a plannable scenario, what binds and what relaxing it buys',
      (y) => y.positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
        .option('time-limit', { type: 'number', default: 3, describe: 'Seconds for each re-solve' })
        .option('calibration', CALIBRATION_OPTION)
        .check((a) => {
          if (!(a['time-limit'] > 0 && a['time-limit'] <= 3600)) throw new UsageError('--time-limit must be a number of seconds in (0, 3600]');
          return true;
        }),
      async (args) => { code = await runDiagnose({ scenario: args.scenario, json: args.json, timeLimit: args['time-limit'], calibration: args.calibration }, output); },
    )
    .command(
      'report <scenario>',
      'Write a self-contained HTML report: plan, bound, breakdown, pipeline timeline, site map, memory (and on request the GPU-budget frontier, what-if, baseline plan)',
      (y) => y.positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file' })
        .option('plan', { type: 'string', describe: 'Plan JSON file (or the --json output of plan) to evaluate instead of searching' })
        .option('html', { type: 'string', demandOption: true, describe: 'HTML file to write' })
        .option('baselines', { type: 'boolean', default: false, describe: 'With --plan: also search the baselines' })
        .option('time-limit', { type: 'number', default: 10, describe: 'Seconds for the search (without --plan, or with --baselines)' })
        .option('framework', { choices: FRAMEWORKS, describe: 'Search only plans this framework runs as planned (overrides the scenario\'s search.framework)' })
        .option('calibration', CALIBRATION_OPTION)
        .option('what-if', { type: 'string', describe: "Add the what-if table: each site and link removed (bare flag), or an edit such as 'cluster.links[0].bandwidthGbps=*0.5' (repeatable)" })
        .option('baseline-plan', { type: 'string', describe: 'A plan file (the configuration you run today): its time and the speedup over it' })
        .option('explain-idle', { type: 'boolean', describe: 'Say why GPUs sit idle, with the best plan using them (default: on without --plan)' })
        .option('pareto', { type: 'boolean', default: false, describe: 'Add the GPU-budget frontier chart (as plan --pareto), searched in a further --time-limit' })
        .option('budgets', PLAN_COST_OPTIONS.budgets)
        .check((a) => {
          if (!(a['time-limit'] > 0 && a['time-limit'] <= 86400)) throw new UsageError('--time-limit must be a number of seconds in (0, 86400]');
          if (a.budgets !== undefined && !a.pareto) throw new UsageError('--budgets needs --pareto');
          return true;
        }),
      async (args) => {
        code = await runReport({ scenario: args.scenario, plan: args.plan, html: args.html, timeLimit: args['time-limit'], baselines: args.baselines, framework: args.framework, calibration: args.calibration, whatIf: whatIfValues(args['what-if']), baselinePlan: args['baseline-plan'], explainIdle: args['explain-idle'], pareto: args.pareto, budgets: args.budgets }, output);
      },
    )
    .command(
      'export <plan>',
      'Print launch settings for Megatron-LM or torchtitan, with the rank-to-site map',
      (y) => y.positional('plan', { type: 'string', demandOption: true, describe: 'Plan JSON file (or the --json output of plan)' })
        .option('scenario', { type: 'string', demandOption: true, describe: 'Scenario JSON file the plan is for' })
        .option('format', { choices: ['megatron', 'torchtitan'] as const, demandOption: true, describe: 'Framework' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON (settings, rank map, warnings)' })
        .option('bundle', { type: 'string', describe: 'Write a launch bundle into this folder: arguments, ranks.csv, Slurm, torchrun and Kubernetes launchers, nccl.env, README' })
        .check((a) => {
          if (a.bundle !== undefined && a.bundle.trim() === '') throw new UsageError('--bundle needs a folder');
          return true;
        }),
      (args) => { code = runExport({ plan: args.plan, scenario: args.scenario, format: args.format, json: args.json, bundle: args.bundle }, output); },
    )
    .command(
      'explore [scenario]',
      'Serve the explorer page on 127.0.0.1: edit the scenario, watch the plan, bound and diagnosis change (planned in the browser)',
      (y) => y.positional('scenario', { type: 'string', describe: 'Scenario JSON file to open (default: the two-building example)' })
        .option('port', { type: 'number', default: 4817, describe: 'Port on 127.0.0.1 (0: any free port)' })
        .option('open', { type: 'boolean', default: true, describe: 'Open the page in the desktop browser if there is one (--no-open skips it)' })
        .check((a) => {
          if (!(Number.isInteger(a.port) && a.port >= 0 && a.port <= 65535)) throw new UsageError('--port must be an integer in [0, 65535]');
          return true;
        }),
      async (args) => { code = await runExplore({ scenario: args.scenario, port: args.port, open: args.open }, output); },
    )
    .command(
      'import-model <config>',
      "Print the scenario's model object for a Hugging Face config.json",
      (y) => y.positional('config', { type: 'string', demandOption: true, describe: 'A Hugging Face config.json' })
        .option('name', { type: 'string', describe: 'Model name (default: the folder of config.json, or the file name)' }),
      (args) => { code = runImportModel(args.config, args.name, output); },
    )
    .command(
      'batch <inputs..>',
      'Plan many scenarios (files, folders, sweep files) in parallel workers into an NDJSON results file',
      (y) => y.positional('inputs', { type: 'string', array: true, demandOption: true, describe: 'Scenario files, folders of them, sweep files' })
        .option('out', { type: 'string', demandOption: true, describe: 'Results file (NDJSON, one line per scenario, appended as results come)' })
        .option('csv', { type: 'string', describe: 'Also write the results as CSV here at the end' })
        .option('workers', { type: 'number', describe: `Worker threads (default: one per core, here ${defaultWorkerCount()})` })
        .option('resume', { type: 'boolean', default: false, describe: 'Continue a results file: skip scenarios already in it' })
        .option('time-limit', { type: 'number', default: 10, describe: 'Seconds per scenario, baselines included' })
        .option('gap', { type: 'number', default: 0.01, describe: 'Target relative gap per scenario' })
        .option('baselines', { type: 'boolean', default: true, describe: 'Solve the production and pp-across baselines (--no-baselines to skip)' })
        .option('shard', { type: 'string', describe: 'Run only shard i of n (i/n, 1-based): for job arrays; merge the parts with `merge`' })
        .option('timeout-grace', { type: 'number', default: 15, describe: 'Seconds past --time-limit before a scenario is recorded as timeout and its worker replaced' })
        .option('charts', { type: 'boolean', default: true, describe: 'Write an SVG chart per swept axis next to --out (--no-charts to skip)' })
        .option('quiet', { type: 'boolean', default: false, describe: 'No progress' })
        .option('calibration', { type: 'string', describe: 'Calibration profile (scaleacross calibrate --out) applied to every scenario' })
        .option('baseline-plan', { type: 'string', describe: 'A plan file evaluated on every scenario beside its best plan; records get baselinePlan { iterationTimeS, fits, speedup, violations }' })
        .epilog('An input that is not a valid scenario or sweep (malformed JSON, a missing section, a sweep path that does not fit its base) is recorded as invalid, with its error on one line naming the file and the JSON path, and the rest runs; the invalid inputs are listed on stderr at the end. Exit 0 once every input has a record (invalid ones included); 2 when the batch cannot start (a path that does not exist, a folder without *.json files, bad options, --out holding results without --resume); 130 interrupted. --resume skips what the results file already has, by content: a fixed input runs again.')
        .check((a) => {
          if (!(a['time-limit'] > 0 && a['time-limit'] <= 86400)) throw new UsageError('--time-limit must be a number of seconds in (0, 86400]');
          if (!(a.gap >= 0 && a.gap < 1)) throw new UsageError('--gap must be in [0, 1)');
          if (a.workers !== undefined && !(Number.isInteger(a.workers) && a.workers >= 1 && a.workers <= 1024)) throw new UsageError('--workers must be an integer in [1, 1024]');
          if (!(a['timeout-grace'] >= 0 && a['timeout-grace'] <= 86400)) throw new UsageError('--timeout-grace must be a number of seconds in [0, 86400]');
          return true;
        }),
      async (args) => {
        const real = output === processOutput;
        code = await runBatchCommand({
          inputs: args.inputs, out: args.out, csv: args.csv, workers: args.workers, resume: args.resume, timeLimit: args['time-limit'], gap: args.gap,
          baselines: args.baselines, shard: args.shard, timeoutGrace: args['timeout-grace'], charts: args.charts, quiet: args.quiet, calibration: args.calibration, baselinePlan: args['baseline-plan'], argv,
        }, output, { progressStream: real ? process.stderr : undefined, handleSigint: real });
      },
    )
    .command(
      'calibrate <runs>',
      "Fit the cost model's efficiency factors to runs measured on your cluster; write a calibration profile",
      (y) => y.positional('runs', { type: 'string', demandOption: true, describe: 'Measured runs: a JSON array or NDJSON of { scenario, plan, measured } and link measurements' })
        .option('out', { type: 'string', demandOption: true, describe: 'Calibration profile JSON file to write' })
        .option('json', { type: 'boolean', default: false, describe: 'Print JSON (the profile)' })
        .option('factors', { type: 'string', describe: 'Comma-separated factors to fit (default: every factor the runs are sensitive to)' })
        .option('prior-weight', { type: 'number', default: 1, describe: 'Pull towards the committed constants: 1 makes a factor moved 10% cost as much as one run 10% off; smaller trusts the runs more' })
        .check((a) => {
          if (!(a['prior-weight'] >= 0 && a['prior-weight'] <= 1000)) throw new UsageError('--prior-weight must be a number in [0, 1000]');
          return true;
        }),
      (args) => { code = runCalibrate({ runs: args.runs, out: args.out, json: args.json, priorWeight: args['prior-weight'], factors: args.factors?.split(',').map((f) => f.trim()).filter((f) => f !== '') }, output); },
    )
    .command(
      'merge <parts..>',
      'Merge batch result files (shards, resumed runs): one result per scenario, completeness checked',
      (y) => y.positional('parts', { type: 'string', array: true, demandOption: true, describe: 'NDJSON results files' })
        .option('out', { type: 'string', demandOption: true, describe: 'Merged NDJSON file' })
        .option('csv', { type: 'string', describe: 'Also write the merged results as CSV' })
        .option('scenarios', { type: 'string', array: true, describe: "The batch's inputs (scenario files, folders, sweeps), to name missing scenarios by id" }),
      (args) => { code = runMerge({ parts: args.parts, out: args.out, csv: args.csv, scenarios: args.scenarios }, output); },
    )
    .demandCommand(1, 'name a command: validate, evaluate, plan, diagnose, report, export, explore, import-model, batch, merge or calibrate')
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
      // yargs puts which argument and which choices on the lines after "Invalid values:": kept, on the one line.
      const message = /^Invalid values:/.test(error.message) ? error.message.split('\n').map((l) => l.trim()).filter((l) => l).join(' ') : error.message.split('\n')[0];
      output.err(`scaleacross: ${message} (see scaleacross --help)`);
      return EXIT.invalidInput;
    }
    const message = error instanceof Error ? error.message : String(error);
    output.err(`scaleacross: internal error: ${message}${process.env['SCALEACROSS_DEBUG'] ? `\n${(error as Error).stack}` : ' (set SCALEACROSS_DEBUG=1 for a stack trace)'}`);
    return EXIT.internalError;
  }
}
