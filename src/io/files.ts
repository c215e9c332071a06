/**
 * The library's only file access: reading JSON inputs with errors that name the file and,
 * for malformed JSON, the line and column. Everything else in the library is pure.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ScenarioValidationError } from '../model/validation-error';
import { jsonErrorOffset } from './json-error-position';

/** Reads and parses a JSON file; a missing file or malformed JSON is a {@link ScenarioValidationError}. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'unknown error'})`;
    throw new ScenarioValidationError([{ path: '', message: reason }], file);
  }
  return parseJsonText(text, file);
}

/** Parses JSON text, reporting the line and column of a syntax error. */
export function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const offset = jsonErrorOffset(text);
    let where = '';
    if (offset !== undefined) {
      const before = text.slice(0, offset).split('\n');
      const found = offset < text.length ? `unexpected ${JSON.stringify(text[offset])}` : 'unexpected end of input';
      where = ` at line ${before.length}, column ${before[before.length - 1]!.length + 1}: ${found}`;
    } else {
      where = `: ${(error as Error).message.split('\n')[0]}`;
    }
    throw new ScenarioValidationError([{ path: '', message: `malformed JSON${where}` }], source);
  }
}

/** JSON files directly inside a folder, sorted by name. */
export function listJsonFiles(folder: string): string[] {
  return fs.readdirSync(folder).filter((name) => name.endsWith('.json')).sort().map((name) => path.join(folder, name));
}

/** Reads every calibration row under a folder (each file holds an array of rows). */
export function readJsonArrays(folder: string): unknown[] {
  return listJsonFiles(folder).flatMap((file) => {
    const value = readJsonFile(file);
    return Array.isArray(value) ? value : [value];
  });
}

/** Writes a text file; a failure is a {@link ScenarioValidationError} naming the file. */
export function writeTextFile(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScenarioValidationError([{ path: '', message: `cannot be written (${code === 'ENOENT' ? 'no such folder' : code ?? 'unknown error'})` }], file);
  }
}

/**
 * Reads a plan file: a plan object, or the `--json` output of `plan` (its `.plan` is taken).
 * Returns the plan and the JSON path prefix for errors.
 */
export function readPlanFile(file: string): { readonly plan: unknown; readonly pathPrefix: string } {
  const value = readJsonFile(file);
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'plan' in value && 'status' in value) {
    const plan = (value as { plan: unknown }).plan;
    if (plan === null) throw new ScenarioValidationError([{ path: 'plan', message: 'is null: this plan result found no plan' }], file);
    return { plan, pathPrefix: 'plan' };
  }
  return { plan: value, pathPrefix: 'plan' };
}
