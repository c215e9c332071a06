/**
 * Reads what `scaleacross batch` is given: scenario files, folders of them (the *.json files
 * directly inside, sorted) and sweep files (recognised by a top-level "base" key; the base
 * scenario path is relative to the sweep file). Missing files, malformed JSON and invalid
 * sweeps are {@link ScenarioValidationError}s naming the file; a scenario file that is valid
 * JSON but not a valid scenario is read as is (the batch records it as `invalid`).
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseSweep } from '../batch/sweep';
import type { BatchInput } from '../batch/scenario-list';
import { ScenarioValidationError } from '../model/validation-error';
import { listJsonFiles, readJsonFile } from './files';

const isSweep = (value: unknown): boolean => value !== null && typeof value === 'object' && !Array.isArray(value) && 'base' in value;

export function readBatchInputs(paths: readonly string[]): BatchInput[] {
  const inputs: BatchInput[] = [];
  for (const given of paths) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(given);
    } catch {
      throw new ScenarioValidationError([{ path: '', message: 'no such file or folder' }], given);
    }
    const files = stat.isDirectory() ? listJsonFiles(given) : [given];
    if (stat.isDirectory() && files.length === 0) throw new ScenarioValidationError([{ path: '', message: 'folder holds no *.json scenario or sweep files' }], given);
    for (const file of files) inputs.push(readBatchInput(file));
  }
  return inputs;
}

function readBatchInput(file: string): BatchInput {
  const json = readJsonFile(file);
  if (!isSweep(json)) return { kind: 'scenario', file, spec: json };
  const sweep = parseSweep(json, file);
  if (typeof sweep.base === 'string') {
    const baseFile = path.resolve(path.dirname(file), sweep.base);
    return { kind: 'sweep', file, sweep, base: readJsonFile(baseFile), baseSource: baseFile };
  }
  return { kind: 'sweep', file, sweep, base: sweep.base, baseSource: `${file} (base)` };
}
