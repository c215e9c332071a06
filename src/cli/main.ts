#!/usr/bin/env node
/** Entry point of the `scaleacross` command. */
import { runCli } from './run';

runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
