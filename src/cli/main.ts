#!/usr/bin/env node
/** Entry point of the `scaleacross` command. */
import { runCli } from './run';
import { chooseWasmTiering } from './wasm-tiering';

const argv = process.argv.slice(2);
// Before anything compiles HiGHS's WebAssembly.
chooseWasmTiering(argv);
runCli(argv).then((code) => {
  process.exitCode = code;
});
