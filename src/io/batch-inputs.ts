/**
 * Reads what `scaleacross batch` is given: scenario files, folders of them (the *.json files
 * directly inside, sorted) and sweep files (recognised by a top-level "base" key; the base
 * scenario path is relative to the sweep file). A path on the command line that does not exist,
 * or a folder without *.json files, is a {@link ScenarioValidationError} (the batch cannot
 * start). A file that cannot be read, malformed JSON, an invalid sweep or a sweep whose base
 * cannot be read is an `invalid` input carrying its one-line error and a fingerprint of what was
 * read (the batch records it as `invalid` and runs the rest); a scenario file that is valid JSON
 * but not a valid scenario is read as is (the batch validates it and records it as `invalid`).
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseSweep } from '../batch/sweep';
import type { BatchInput } from '../batch/scenario-list';
import { ScenarioValidationError, formatIssuesOneLine } from '../model/validation-error';
import { listJsonFiles, parseJsonText, readJsonFile } from './files';

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

/** The reason a file cannot be read, as a validation error naming it. */
function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'unknown error'})`;
    throw new ScenarioValidationError([{ path: '', message: reason }], file);
  }
}

const oneLine = (error: ScenarioValidationError, fallbackSource: string): string => formatIssuesOneLine(error.issues, error.source ?? fallbackSource);
/** What a failed read says without the file's path, so that a fingerprint does not depend on where the file lies. */
const reasonOnly = (error: ScenarioValidationError): string => formatIssuesOneLine(error.issues);

function readBatchInput(file: string): BatchInput {
  let text = '';
  let json: unknown;
  try {
    text = readText(file);
    json = parseJsonText(text, file);
  } catch (error) {
    if (!(error instanceof ScenarioValidationError)) throw error;
    // Keyed by what was read (the text, or why nothing could be), so that fixing the file gives a new id.
    return { kind: 'invalid', file, error: oneLine(error, file), fingerprint: `unreadable scenario or sweep file\n${reasonOnly(error)}\n${text}` };
  }
  if (!isSweep(json)) return { kind: 'scenario', file, spec: json };
  let sweep;
  try {
    sweep = parseSweep(json, file);
  } catch (error) {
    if (!(error instanceof ScenarioValidationError)) throw error;
    return { kind: 'invalid', file, error: oneLine(error, file), fingerprint: `invalid sweep\n${text}` };
  }
  if (typeof sweep.base !== 'string') return { kind: 'sweep', file, sweep, base: sweep.base, baseSource: `${file} (base)` };
  const baseFile = path.resolve(path.dirname(file), sweep.base);
  try {
    return { kind: 'sweep', file, sweep, base: readJsonFile(baseFile), baseSource: baseFile };
  } catch (error) {
    if (!(error instanceof ScenarioValidationError)) throw error;
    return { kind: 'invalid', file, error: `${file}: base: ${oneLine(error, baseFile)}`, fingerprint: `sweep whose base cannot be read\n${reasonOnly(error)}\n${text}` };
  }
}
