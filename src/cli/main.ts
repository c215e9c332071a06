#!/usr/bin/env node
/** Entry point of the `scaleacross` command. */
import { runCli } from './run';
import { chooseWasmTiering } from './wasm-tiering';

// A reader that closes the pipe early (`| head`) has all it wanted: stop quietly, as Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const argv = process.argv.slice(2);
// Before anything compiles HiGHS's WebAssembly.
chooseWasmTiering(argv);
runCli(argv).then((code) => {
  process.exitCode = code;
});
