/** `scaleacross explore [scenario.json] [--port N] [--no-open]`: the explorer page, served on 127.0.0.1. */
import * as path from 'path';
import { EXPLORER_DIST, PACKAGE_ROOT, serveExplorer } from '../../io/explorer-server';
import { readJsonFile } from '../../io/files';
import { parseScenario } from '../../model/scenario';
import { calibrationLine, resolveCalibration } from '../calibration-option';
import { EXIT, type Output } from '../exit-codes';
import { openBrowser } from '../open-browser';

export interface ExploreArgs {
  /** Scenario file to open in the page (default: the two-building example). */
  readonly scenario?: string;
  /** 0: any free port. */
  readonly port: number;
  readonly open: boolean;
}

/** The example the page opens with when no scenario is given. */
export const DEFAULT_EXPLORE_SCENARIO = path.join(PACKAGE_ROOT, 'fixtures', 'llama3-405b-two-buildings.json');

/** Serves until SIGINT or SIGTERM (or `stop`, for tests); resolves to the exit code. */
export async function runExplore(args: ExploreArgs, output: Output, stop?: Promise<void>): Promise<number> {
  const file = args.scenario ?? DEFAULT_EXPLORE_SCENARIO;
  const spec = readJsonFile(file);
  // The page edits the spec as written; it must validate here as it would for `plan`.
  const scenario = parseScenario(spec, file);
  // A profile the scenario names is read here and applied by the page while the scenario names it.
  const calibration = resolveCalibration(undefined, file, scenario);
  const server = await serveExplorer(EXPLORER_DIST, { spec, ...(calibration ? { calibration: { file: calibration.file, profile: calibration.profile } } : {}) }, args.port);
  output.out(`ScaleAcross Explorer: ${server.url} (${scenario.name}; Ctrl-C stops it)`);
  if (calibration) output.out(calibrationLine(calibration));
  if (args.open) openBrowser(server.url);
  await (stop ?? new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  }));
  await server.close();
  return EXIT.ok;
}
