/** Runs the `scaleacross` command in process, collecting its exit code, stdout and stderr. */
import { runCli } from '../../src/cli/run';

export async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; } });
  return { code, out, err };
}
